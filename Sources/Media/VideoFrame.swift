/// A planar I420 picture that owns its three planes.
///
/// Frames are allocated once (per decoder, per canvas) and overwritten in place: callers that keep
/// one across ticks reuse its storage instead of allocating per frame. Strides equal the plane
/// widths, so a plane is one contiguous array.
public struct VideoFrame: Sendable {
    public private(set) var width: Int
    public private(set) var height: Int
    public var y: [UInt8]
    public var u: [UInt8]
    public var v: [UInt8]

    public var strideY: Int { width }
    public var strideUV: Int { (width + 1) / 2 }
    public var chromaHeight: Int { (height + 1) / 2 }

    public init(width: Int, height: Int, color: YUVColor = .black) {
        precondition(width > 0 && height > 0, "frame size must be positive")
        self.width = width
        self.height = height
        y = [UInt8](repeating: color.y, count: width * height)
        u = [UInt8](repeating: color.u, count: ((width + 1) / 2) * ((height + 1) / 2))
        v = [UInt8](repeating: color.v, count: ((width + 1) / 2) * ((height + 1) / 2))
    }

    /// Changes the size, reallocating only when the new size differs.
    public mutating func resize(width: Int, height: Int) {
        guard width != self.width || height != self.height else { return }
        self = VideoFrame(width: width, height: height)
    }

    public mutating func fill(_ color: YUVColor) {
        for i in y.indices { y[i] = color.y }
        for i in u.indices {
            u[i] = color.u
            v[i] = color.v
        }
    }

    /// The colour at one luma position (chroma from its 2×2 block); for tests and snapshots.
    public func pixel(x: Int, y py: Int) -> YUVColor {
        YUVColor(y: y[py * strideY + x], u: u[(py / 2) * strideUV + x / 2], v: v[(py / 2) * strideUV + x / 2])
    }
}
