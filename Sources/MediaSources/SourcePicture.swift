import Media

/// One decoded picture of a source, in I420 planes it owns. Made by the source's presenter, written by its
/// reading thread only while nobody else holds it (`isKnownUniquelyReferenced`), then read by canvases.
final class SourcePicture: ExternalPicture, @unchecked Sendable {
    private(set) var width: Int
    private(set) var height: Int
    private var y: [UInt8]
    private var u: [UInt8]
    private var v: [UInt8]

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        (y, u, v) = Self.planes(width: width, height: height)
    }

    /// Black planes for a picture of that size.
    private static func planes(width: Int, height: Int) -> ([UInt8], [UInt8], [UInt8]) {
        let chroma = ((width + 1) / 2) * ((height + 1) / 2)
        return (
            [UInt8](repeating: 16, count: width * height), [UInt8](repeating: 128, count: chroma),
            [UInt8](repeating: 128, count: chroma)
        )
    }

    /// Resizes the planes (only when the size changed) and lends them for writing.
    func withPlaneBuffers<R>(
        _ body: (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>) -> R
    ) -> R {
        y.withUnsafeMutableBufferPointer { yb in
            u.withUnsafeMutableBufferPointer { ub in
                v.withUnsafeMutableBufferPointer { vb in body(yb.baseAddress!, ub.baseAddress!, vb.baseAddress!) }
            }
        }
    }

    func resize(width: Int, height: Int) {
        guard width != self.width || height != self.height else { return }
        self.width = width
        self.height = height
        (y, u, v) = Self.planes(width: width, height: height)
    }

    func withPlanes<R>(_ body: (PlanePointers) -> R) -> R {
        y.withUnsafeBufferPointer { yb in
            u.withUnsafeBufferPointer { ub in
                v.withUnsafeBufferPointer { vb in
                    body(
                        PlanePointers(
                            width: width, height: height, y: yb.baseAddress!, u: ub.baseAddress!, v: vb.baseAddress!,
                            strideY: width, strideU: (width + 1) / 2, strideV: (width + 1) / 2))
                }
            }
        }
    }
}
