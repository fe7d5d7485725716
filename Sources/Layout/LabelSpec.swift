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

    /// The rules: text 1…64 characters and at most 256 bytes with no control characters, size 8…128, colours
    /// `#RRGGBB` or `#RRGGBBAA`.
    public func check() throws(LayoutError) {
        if let text {
            guard !text.isEmpty, text.unicodeScalars.count <= Self.maxCharacters, text.utf8.count <= Self.maxBytes
            else {
                throw LayoutError(
                    .invalidLabel,
                    "label.text must be 1…\(Self.maxCharacters) characters and at most \(Self.maxBytes) bytes")
            }
            guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw LayoutError(.invalidLabel, "label.text must not contain control characters")
            }
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

    /// `#RRGGBB` (alpha 255) or `#RRGGBBAA`, the `#` optional; nil for anything else.
    public static func rgba(_ hex: String) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8)? {
        var s = Substring(hex)
        if s.hasPrefix("#") { s = s.dropFirst() }
        guard s.count == 6 || s.count == 8, s.allSatisfy(\.isHexDigit), let value = UInt32(s, radix: 16) else {
            return nil
        }
        let full = s.count == 6 ? value << 8 | 0xFF : value
        return (UInt8(full >> 24 & 0xFF), UInt8(full >> 16 & 0xFF), UInt8(full >> 8 & 0xFF), UInt8(full & 0xFF))
    }
}
