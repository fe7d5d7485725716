import Foundation

/// The body of `POST /v1/rooms` from `cohost room create`'s flags, laid over a `--body` JSON object when one is given
/// (so one file can serve as a template for many rooms).
public struct RoomCreateBody: Sendable {
    public var name: String?
    public var canvas: CanvasSize?
    public var fps: Int?
    public var preset: String?
    public var audioOnly = false
    public var outputs: [String] = []

    public init() {}

    /// Whether any field besides the body would be set.
    public var isEmpty: Bool {
        name == nil && canvas == nil && fps == nil && preset == nil && !audioOnly && outputs.isEmpty
    }

    /// The JSON to send. `base` must then be a JSON object; each flag replaces its field in it, and `--output`s are
    /// appended to its `outputs`.
    public func json(over base: Data? = nil) throws(BodyError) -> Data {
        var room: [String: Any] = [:]
        if let base {
            guard let object = try? JSONSerialization.jsonObject(with: base) as? [String: Any] else {
                throw BodyError("the body is not a JSON object")
            }
            room = object
        }
        if let name { room["name"] = name }
        var canvasFields = room["canvas"] as? [String: Any] ?? [:]
        if let canvas {
            canvasFields["width"] = canvas.width
            canvasFields["height"] = canvas.height
        }
        if let fps { canvasFields["fps"] = fps }
        if canvas != nil || fps != nil { room["canvas"] = canvasFields }
        if let preset {
            var video = room["video"] as? [String: Any] ?? [:]
            video["preset"] = preset
            room["video"] = video
        }
        if audioOnly { room["audioOnly"] = true }
        if !outputs.isEmpty {
            room["outputs"] = (room["outputs"] as? [Any] ?? []) + outputs.map { ["url": $0] as Any }
        }
        do { return try JSONSerialization.data(withJSONObject: room, options: [.sortedKeys]) } catch {
            throw BodyError("the body cannot be written as JSON: \(error)")
        }
    }
}

/// A body the command line could not build (a usage error: nothing was sent).
public struct BodyError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// `WIDTHxHEIGHT`, as in `--canvas 1280x720`.
public struct CanvasSize: Sendable, Equatable {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// nil unless `text` is two positive integers around an `x`.
    public init?(_ text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        self.init(width: w, height: h)
    }
}
