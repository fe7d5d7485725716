import Media

/// Where a tile's name label sits inside the tile.
public enum LabelPosition: String, Codable, Sendable, CaseIterable {
    case topLeft = "top-left"
    case top
    case topRight = "top-right"
    case center
    case bottomLeft = "bottom-left"
    case bottom
    case bottomRight = "bottom-right"
}

/// A tile's name label as it travels in JSON: `"auto"` (the participant's display name), `"none"` (no label, also
/// over a layout's default) or `{"text","position","size","color","background"}`, every key optional (no
/// `text`: the display name). Colours are kept as given (`#RRGGBB` or `#RRGGBBAA`), so `GET` returns what was
/// `PUT`. Decoding checks every rule; the text is drawn by the room (FreeType and HarfBuzz), not here.
public struct LabelSpec: Codable, Equatable, Hashable, Sendable {
    public static let sizes = 8...128
    /// The most characters (Unicode scalars) and UTF-8 bytes a label's text may have.
    public static let maxCharacters = 64
    public static let maxBytes = 256

    /// nil: the participant's display name (the token's `name`, the name given at join, else the user id).
    public var text: String?
    public var position: LabelPosition
    /// The font's pixel size on the canvas.
    public var size: Int
    public var color: String
    public var background: String
    /// `"none"`: no label on this tile, whatever the layout's default says.
    public var hidden: Bool

    public init(
        text: String? = nil, position: LabelPosition = .bottomLeft, size: Int = 24, color: String = "#ffffff",
        background: String = "#00000099", hidden: Bool = false
    ) {
        self.text = text
        self.position = position
        self.size = size
        self.color = color
        self.background = background
        self.hidden = hidden
    }

    public static let auto = LabelSpec()
    public static let none = LabelSpec(hidden: true)

    enum CodingKeys: String, CodingKey { case text, position, size, color, background }

    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let word = try? single.decode(String.self) {
            switch word {
            case "auto": self = .auto
            case "none": self = .none
            default:
                throw LayoutError(
                    .invalidLabel, "label \(quoted(word)) must be \"auto\", \"none\" or an object")
            }
            return
        }
        let c: KeyedDecodingContainer<CodingKeys>
        do {
            c = try decoder.container(keyedBy: CodingKeys.self)
        } catch {
            throw LayoutError(.invalidLabel, "label must be \"auto\", \"none\" or an object")
        }
        self.init()
        text = try c.decodeIfPresent(String.self, forKey: .text)
        if let name = try c.decodeIfPresent(String.self, forKey: .position) {
            guard let position = LabelPosition(rawValue: name) else {
                let known = LabelPosition.allCases.map(\.rawValue).joined(separator: ", ")
                throw LayoutError(.invalidLabel, "label.position \(quoted(name)) must be one of \(known)")
            }
            self.position = position
        }
        size = try c.decodeIfPresent(Int.self, forKey: .size) ?? size
        color = try c.decodeIfPresent(String.self, forKey: .color) ?? color
        background = try c.decodeIfPresent(String.self, forKey: .background) ?? background
        try check()
    }

    public func encode(to encoder: any Encoder) throws {
        if hidden {
            var single = encoder.singleValueContainer()
            try single.encode("none")
            return
        }
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(text, forKey: .text)
        try c.encode(position, forKey: .position)
        try c.encode(size, forKey: .size)
        try c.encode(color, forKey: .color)
        try c.encode(background, forKey: .background)
    }

    /// The rules: text as `textProblem` says, size 8…128, colours `#RRGGBB` or `#RRGGBBAA` (the `#` optional).
    public func check() throws(LayoutError) {
        if let text, let problem = Self.textProblem(text) {
            throw LayoutError(.invalidLabel, "label.text \(problem)")
        }
        guard Self.sizes.contains(size) else {
            throw LayoutError(
                .invalidLabel, "label.size \(size) must be \(Self.sizes.lowerBound)…\(Self.sizes.upperBound)")
        }
        for (name, value) in [("color", color), ("background", background)] {
            guard Self.rgba(value) != nil else {
                throw LayoutError(.invalidLabel, "label.\(name) \(quoted(value)) must be #RRGGBB or #RRGGBBAA")
            }
        }
    }

    /// What is wrong with a label's text, or with a display name (which labels show): it must be 1…64 Unicode
    /// scalars and at most 256 UTF-8 bytes, without control characters. nil when it is fine.
    public static func textProblem(_ text: String) -> String? {
        guard !text.isEmpty, text.unicodeScalars.count <= maxCharacters, text.utf8.count <= maxBytes else {
            return "must be 1…\(maxCharacters) characters and at most \(maxBytes) bytes"
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return "must not contain control characters"
        }
        return nil
    }

    /// A colour as given (`#RRGGBB`, `#RRGGBBAA`, the `#` optional as for every colour of the API); nil otherwise.
    public static func rgba(_ hex: String) -> RGBA? { RGBA(hex: hex.hasPrefix("#") ? hex : "#" + hex) }
}
