/// A colour in BT.601 limited-range YUV, the space of every frame Cohost handles.
public struct YUVColor: Equatable, Hashable, Sendable {
    public var y: UInt8
    public var u: UInt8
    public var v: UInt8

    public init(y: UInt8, u: UInt8, v: UInt8) {
        self.y = y
        self.u = u
        self.v = v
    }

    /// Converts 8-bit sRGB with the BT.601 limited-range matrix (what x264 and players assume by default).
    public init(r: UInt8, g: UInt8, b: UInt8) {
        let r = Double(r), g = Double(g), b = Double(b)
        let yy = 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255
        let uu = 128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255
        let vv = 128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255
        func clamp(_ x: Double) -> UInt8 { UInt8(max(0, min(255, x.rounded()))) }
        self.init(y: clamp(yy), u: clamp(uu), v: clamp(vv))
    }

    /// Parses `#RRGGBB` (or `RRGGBB`); nil for anything else.
    public init?(hex: String) {
        var s = Substring(hex)
        if s.hasPrefix("#") { s = s.dropFirst() }
        guard s.count == 6, s.allSatisfy(\.isHexDigit), let value = UInt32(s, radix: 16) else { return nil }
        self.init(r: UInt8(value >> 16 & 0xFF), g: UInt8(value >> 8 & 0xFF), b: UInt8(value & 0xFF))
    }

    public static let black = YUVColor(y: 16, u: 128, v: 128)
}
