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
///
/// Which of a participant's pictures a region shows: its camera (the default) or its screen share.
public enum RegionSource: String, Codable, Sendable, CaseIterable {
    case camera
    case screen
}

/// JSON: `{"userId","source","x","y","width","height","z","fit","alpha","border":{"color":"#RRGGBB","width":N}}`;
/// `source` is written only for a screen.
/// Encoding always writes `z`, `fit` and `alpha` (their defaults included) and writes `border` only when
/// there is one, so a decoded region encodes back to JSON that decodes to the same value.
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
    /// Opacity of the tile, 0.0 (invisible) … 1.0 (opaque, the default).
    public var alpha: Double
    /// A solid frame drawn inside the tile's edge; default none.
    public var border: RegionBorder?
    /// The participant's camera (default) or screen share.
    public var source: RegionSource
    /// The tile's name label; nil: the layout's default (`Layout.label`).
    public var label: LabelSpec?

    public init(
        userId: String, x: Int, y: Int, width: Int, height: Int, z: Int = 0, fit: FitMode = .cover,
        alpha: Double = 1, border: RegionBorder? = nil, source: RegionSource = .camera, label: LabelSpec? = nil
    ) {
        self.source = source
        self.label = label
        self.userId = userId
        self.x = x
        self.y = y
        self.width = width
        self.height = height
        self.z = z
        self.fit = fit
        self.alpha = alpha
        self.border = border
    }

    /// The region as a rectangle, before clipping and snapping.
    public var rect: Rect { Rect(x: x, y: y, width: width, height: height) }

    /// The border as the compositor draws it; nil without a border (or with a colour that does not parse,
    /// which only a region built in code can have and `Layout.validate` refuses).
    public var tileBorder: TileBorder? { border?.tileBorder }

    enum CodingKeys: String, CodingKey { case userId, x, y, width, height, z, fit, alpha, border, source, label }

    /// Decodes and checks the region's own rules (userId, sizes, ranges, alpha, border); unknown keys are ignored.
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
        alpha = try c.decodeIfPresent(Double.self, forKey: .alpha) ?? 1
        border = try c.decodeIfPresent(RegionBorder.self, forKey: .border)
        if let name = try c.decodeIfPresent(String.self, forKey: .source) {
            guard let source = RegionSource(rawValue: name) else {
                throw LayoutError(.unknownSource, "unknown source \(quoted(name)) (expected camera or screen)")
            }
            self.source = source
        } else {
            source = .camera
        }
        label = try c.decodeIfPresent(LabelSpec.self, forKey: .label)
        try LayoutRules.check(self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(userId, forKey: .userId)
        try c.encode(x, forKey: .x)
        try c.encode(y, forKey: .y)
        try c.encode(width, forKey: .width)
        try c.encode(height, forKey: .height)
        try c.encode(z, forKey: .z)
        try c.encode(fit, forKey: .fit)
        try c.encode(alpha, forKey: .alpha)
        try c.encodeIfPresent(border, forKey: .border)
        if source == .screen { try c.encode(source, forKey: .source) }
        try c.encodeIfPresent(label, forKey: .label)
    }
}

/// How regions are chosen.
public enum LayoutMode: String, Codable, Sendable, CaseIterable {
    /// Exactly the given regions; present users without a region are heard, not seen.
    case custom
    /// Equal tiles in join order (`regions` ignored).
    case grid
    /// The anchor fills the canvas, everyone else is a small tile stacked from the bottom-right corner
    /// (`regions` ignored). See `LayoutEngine.placements` for the exact geometry.
    case pip
}

/// The JSON of `PUT /v1/rooms/{room}/layout` and of a room's `"layout"`:
/// `{"mode":"custom"|"grid"|"pip", "anchor":"<userId>", "regions":[{"userId","x","y","width","height","z","fit",
/// "alpha","border"}]}`.
///
/// Decoding refuses garbage with a `LayoutError` (unknown mode or fit, non-positive size, more than 16
/// regions, values beyond ±16384, malformed userId or anchor, alpha outside 0…1, bad border); `Layout.decode(from:)`
/// also turns JSON syntax and type errors into one. Canvas-dependent checks live in `validate(canvasWidth:canvasHeight:)`.
/// Every mode may carry regions and an anchor: they are checked and kept, and used by the modes that read them.
public struct Layout: Codable, Equatable, Sendable {
    public static let maxRegions = 16
    /// Bound on every coordinate, size and z, so no arithmetic on them can overflow or allocate hugely.
    public static let coordinateLimit = 16_384

    public var mode: LayoutMode
    /// Default `[]`.
    public var regions: [Region]
    /// Who fills the canvas in `.pip` when present (see `LayoutEngine.effectiveAnchor`); default none.
    public var anchor: String?
    /// Every tile's name label unless its region says otherwise; default none.
    public var label: LabelSpec?

    public init(mode: LayoutMode, regions: [Region] = [], anchor: String? = nil, label: LabelSpec? = nil) {
        self.label = label
        self.mode = mode
        self.regions = regions
        self.anchor = anchor
    }

    /// Every participant in an equal tile, in join order.
    public static let grid = Layout(mode: .grid)
    /// The room's anchor on the whole canvas, everyone else in small tiles.
    public static let pip = Layout(mode: .pip)

    enum CodingKeys: String, CodingKey { case mode, anchor, regions, label }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let name = try c.decode(String.self, forKey: .mode)
        guard let mode = LayoutMode(rawValue: name) else {
            throw LayoutError(.unknownMode, "unknown mode \(quoted(name)) (expected custom, grid or pip)")
        }
        self.mode = mode
        anchor = try c.decodeIfPresent(String.self, forKey: .anchor)
        try LayoutRules.checkAnchor(anchor)
        do {
            label = try c.decodeIfPresent(LabelSpec.self, forKey: .label)
        } catch let error as LayoutError {
            throw error.at("label")
        }
        var regions: [Region] = []
        if c.contains(.regions) {
            // protocol/openapi.yaml: an array when given; null is not "no regions".
            if try c.decodeNil(forKey: .regions) {
                throw LayoutError(.malformed, "regions must be an array (leave it out for none), not null")
            }
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

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(mode, forKey: .mode)
        try c.encodeIfPresent(anchor, forKey: .anchor)
        try c.encode(regions, forKey: .regions)
        try c.encodeIfPresent(label, forKey: .label)
    }
}

func quoted(_ s: String) -> String {
    // Bounded, so a megabyte of hostile text does not end up in an error message or a log line.
    let head = s.prefix(64)
    return "\"\(head)\(head.count < s.count ? "…" : "")\""
}
