import Testing

@testable import RTP

/// Sequence parameter sets written by libx264 (ffmpeg 7, `-f h264`) and VP8 keyframe headers written by libvpx,
/// captured once from real encoder output; the size each declares is what ffprobe reports for its stream.
@Suite struct KeyframeSizeTests {
    static let startCode: [UInt8] = [0, 0, 0, 1]

    @Test(arguments: [
        // High profile: 1088 coded lines cropped to 1080.
        ("67640028acd940780227e5c044000003000400000300f03c60c658", 1920, 1080),
        ("67640034acd9401000121b0110000003001000000303c0f1831960", 4096, 2304),
        ("6742c01fd9005005bb0110000003001000000303c0f1832480", 1280, 720),
        // Interlaced (frame_mbs_only_flag 0): heights count field macroblock pairs, cropping in pairs of lines.
        ("67640028acd94078044fde0220000003002000000783e2c5b2c0", 1920, 1080),
        // 4:4:4 with a scaling matrix (cqm=jvt) and an odd size: crop units of one pixel.
        ("67f4001e919b281485fc7cf80880000003008000001e078b16cb", 642, 362),
        // 4:2:2: crop unit 2 across, 1 down.
        ("677a000dbcd941419f8dc044000003000400000300f03c50a658", 320, 180),
    ])
    func h264SequenceParameterSetDeclaresTheEncodedSize(sps: String, width: Int, height: Int) {
        let accessUnit = Self.startCode + hex(sps) + Self.startCode + [0x68, 0xEB, 0xE3, 0xCB]
        let size = KeyframeSize.h264(accessUnit)
        #expect(size?.width == width && size?.height == height, "\(String(describing: size))")
    }

    @Test func h264SizeIsFoundAfterOtherNALUnitsAndBehindAThreeByteStartCode() {
        let sps = hex("67640034acd9401000121b0110000003001000000303c0f1831960")
        let accessUnit = Self.startCode + [0x09, 0xF0] + [0, 0, 1] + [0x06, 0x05, 0x01, 0xFF] + [0, 0, 1] + sps
        let size = KeyframeSize.h264(accessUnit)
        #expect(size?.width == 4096 && size?.height == 2304)
    }

    @Test func h264WithoutASequenceParameterSetOrCutShortDeclaresNothing() {
        let sps = hex("67640028acd940780227e5c044000003000400000300f03c60c658")
        #expect(KeyframeSize.h264(Self.startCode + [0x65, 0x88, 0x84, 0x00]) == nil)
        #expect(KeyframeSize.h264([]) == nil)
        // Cut inside pic_width_in_mbs_minus1: no guessing from half a field.
        #expect(KeyframeSize.h264(Self.startCode + sps.prefix(8)) == nil)
        // An Exp-Golomb code of 40 leading zeros is refused, not shifted past 64 bits.
        #expect(
            KeyframeSize.h264(Self.startCode + [0x67, 0x64, 0, 0x28] + [UInt8](repeating: 0, count: 5) + [0x80]) == nil)
    }

    @Test func vp8KeyframeHeaderDeclaresItsSize() {
        let small = KeyframeSize.vp8(hex("f0c6009d012a80026801000708858588"))
        #expect(small?.width == 640 && small?.height == 360)
        let large = KeyframeSize.vp8(hex("f0490a9d012a00100009030708858588"))
        #expect(large?.width == 4096 && large?.height == 2304)
    }

    @Test func vp8InterframeOrShortFrameDeclaresNothing() {
        var interframe = hex("f0c6009d012a80026801000708858588")
        interframe[0] |= 1
        #expect(KeyframeSize.vp8(interframe) == nil)
        #expect(KeyframeSize.vp8(Array(hex("f0c6009d012a80026801").prefix(9))) == nil)
    }
}
