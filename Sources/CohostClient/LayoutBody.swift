import Foundation

/// The body of `PUT /v1/rooms/{room}/layout` from `cohost room layout`'s flags.
public struct LayoutBody: Sendable {
    public var mode: String
    public var anchor: String?
    /// In stacking order: the API draws regions of equal z in the order given, so a later one is on top.
    public var regions: [RegionSpec]

    public init(mode: String, anchor: String? = nil, regions: [RegionSpec] = []) {
        self.mode = mode
        self.anchor = anchor
        self.regions = regions
    }

    public func json() -> Data {
        struct Region: Encodable {
            var userId: String
            var x, y, width, height: Int
        }
        struct Body: Encodable {
            var mode: String
            var anchor: String?
            var regions: [Region]
        }
        let body = Body(
            mode: mode, anchor: anchor,
            regions: regions.map { Region(userId: $0.userId, x: $0.x, y: $0.y, width: $0.width, height: $0.height) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Strings and integers always encode.
        return (try? encoder.encode(body)) ?? Data()
    }
}

/// One region as `USER@X,Y,WIDTHxHEIGHT`, as in `--region guest@880,460,360x220`.
public struct RegionSpec: Sendable, Equatable {
    public var userId: String
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(userId: String, x: Int, y: Int, width: Int, height: Int) {
        self.userId = userId
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// nil unless `text` has that shape; the server judges the numbers (400 invalid_layout names the region).
    public init?(_ text: String) {
        let halves = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2, !halves[0].isEmpty else { return nil }
        let numbers = halves[1].split(separator: ",", omittingEmptySubsequences: false)
        guard numbers.count == 3, let x = Int(numbers[0]), let y = Int(numbers[1]),
            let size = CanvasSize(String(numbers[2]))
        else { return nil }
        self.init(userId: String(halves[0]), x: x, y: y, width: size.width, height: size.height)
    }
}
