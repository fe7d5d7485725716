/// An I420 picture's three planes as pointers, with their line sizes: valid only inside the `withPlanes`
/// call that lent them. `package`: pointers into pixel memory stay inside Cohost's own modules.
package struct PlanePointers {
    package let width: Int
    package let height: Int
    package let y: UnsafePointer<UInt8>
    package let u: UnsafePointer<UInt8>
    package let v: UnsafePointer<UInt8>
    package let strideY: Int
    package let strideU: Int
    package let strideV: Int

    package init(
        width: Int, height: Int, y: UnsafePointer<UInt8>, u: UnsafePointer<UInt8>, v: UnsafePointer<UInt8>,
        strideY: Int, strideU: Int, strideV: Int
    ) {
        self.width = width
        self.height = height
        self.y = y
        self.u = u
        self.v = v
        self.strideY = strideY
        self.strideU = strideU
        self.strideV = strideV
    }

    /// Lends one black 1×1 picture: what a picture with no (or malformed) planes shows instead of letting
    /// anyone read past them.
    package static func withBlackPixel<R>(_ body: (PlanePointers) -> R) -> R {
        withUnsafeBytes(of: (UInt8(16), UInt8(128), UInt8(128))) { raw in
            let b = raw.bindMemory(to: UInt8.self).baseAddress!  // a 3-byte tuple: never empty
            return body(
                PlanePointers(width: 1, height: 1, y: b, u: b + 1, v: b + 2, strideY: 1, strideU: 1, strideV: 1))
        }
    }
}

/// A read-only picture whose planes live elsewhere (a decoder's reference-counted buffer) and stay valid, and
/// unchanged, for as long as the object is referenced.
///
/// Whoever writes a new picture into such an object must first make sure nobody else holds it
/// (`isKnownUniquelyReferenced`): a tile being drawn keeps a reference.
package protocol ExternalPicture: AnyObject, Sendable {
    var width: Int { get }
    var height: Int { get }
    /// Lends the planes to `body`; the pointers must not escape it.
    func withPlanes<R>(_ body: (PlanePointers) -> R) -> R
}

/// A picture to draw: a `VideoFrame`, or an `ExternalPicture` (a decoded picture drawn straight from the
/// decoder's buffer, with no copy in between). Holding one keeps its planes alive and unchanged.
public struct Picture: Sendable {
    private enum Storage: Sendable {
        case frame(VideoFrame)
        case external(any ExternalPicture)
    }

    private let storage: Storage

    public init(_ frame: VideoFrame) { storage = .frame(frame) }
    package init(_ picture: any ExternalPicture) { storage = .external(picture) }

    public var width: Int {
        switch storage {
        case .frame(let f): f.width
        case .external(let p): p.width
        }
    }

    public var height: Int {
        switch storage {
        case .frame(let f): f.height
        case .external(let p): p.height
        }
    }

    /// Lends the planes to `body`; the pointers must not escape it.
    package func withPlanes<R>(_ body: (PlanePointers) -> R) -> R {
        switch storage {
        case .frame(let f): f.withPlanes(body)
        case .external(let p): p.withPlanes(body)
        }
    }

    /// A `VideoFrame` with the same pixels: for snapshots and tests (copies an external picture's planes).
    public func copied() -> VideoFrame {
        if case .frame(let f) = storage { return f }
        return withPlanes { p in
            var out = VideoFrame(width: p.width, height: p.height)
            out.copy(from: p)
            return out
        }
    }
}

extension VideoFrame {
    /// Becomes a copy of `planes` (resized when the size differs, rows copied honouring their line sizes).
    package mutating func copy(from planes: PlanePointers) {
        resize(width: planes.width, height: planes.height)
        let cw = strideUV, ch = chromaHeight
        Self.copyRows(planes.y, stride: planes.strideY, width: width, height: height, into: &y)
        Self.copyRows(planes.u, stride: planes.strideU, width: cw, height: ch, into: &u)
        Self.copyRows(planes.v, stride: planes.strideV, width: cw, height: ch, into: &v)
    }

    private static func copyRows(
        _ src: UnsafePointer<UInt8>, stride: Int, width: Int, height: Int, into dst: inout [UInt8]
    ) {
        dst.withUnsafeMutableBufferPointer { d in
            guard let base = d.baseAddress, d.count >= width * height else { return }
            for row in 0..<height { (base + row * width).update(from: src + row * stride, count: width) }
        }
    }

    /// Lends the three planes (strides equal to the plane widths) to `body`. Planes are public and could have
    /// been replaced with arrays of the wrong size: then a black pixel is lent rather than memory past them.
    package func withPlanes<R>(_ body: (PlanePointers) -> R) -> R {
        let chroma = strideUV * chromaHeight
        guard y.count >= width * height, u.count >= chroma, v.count >= chroma else {
            return PlanePointers.withBlackPixel(body)
        }
        return y.withUnsafeBufferPointer { y in
            u.withUnsafeBufferPointer { u in
                v.withUnsafeBufferPointer { v in
                    guard let y = y.baseAddress, let u = u.baseAddress, let v = v.baseAddress else {
                        return PlanePointers.withBlackPixel(body)
                    }
                    return body(
                        PlanePointers(
                            width: width, height: height, y: y, u: u, v: v,
                            strideY: strideY, strideU: strideUV, strideV: strideUV))
                }
            }
        }
    }
}
