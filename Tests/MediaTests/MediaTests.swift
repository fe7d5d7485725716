import Testing
@testable import Media

@Suite struct RectTests {
    @Test func intersectionClipsToTheOtherRect() {
        let canvas = Rect(x: 0, y: 0, width: 1280, height: 720)
        #expect(
            Rect(x: 1200, y: -10, width: 200, height: 100).intersection(canvas)
                == Rect(x: 1200, y: 0, width: 80, height: 90))
        #expect(Rect(x: 2000, y: 0, width: 10, height: 10).intersection(canvas).isEmpty)
    }

    @Test func evenAlignmentKeepsChromaBlocksWhole() {
        #expect(Rect(x: 3, y: 5, width: 101, height: 51).evenAligned == Rect(x: 2, y: 4, width: 102, height: 52))
    }
}

@Suite struct ColorTests {
    @Test func rgbConvertsWithBT601LimitedRange() {
        #expect(YUVColor(hex: "#FF0000") == YUVColor(y: 81, u: 90, v: 240))
        #expect(YUVColor(hex: "00FF00") == YUVColor(y: 145, u: 54, v: 34))
        #expect(YUVColor(hex: "#0000ff") == YUVColor(y: 41, u: 240, v: 110))
        #expect(YUVColor(hex: "#000000") == .black)
        #expect(YUVColor(hex: "#FFFFFF") == YUVColor(y: 235, u: 128, v: 128))
    }

    @Test func malformedHexIsRejected() {
        #expect(YUVColor(hex: "#12345") == nil)
        #expect(YUVColor(hex: "#GG0000") == nil)
        #expect(YUVColor(hex: "") == nil)
    }
}

@Suite struct VideoFrameTests {
    @Test func planesHaveI420Sizes() {
        let f = VideoFrame(width: 6, height: 4, color: YUVColor(y: 1, u: 2, v: 3))
        #expect(f.y.count == 24 && f.u.count == 6 && f.v.count == 6)
        #expect(f.pixel(x: 5, y: 3) == YUVColor(y: 1, u: 2, v: 3))
    }
}
