import Foundation
import Testing
import Codecs
import Media
import TestSupport

/// PNG snapshots: the container bytes checked by hand, the pixels decoded back by ffmpeg (lossless, so exact).
@Suite struct PNGEncoderTests {
    /// A pattern where every byte differs from its neighbours, so row or channel mix-ups show.
    static func pattern(width: Int, height: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 3
                out[i] = UInt8((x * 7 + y) & 0xFF)
                out[i + 1] = UInt8((y * 13 + 5) & 0xFF)
                out[i + 2] = UInt8((x * y + 200) & 0xFF)
            }
        }
        return out
    }

    static func bigEndian32(_ bytes: [UInt8], at i: Int) -> Int {
        Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
    }

    @Test func headerIsAPNGSignatureAndAnRGB8IHDRWithTheSize() throws {
        let png = try PNGEncoder(width: 33, height: 17).encode(rgb: Self.pattern(width: 33, height: 17))
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(Self.bigEndian32(png, at: 8) == 13)
        #expect(Array(png[12..<16]) == Array("IHDR".utf8))
        #expect(Self.bigEndian32(png, at: 16) == 33)
        #expect(Self.bigEndian32(png, at: 20) == 17)
        #expect(png[24] == 8 && png[25] == 2)  // 8 bits per sample, colour type 2 (RGB)
        #expect(png[26] == 0 && png[27] == 0 && png[28] == 0)  // deflate, adaptive filtering, no interlace
        #expect(Array(png.suffix(8)) == [0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82])  // IEND and its CRC
    }

    @Test func ffmpegDecodesExactlyThePixelsThatWentIn() throws {
        let rgb = Self.pattern(width: 33, height: 17)
        let encoder = try PNGEncoder(width: 33, height: 17)
        let png = try encoder.encode(rgb: rgb)
        #expect(try decodePNGWithFFmpeg(png) == rgb)
        // The encoder is reusable: the same input gives the same file.
        #expect(try encoder.encode(rgb: rgb) == png)
    }

    @Test func anI420CanvasComesBackAsItsRGBConversion() throws {
        var frame = VideoFrame(width: 64, height: 48, color: YUVColor(r: 128, g: 128, b: 128))
        ImageOps.fill(&frame, rect: Rect(x: 0, y: 0, width: 32, height: 24), color: YUVColor(r: 255, g: 0, b: 0))
        let png = try PNGEncoder.encode(frame)
        let decoded = try decodePNGWithFFmpeg(png)
        #expect(decoded == ImageOps.rgb(frame))
        func pixel(_ x: Int, _ y: Int) -> [UInt8] { Array(decoded[(y * 64 + x) * 3..<(y * 64 + x) * 3 + 3]) }
        // BT.601 limited range round trip of pure red and mid grey (libyuv's fixed point gives 254 for red).
        #expect(pixel(10, 10) == [254, 0, 0])
        #expect(pixel(50, 40) == [128, 128, 128])
    }

    @Test func wrongInputSizesAreRefusedWithTheSizesNamed() throws {
        #expect(throws: CodecError(library: "avcodec", message: "PNG input is 8 bytes; 2x2 RGB24 needs 12")) {
            try PNGEncoder(width: 2, height: 2).encode(rgb: [UInt8](repeating: 0, count: 8))
        }
        #expect(throws: CodecError(library: "avcodec", message: "PNG size 0x10 outside 1...16384")) {
            try PNGEncoder(width: 0, height: 10)
        }
        #expect(throws: CodecError(library: "avcodec", message: "picture is 4x4; this PNG encoder is 2x2")) {
            try PNGEncoder(width: 2, height: 2).encode(VideoFrame(width: 4, height: 4))
        }
    }
}
