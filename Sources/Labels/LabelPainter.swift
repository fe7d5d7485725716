import Media

/// Turns a label's coverage into its picture: the box in the background colour, the text colour over it by
/// coverage (Porter-Duff over, straight alpha), then BT.601 YUV with the alpha plane beside it.
enum LabelPainter {
    /// nil only when the coverage has an odd or zero size, which `FontSet` never makes.
    static func paint(_ coverage: CoverageMap, style: LabelStyle) -> AlphaPicture? {
        let width = coverage.width, height = coverage.height
        guard width >= 2, height >= 2, width % 2 == 0, height % 2 == 0 else { return nil }
        // One style and 256 coverage values: every pixel's colour is one of 256, worked out once.
        let table = (0...255).map { colour(coverage: UInt8($0), style: style) }
        var picture = VideoFrame(width: width, height: height)
        var alpha = [UInt8](repeating: 0, count: width * height)
        let values = coverage.values
        for i in 0..<values.count {
            let entry = table[Int(values[i])]
            picture.y[i] = entry.yuv.y
            alpha[i] = entry.alpha
        }
        let chromaWidth = width / 2
        for cy in 0..<height / 2 {
            for cx in 0..<chromaWidth {
                let top = 2 * cy * width + 2 * cx, bottom = top + width
                let block = [
                    table[Int(values[top])], table[Int(values[top + 1])],
                    table[Int(values[bottom])], table[Int(values[bottom + 1])],
                ]
                picture.u[cy * chromaWidth + cx] = average(block) { $0.yuv.u }
                picture.v[cy * chromaWidth + cx] = average(block) { $0.yuv.v }
            }
        }
        return AlphaPicture(picture: picture, alpha: alpha)
    }

    /// The pixel for one coverage value: text colour at `coverage · color.a` over the background.
    static func colour(coverage: UInt8, style: LabelStyle) -> (yuv: YUVColor, alpha: UInt8) {
        let text = style.color, box = style.background
        let sourceAlpha = Double(coverage) / 255 * Double(text.a) / 255
        let boxAlpha = Double(box.a) / 255
        let outAlpha = sourceAlpha + boxAlpha * (1 - sourceAlpha)
        guard outAlpha > 0 else { return (YUVColor(r: box.r, g: box.g, b: box.b), 0) }
        func channel(_ t: UInt8, _ b: UInt8) -> UInt8 {
            let value = (Double(t) * sourceAlpha + Double(b) * boxAlpha * (1 - sourceAlpha)) / outAlpha
            return UInt8(max(0, min(255, value.rounded())))
        }
        let yuv = YUVColor(r: channel(text.r, box.r), g: channel(text.g, box.g), b: channel(text.b, box.b))
        return (yuv, UInt8(max(0, min(255, (outAlpha * 255).rounded()))))
    }

    /// The alpha-weighted mean of a 2×2 block's chroma, so transparent pixels do not tint the visible ones;
    /// the plain mean when all four are transparent.
    private static func average(
        _ block: [(yuv: YUVColor, alpha: UInt8)], _ value: ((yuv: YUVColor, alpha: UInt8)) -> UInt8
    ) -> UInt8 {
        var sum = 0, weight = 0
        for pixel in block {
            sum += Int(pixel.alpha) * Int(value(pixel))
            weight += Int(pixel.alpha)
        }
        if weight == 0 {
            sum = block.reduce(0) { $0 + Int(value($1)) }
            weight = block.count
        }
        return UInt8((sum + weight / 2) / weight)
    }
}
