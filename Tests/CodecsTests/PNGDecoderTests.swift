import Testing
import Media
@testable import Codecs

/// Writes real PNG files by hand (zlib with stored deflate blocks, CRC-32 and Adler-32 computed here),
/// so tests can make colour types the RGB-only `PNGEncoder` cannot: RGBA, grey+alpha, palette, 16-bit.
enum HandPNG {
    /// `rows` are the raw scanlines without filter bytes (filter 0 is added).
    static func file(
        width: Int, height: Int, bitDepth: UInt8, colorType: UInt8, rows: [[UInt8]],
        extraChunks: [(String, [UInt8])] = []
    ) -> [UInt8] {
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        out += chunk("IHDR", be32(width) + be32(height) + [bitDepth, colorType, 0, 0, 0])
        for (type, data) in extraChunks { out += chunk(type, data) }
        var raw: [UInt8] = []
        for row in rows {
            raw.append(0)
            raw += row
        }
        out += chunk("IDAT", zlibStored(raw))
        out += chunk("IEND", [])
        return out
    }

    /// 8-bit RGBA from one (r, g, b, a) per pixel, row-major.
    static func rgba(width: Int, height: Int, _ pixel: (Int, Int) -> (UInt8, UInt8, UInt8, UInt8)) -> [UInt8] {
        let rows = (0..<height).map { y in
            (0..<width).flatMap { x -> [UInt8] in
                let p = pixel(x, y)
                return [p.0, p.1, p.2, p.3]
            }
        }
        return file(width: width, height: height, bitDepth: 8, colorType: 6, rows: rows)
    }

    static func be32(_ v: Int) -> [UInt8] {
        [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        return be32(data.count) + typeBytes + data + be32(Int(crc32(typeBytes + data)))
    }

    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let n = min(65_535, data.count - offset)
            let final: UInt8 = offset + n == data.count ? 1 : 0
            out += [final, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            out += data[offset..<(offset + n)]
            offset += n
        } while offset < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return out + be32(Int(b << 16 | a))
    }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

@Suite("PNGDecoder")
struct PNGDecoderTests {
    static let red = YUVColor(r: 255, g: 0, b: 0)
    static let blue = YUVColor(r: 0, g: 0, b: 255)
    static let olive = YUVColor(r: 120, g: 130, b: 40)

    @Test("an RGB PNG from PNGEncoder decodes to YUVColor(r:g:b:) exactly, fully opaque")
    func rgbFromEncoder() throws {
        // 8×6: left half olive, right half red, bottom two rows blue.
        var rgb: [UInt8] = []
        for y in 0..<6 {
            for x in 0..<8 {
                rgb += y >= 4 ? [0, 0, 255] : x < 4 ? [120, 130, 40] : [255, 0, 0]
            }
        }
        let png = try PNGEncoder(width: 8, height: 6).encode(rgb: rgb)
        let image = try PNGDecoder.decode(png)
        #expect(image.width == 8 && image.height == 6)
        #expect(image.isOpaque)
        #expect(image.picture.pixel(x: 0, y: 0) == Self.olive)
        #expect(image.picture.pixel(x: 3, y: 3) == Self.olive)
        #expect(image.picture.pixel(x: 4, y: 0) == Self.red)
        #expect(image.picture.pixel(x: 7, y: 3) == Self.red)
        #expect(image.picture.pixel(x: 0, y: 5) == Self.blue)
        #expect(image.picture.pixel(x: 7, y: 4) == Self.blue)
        #expect(Self.red == YUVColor(y: 81, u: 90, v: 240))  // the formula, not libyuv's 82
    }

    @Test("an RGBA PNG keeps its alpha per pixel and its colours")
    func rgbaAlpha() throws {
        // 4×4: left half opaque red, right half blue at alpha 128, bottom-right pixel fully transparent green.
        let png = HandPNG.rgba(width: 4, height: 4) { x, y in
            if x == 3 && y == 3 { return (0, 255, 0, 0) }
            return x < 2 ? (255, 0, 0, 255) : (0, 0, 255, 128)
        }
        let image = try PNGDecoder.decode(png)
        #expect(!image.isOpaque)
        #expect(image.alpha(x: 0, y: 0) == 255)
        #expect(image.alpha(x: 1, y: 3) == 255)
        #expect(image.alpha(x: 2, y: 0) == 128)
        #expect(image.alpha(x: 3, y: 3) == 0)
        #expect(image.picture.pixel(x: 0, y: 0) == Self.red)
        #expect(image.picture.pixel(x: 2, y: 0) == Self.blue)
        // The transparent green pixel keeps its own luma, but its block's chroma is the visible blue's.
        #expect(image.picture.y[3 * 4 + 3] == YUVColor(r: 0, g: 255, b: 0).y)
        #expect(image.picture.pixel(x: 3, y: 3).u == Self.blue.u)
        #expect(image.picture.pixel(x: 3, y: 3).v == Self.blue.v)
    }

    @Test("odd sizes are padded to even by repeating the last column and row")
    func oddSizePadded() throws {
        let png = HandPNG.rgba(width: 3, height: 3) { x, y in x == 2 ? (0, 0, 255, 200) : (255, 0, 0, 255) }
        let image = try PNGDecoder.decode(png)
        #expect(image.width == 4 && image.height == 4)
        #expect(image.picture.y[3 * 4 + 3] == Self.blue.y)
        #expect(image.alpha(x: 3, y: 3) == 200)
        #expect(image.alpha(x: 0, y: 3) == 255)
        #expect(image.picture.pixel(x: 0, y: 3) == Self.red)
    }

    @Test("palette with tRNS, grey+alpha, grey and 16-bit RGBA PNGs convert too")
    func otherPixelFormats() throws {
        // Palette: entry 0 red opaque, entry 1 blue alpha 64.
        let pal = HandPNG.file(
            width: 2, height: 2, bitDepth: 8, colorType: 3, rows: [[0, 1], [1, 0]],
            extraChunks: [("PLTE", [255, 0, 0, 0, 0, 255]), ("tRNS", [255, 64])])
        let p = try PNGDecoder.decode(pal)
        #expect(p.picture.y[0] == Self.red.y && p.alpha(x: 0, y: 0) == 255)
        #expect(p.picture.y[1] == Self.blue.y && p.alpha(x: 1, y: 0) == 64)

        let ya = HandPNG.file(
            width: 2, height: 2, bitDepth: 8, colorType: 4, rows: [[200, 10, 200, 10], [200, 10, 200, 10]])
        let g = try PNGDecoder.decode(ya)
        #expect(g.picture.pixel(x: 1, y: 1) == YUVColor(r: 200, g: 200, b: 200))
        #expect(g.alpha(x: 1, y: 1) == 10)

        let gray = HandPNG.file(width: 2, height: 2, bitDepth: 8, colorType: 0, rows: [[50, 50], [50, 50]])
        let k = try PNGDecoder.decode(gray)
        #expect(k.picture.pixel(x: 0, y: 0) == YUVColor(r: 50, g: 50, b: 50))
        #expect(k.isOpaque)

        // 16-bit samples keep their high byte: 0x78xx → 120, 0x82xx → 130, 0x28xx → 40, alpha 0x80xx → 128.
        let row: [UInt8] = [0x78, 0x11, 0x82, 0x22, 0x28, 0x33, 0x80, 0x44]
        let deep = HandPNG.file(width: 2, height: 2, bitDepth: 16, colorType: 6, rows: [row + row, row + row])
        let d = try PNGDecoder.decode(deep)
        #expect(d.picture.pixel(x: 1, y: 1) == Self.olive)
        #expect(d.alpha(x: 1, y: 1) == 128)
    }

    @Test("truncated, garbage, empty and oversized input throw CodecError")
    func hostileInput() throws {
        let png = HandPNG.rgba(width: 8, height: 8) { _, _ in (1, 2, 3, 4) }
        #expect(throws: CodecError.self) { try PNGDecoder.decode(Array(png.prefix(png.count / 2))) }
        #expect(throws: CodecError.self) { try PNGDecoder.decode(Array(png.prefix(40))) }
        #expect(throws: CodecError.self) { try PNGDecoder.decode([]) }
        #expect(throws: CodecError.self) { try PNGDecoder.decode([UInt8](repeating: 0x42, count: 300)) }
        // A valid signature followed by garbage gets libavcodec's own message.
        var garbage = Array(png.prefix(8))
        var random = TestFrames.LCG(seed: 7)
        for _ in 0..<500 { garbage.append(random.next()) }
        do {
            _ = try PNGDecoder.decode(garbage)
            Issue.record("garbage decoded")
        } catch {
            #expect(error.library == "avcodec")
            #expect(error.message.contains("png"))
        }
        let wide = HandPNG.file(
            width: 4097, height: 1, bitDepth: 8, colorType: 0, rows: [[UInt8](repeating: 9, count: 4097)])
        #expect(throws: CodecError.self) { try PNGDecoder.decode(wide) }
        #expect(throws: CodecError.self) {
            try PNGDecoder.decode(png + [UInt8](repeating: 0, count: PNGDecoder.maxInputBytes))
        }
    }

    @Test("one decoder decodes several files in a row, also after a failure")
    func reuse() throws {
        let decoder = try PNGDecoder()
        let a = HandPNG.rgba(width: 2, height: 2) { _, _ in (255, 0, 0, 255) }
        let b = HandPNG.rgba(width: 4, height: 2) { _, _ in (0, 0, 255, 77) }
        #expect(try decoder.decode(a).picture.pixel(x: 1, y: 1) == Self.red)
        #expect(throws: CodecError.self) { try decoder.decode(Array(b.prefix(50))) }
        let second = try decoder.decode(b)
        #expect(second.width == 4 && second.picture.pixel(x: 3, y: 1) == Self.blue && second.alpha(x: 3, y: 1) == 77)
    }
}
