import Media

/// How a participant's picture fills its region.
public enum FitMode: String, Codable, Sendable, CaseIterable {
    /// Scale to fill the region, cropping the overflow (centred). The default.
    case cover
    /// Scale to fit inside the region; the bars are background.
    case contain
    /// Scale to the region exactly, ignoring aspect ratio.
    case stretch
}

/// Where one participant appears on the canvas, in canvas pixels (`z` higher = on top).
public struct Region: Codable, Equatable, Sendable {
    public var userId: String
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int
    /// Stacking order; default 0. Equal z keeps the order of `regions`.
    public var z: Int
    /// Default `.cover`.
    public var fit: FitMode

    public init(userId: String, x: Int, y: Int, width: Int, height: Int, z: Int = 0, fit: FitMode = .cover) {
        self.userId = userId
        self.x = x; self.y = y; self.width = width; self.height = height
        self.z = z
        self.fit = fit
    }

    /// The region as a rectangle, before clipping and snapping.
    public var rect: Rect { Rect(x: x, y: y, width: width, height: height) }

    enum CodingKeys: String, CodingKey { case userId, x, y, width, height, z, fit }

    /// Decodes and checks the region's own rules (userId, sizes, ranges); unknown keys are ignored.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        userId = try c.decode(String.self, forKey: .userId)
        x = try c.decode(Int.self, forKey: .x)
        y = try c.decode(Int.self, forKey: .y)
        width = try c.decode(Int.self, forKey: .width)
        height = try c.decode(Int.self, forKey: .height)
        z = try c.decodeIfPresent(Int.self, forKey: .z) ?? 0
        if let name = try c.decodeIfPresent(String.self, forKey: .fit) {
            guard let mode = FitMode(rawValue: name) else {
                throw LayoutError(.unknownFit, "unknown fit \(quoted(name)) (expected cover, contain or stretch)")
            }
            fit = mode
        } else {
            fit = .cover
        }
        try LayoutRules.check(self)
    }
}

/// How regions are chosen.
public enum LayoutMode: String, Codable, Sendable, CaseIterable {
    /// Exactly the given regions; present users without a region are heard, not seen.
    case custom
    /// Equal tiles in join order (`regions` ignored).
    case grid
}

/// The JSON of `PUT /v1/rooms/{room}/layout` and of a room's `"layout"`:
/// `{"mode":"custom"|"grid", "regions":[{"userId","x","y","width","height","z","fit"}]}`.
///
/// Decoding refuses garbage with a `LayoutError` (unknown mode or fit, non-positive size, more than 16
/// regions, values beyond ±16384, malformed userId); `Layout.decode(from:)` also turns JSON syntax and type
/// errors into one. Canvas-dependent checks live in `validate(canvasWidth:canvasHeight:)`.
public struct Layout: Codable, Equatable, Sendable {
    public static let maxRegions = 16
    /// Bound on every coordinate, size and z, so no arithmetic on them can overflow or allocate hugely.
    public static let coordinateLimit = 16_384

    public var mode: LayoutMode
    /// Default `[]`.
    public var regions: [Region]

    public init(mode: LayoutMode, regions: [Region] = []) {
        self.mode = mode
        self.regions = regions
    }

    /// Every participant in an equal tile, in join order.
    public static let grid = Layout(mode: .grid)

    enum CodingKeys: String, CodingKey { case mode, regions }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let name = try c.decode(String.self, forKey: .mode)
        guard let mode = LayoutMode(rawValue: name) else {
            throw LayoutError(.unknownMode, "unknown mode \(quoted(name)) (expected custom or grid)")
        }
        self.mode = mode
        var regions: [Region] = []
        if c.contains(.regions), try !c.decodeNil(forKey: .regions) {
            // Element by element so a hostile list is refused at the 17th entry, not after decoding all of it.
            var list = try c.nestedUnkeyedContainer(forKey: .regions)
            while !list.isAtEnd {
                guard regions.count < Layout.maxRegions else {
                    throw LayoutError(.tooManyRegions, "more than \(Layout.maxRegions) regions")
                }
                do {
                    regions.append(try list.decode(Region.self))
                } catch let error as LayoutError {
                    throw error.at("regions[\(regions.count)]")
                }
            }
        }
        self.regions = regions
    }
}

func quoted(_ s: String) -> String {
    // Bounded, so a megabyte of hostile text does not end up in an error message or a log line.
    let head = s.prefix(64)
    return "\"\(head)\(head.count < s.count ? "…" : "")\""
}
