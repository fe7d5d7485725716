import Foundation
import Media
import Codecs
import Compositing
import Layout
import CohostAPI

/// A PNG given to a room (background, placeholder or watermark), kept with its decoded picture.
///
/// Equal when the PNG bytes are equal; the decoded picture is derived from them.
public struct RoomImage: Sendable, Equatable {
    public let png: [UInt8]
    public let picture: AlphaPicture
    /// Base64 text of at most this many bytes (a 4 MB PNG), so one request cannot make the server decode more.
    public static let maxBase64Bytes = 5_600_000

    /// Decodes base64 PNG data; `field` names the JSON field in the error.
    public init(base64 text: String, field: String) throws(RoomError) {
        guard text.utf8.count <= Self.maxBase64Bytes else {
            throw .badRequest("limit_exceeded", "\(field) is larger than \(Self.maxBase64Bytes) bytes of base64")
        }
        guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters), !data.isEmpty else {
            throw .badRequest("invalid_image", "\(field) must be a base64-encoded PNG")
        }
        png = [UInt8](data)
        do { picture = try PNGDecoder.decode(png) } catch {
            throw .badRequest("invalid_image", "\(field) is not a PNG Cohost can decode: \(error)")
        }
    }

    public static func == (a: RoomImage, b: RoomImage) -> Bool { a.png == b.png }

    var info: RoomInfo.ImageInfo { .init(width: picture.width, height: picture.height, bytes: png.count) }
}

/// Where a room's watermark goes: a PNG over every tile at `rect` (contain-fitted), blended by its alpha × `opacity`.
public struct RoomWatermark: Sendable, Equatable {
    public var image: RoomImage
    public var rect: Rect
    public var opacity: Double

    var compositorWatermark: Watermark { Watermark(image: image.picture, rect: rect, opacity: opacity) }
}

/// The JSON of a watermark: `{"image": "<base64 PNG>", "x", "y", "width", "height", "opacity"?}`.
public struct WatermarkRequest: Decodable, Sendable {
    public var image: String
    public var x: Int, y: Int, width: Int, height: Int
    public var opacity: Double?

    func resolve(canvasWidth: Int, canvasHeight: Int) throws(RoomError) -> RoomWatermark {
        let rect = Rect(x: x, y: y, width: width, height: height)
        guard width > 0, height > 0,
            !rect.intersection(Rect(x: 0, y: 0, width: canvasWidth, height: canvasHeight)).isEmpty,
            abs(x) <= Layout.coordinateLimit, abs(y) <= Layout.coordinateLimit,
            width <= Layout.coordinateLimit, height <= Layout.coordinateLimit
        else {
            throw .badRequest(
                "invalid_image",
                "watermark rectangle \(width)x\(height) at (\(x),\(y)) must be positive and overlap the \(canvasWidth)x\(canvasHeight) canvas"
            )
        }
        let opacity = opacity ?? 1
        guard opacity.isFinite, (0...1).contains(opacity) else {
            throw .badRequest("invalid_image", "watermark.opacity must be within 0...1")
        }
        return RoomWatermark(
            image: try RoomImage(base64: image, field: "watermark.image"), rect: rect, opacity: opacity)
    }
}

/// The pictures of a room besides its participants.
public struct RoomImages: Sendable, Equatable {
    /// Under every tile, scaled to cover the canvas.
    public var background: RoomImage?
    /// Inside the placeholder of a participant without a picture (contain-fitted on the placeholder colour).
    public var placeholder: RoomImage?
    public var watermark: RoomWatermark?

    public init(background: RoomImage? = nil, placeholder: RoomImage? = nil, watermark: RoomWatermark? = nil) {
        self.background = background
        self.placeholder = placeholder
        self.watermark = watermark
    }

    /// Sets them on a compositor (it rescales only what changed).
    func apply(to compositor: inout VideoCompositor) {
        compositor.backgroundImage = background?.picture
        compositor.placeholderImage = placeholder?.picture
        compositor.watermark = watermark?.compositorWatermark
    }
}

/// `PATCH /v1/rooms/{room}`: what can change in a running room besides layout and outputs. A field left out
/// stays as it is; `null` removes the image (or the room's anchor).
public struct RoomPatch: Decodable, Sendable {
    public enum Change<Value: Sendable>: Sendable { case keep, clear, set(Value) }
    public var anchor: Change<String> = .keep
    public var backgroundImage: Change<String> = .keep
    public var placeholderImage: Change<String> = .keep
    public var watermark: Change<WatermarkRequest> = .keep
    /// A new canvas (size, background, placeholder), and the layout for it (else the current one, refitted).
    public var canvas: CanvasPatch?
    public var layout: Layout?

    enum CodingKeys: String, CodingKey { case anchor, backgroundImage, placeholderImage, watermark, canvas, layout }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func change<V: Decodable & Sendable>(_ key: CodingKeys, _ type: V.Type) throws -> Change<V> {
            guard c.contains(key) else { return .keep }
            if try c.decodeNil(forKey: key) { return .clear }
            return .set(try c.decode(V.self, forKey: key))
        }
        anchor = try change(.anchor, String.self)
        backgroundImage = try change(.backgroundImage, String.self)
        placeholderImage = try change(.placeholderImage, String.self)
        watermark = try change(.watermark, WatermarkRequest.self)
        canvas = try c.decodeIfPresent(CanvasPatch.self, forKey: .canvas)
        layout = try c.decodeIfPresent(Layout.self, forKey: .layout)
    }

    /// Whether the patch sets or clears any picture.
    var touchesImages: Bool {
        func touched<V>(_ c: Change<V>) -> Bool { if case .keep = c { false } else { true } }
        return touched(backgroundImage) || touched(placeholderImage) || touched(watermark)
    }

    /// The room's new anchor and images, checked and decoded.
    func resolve(
        anchor current: String?, images: RoomImages, canvasWidth: Int,
        canvasHeight: Int
    ) throws(RoomError) -> (anchor: String?, images: RoomImages) {
        var anchorOut = current
        switch anchor {
        case .keep: break
        case .clear: anchorOut = nil
        case .set(let id):
            guard Identifier.isValid(id) else {
                throw .badRequest("invalid_room", "anchor must be a user id matching [A-Za-z0-9_.-]{1,64}")
            }
            anchorOut = id
        }
        var out = images
        switch backgroundImage {
        case .keep: break
        case .clear: out.background = nil
        case .set(let text): out.background = try RoomImage(base64: text, field: "backgroundImage")
        }
        switch placeholderImage {
        case .keep: break
        case .clear: out.placeholder = nil
        case .set(let text): out.placeholder = try RoomImage(base64: text, field: "placeholderImage")
        }
        switch watermark {
        case .keep: break
        case .clear: out.watermark = nil
        case .set(let request):
            out.watermark = try request.resolve(canvasWidth: canvasWidth, canvasHeight: canvasHeight)
        }
        return (anchorOut, out)
    }
}

/// The canvas part of `PATCH /v1/rooms/{room}`: every field optional.
public struct CanvasPatch: Decodable, Sendable, Equatable {
    public var width: Int?
    public var height: Int?
    public var fps: Int?
    public var background: String?
    public var placeholder: String?
}
