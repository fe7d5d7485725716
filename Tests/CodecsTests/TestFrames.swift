import Media

/// Deterministic frames and byte helpers shared by the codec tests.
enum TestFrames {
    static let red = YUVColor(r: 255, g: 0, b: 0)
    static let green = YUVColor(r: 0, g: 255, b: 0)
    static let blue = YUVColor(r: 0, g: 0, b: 255)
    static let white = YUVColor(r: 255, g: 255, b: 255)
    static let gray = YUVColor(y: 126, u: 128, v: 128)

    /// A frame whose quadrants are red (top left), green (top right), blue (bottom left), white (bottom right).
    static func quadrants(width: Int, height: Int) -> VideoFrame {
        var f = VideoFrame(width: width, height: height)
        for py in 0..<height {
            for px in 0..<width {
                let c = color(quadrantAt: px, py, width: width, height: height)
                f.y[py * f.strideY + px] = c.y
                if py % 2 == 0 && px % 2 == 0 {
                    f.u[(py / 2) * f.strideUV + px / 2] = c.u
                    f.v[(py / 2) * f.strideUV + px / 2] = c.v
                }
            }
        }
        return f
    }

    static func color(quadrantAt x: Int, _ y: Int, width: Int, height: Int) -> YUVColor {
        switch (x < width / 2, y < height / 2) {
        case (true, true): red
        case (false, true): green
        case (true, false): blue
        case (false, false): white
        }
    }

    /// Pseudo-random luma and chroma (a fixed LCG), so encoders have real work and results are repeatable.
    static func noise(width: Int, height: Int, seed: UInt32) -> VideoFrame {
        var f = VideoFrame(width: width, height: height)
        var random = LCG(seed: seed)
        for i in f.y.indices { f.y[i] = random.next() }
        for i in f.u.indices {
            f.u[i] = random.next()
            f.v[i] = random.next()
        }
        return f
    }

    /// A tiny linear congruential generator: deterministic bytes for test inputs.
    struct LCG {
        var state: UInt32
        init(seed: UInt32) { state = seed &* 2_654_435_761 &+ 1 }
        mutating func next() -> UInt8 {
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }
}
