import Testing
import Media
import TestSupport
@testable import Codecs

/// Pictures left in the decoder's buffers (`DecodedPicture`): the same pixels as a copy out, unchanged while held
/// whatever the decoder does next, alive after the decoder is gone, and refused pictures leave nothing behind.
@Suite("Decoded pictures")
struct DecodedPictureTests {
    static func vp8Packets() throws -> [[UInt8]] {
        var packets: [[UInt8]] = []
        for (width, height, count) in [(320, 240, 20), (160, 120, 10)] {
            let encoder = try VP8Encoder(width: width, height: height, fps: 30, bitrateKbps: 600)
            for i in 0..<count {
                packets += try encoder.encode(
                    DecoderBuffersTests.movingPatch(width: width, height: height, frame: i),
                    pts: Int64(i), forceKeyframe: false
                ).map(\.data)
            }
        }
        return packets
    }

    /// Decodes `units` twice: into three held pictures in turn, like presenter slots (`held`), and copied into one
    /// frame (`copying`). Counts held pictures equal to the copy when decoded, and still equal when their turn comes
    /// again two decodes later, after the decoder has written two more pictures.
    static func heldVersusCopied(
        _ units: [[UInt8]], held: ([UInt8], DecodedPicture) throws -> Bool,
        copying: ([UInt8], inout VideoFrame) throws -> Bool
    )
        throws -> (same: Int, stillSame: Int, pictures: [DecodedPicture])
    {
        let pictures = try (0..<3).map { _ in try DecodedPicture() }
        var expected: [VideoFrame?] = [nil, nil, nil]
        var copy = VideoFrame(width: 16, height: 16)
        var same = 0, stillSame = 0
        for (i, unit) in units.enumerated() {
            let slot = i % 3
            if let before = expected[slot], DecoderBuffersTests.same(pictures[slot].copiedFrame(), before) {
                stillSame += 1
            }
            #expect(try held(unit, pictures[slot]))
            #expect(try copying(unit, &copy))
            if DecoderBuffersTests.same(pictures[slot].copiedFrame(), copy) { same += 1 }
            expected[slot] = copy
        }
        return (same, stillSame, pictures)
    }

    @Test("VP8: a held picture has the copied picture's pixels and keeps them while the decoder goes on")
    func vp8HeldPicturesStayAsDecoded() throws {
        let packets = try Self.vp8Packets()
        try #require(packets.count == 30)
        let held = try VP8Decoder(), copying = try VP8Decoder()
        // The size changes once on the way (320×240, then 160×120).
        let result = try Self.heldVersusCopied(
            packets, held: { try held.decode($0, into: $1) },
            copying: { try copying.decode($0, into: &$1) })
        #expect(result.same == 30)
        #expect(result.stillSame == 27)
        #expect(result.pictures[2].width == 160 && result.pictures[2].height == 120)
        // Every picture came from the pool, and holding them built no extra layouts.
        #expect(held.bufferCounts.pictures == 30 && held.bufferCounts.layouts == 2)
    }

    @Test("H.264: a held picture has the copied picture's pixels and keeps them while the decoder goes on")
    func h264HeldPicturesStayAsDecoded() throws {
        let config = H264EncoderConfig(
            width: 320, height: 240, fps: 30, bitrateKbps: 1000, keyintFrames: 60, profile: .high)
        let encoder = try H264Encoder(config: config)
        let units = try (0..<9).map { i in
            let out = try #require(
                try encoder.encode(
                    DecoderBuffersTests.movingPatch(width: 320, height: 240, frame: i),
                    pts: Int64(i), forceKeyframe: false))
            return try #require(
                H264DecoderTests.annexB(
                    record: encoder.decoderConfigurationRecord, frame: out.data,
                    withParameterSets: i == 0))
        }
        let held = try H264Decoder(), copying = try H264Decoder()
        let result = try Self.heldVersusCopied(
            units, held: { try held.decode($0, into: $1) },
            copying: { try copying.decode($0, into: &$1) })
        #expect(result.same == 9)
        #expect(result.stillSame == 6)
        #expect(held.bufferCounts.detached == 0)
    }

    @Test("H.264: an interlaced picture is held as a copy of its own, with the same pixels")
    func h264InterlacedPicturesAreDetached() throws {
        // x264 interlaced (MBAFF), one access unit delimiter before each picture to split them by.
        let (status, stream, stderr) = try run(
            "ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-frames:v", "6",
                "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-flags", "+ildct+ilme",
                "-x264-params", "interlaced=1:aud=1", "-f", "h264", "-",
            ], timeout: 60)
        try #require(status == 0, "\(stderr)")
        let aud: [UInt8] = [0, 0, 0, 1, 9]
        var starts: [Int] = []
        for i in 0...(stream.count - aud.count) where Array(stream[i..<(i + aud.count)]) == aud { starts.append(i) }
        try #require(starts.count == 6)
        let units = starts.indices.map { k in
            Array(stream[starts[k]..<(k + 1 < starts.count ? starts[k + 1] : stream.count)])
        }
        let held = try H264Decoder(), copying = try H264Decoder()
        let picture = try DecodedPicture()
        var copy = VideoFrame(width: 16, height: 16)
        var same = 0
        for unit in units {
            #expect(try held.decode(unit, into: picture))
            #expect(try copying.decode(unit, into: &copy))
            if DecoderBuffersTests.same(picture.copiedFrame(), copy) { same += 1 }
        }
        #expect(same == 6)
        #expect(held.bufferCounts.detached == 6)
    }

    @Test("a held picture outlives its decoder")
    func pictureOutlivesDecoder() throws {
        let packets = try Self.vp8Packets()
        let picture = try DecodedPicture()
        var copy = VideoFrame(width: 16, height: 16)
        do {
            let decoder = try VP8Decoder(), copying = try VP8Decoder()
            for packet in packets.prefix(3) {
                _ = try decoder.decode(packet, into: picture)
                _ = try copying.decode(packet, into: &copy)
            }
        }
        #expect(DecoderBuffersTests.same(picture.copiedFrame(), copy))
    }

    @Test("a picture over the decoder's limit is refused, and the picture held before it is let go")
    func refusedPictureLeavesSlotEmpty() throws {
        let packets = try Self.vp8Packets()
        // 200 wide but two million pixels: libavcodec's pixel limit lets 320×240 through, our width check does not.
        let decoder = try VP8Decoder(maxWidth: 200, maxHeight: 10_000)
        let picture = try DecodedPicture()
        #expect(try decoder.decode(packets[20], into: picture))  // the 160×120 stream's keyframe
        #expect(picture.width == 160 && picture.frame.pointee.buf.0 != nil)
        #expect(throws: CodecError.self) { try decoder.decode(packets[0], into: picture) }  // 320×240 keyframe
        #expect(picture.isEmpty)
        #expect(picture.frame.pointee.buf.0 == nil)
    }

    @Test("an empty picture lends one black pixel, not memory it does not have")
    func emptyPictureLendsOnePixel() throws {
        let picture = try DecodedPicture()
        #expect(picture.isEmpty)
        let lent = picture.withPlanes { ($0.width, $0.height, $0.y.pointee, $0.u.pointee, $0.v.pointee) }
        #expect(lent == (1, 1, 16, 128, 128))
        #expect(Picture(picture).copied().pixel(x: 0, y: 0) == YUVColor(y: 16, u: 128, v: 128))
    }

    @Test("a VideoFrame whose planes were replaced by too short ones lends a black pixel, not memory past them")
    func malformedFrameLendsOnePixel() {
        var frame = VideoFrame(width: 64, height: 64)
        frame.u = [1, 2, 3]
        #expect(Picture(frame).withPlanes { ($0.width, $0.height, $0.u.pointee) } == (1, 1, 128))
        // Drawn, it is that pixel scaled up (libyuv): a black tile.
        var canvas = VideoFrame(width: 8, height: 8, color: YUVColor(y: 200, u: 50, v: 50))
        var scaler = BilinearScaler()
        #expect(
            scaler.scale(
                frame, crop: Rect(x: 0, y: 0, width: 64, height: 64), into: &canvas,
                at: Rect(x: 0, y: 0, width: 8, height: 8)))
        #expect(canvas.pixel(x: 4, y: 4) == YUVColor(y: 16, u: 128, v: 128))
    }
}

extension DecodedPicture {
    /// The pixels as a `VideoFrame` (a copy).
    func copiedFrame() -> VideoFrame { Picture(self).copied() }
}
