import Testing
@testable import Rooms

@Suite struct OpusSilenceTests {
    @Test func aOneByteDTXFrameIsTwentyMillisecondsOfSilence() {
        // What libopus emits in DTX with SILK wideband 20 ms (config 9, code 0): TOC 0x48.
        #expect(OpusSilence.frames(of: [0x48]) == 960)
        // CELT fullband 20 ms (config 31), code 0.
        #expect(OpusSilence.frames(of: [0xF8]) == 960)
        // SILK narrowband 60 ms (config 3).
        #expect(OpusSilence.frames(of: [0x18]) == 2880)
    }

    @Test func twoFrameCodesDoubleTheDuration() {
        #expect(OpusSilence.frames(of: [0x49, 0x00]) == 1920)
        #expect(OpusSilence.frames(of: [0x4B, 0x03]) == 2880)  // code 3, three 20 ms frames
        #expect(OpusSilence.frames(of: [0x4B, 0x00]) == nil)  // code 3 with no frames is malformed
        #expect(OpusSilence.frames(of: [0x4B, 0x3F]) == nil)  // 63 × 20 ms is beyond 120 ms
        #expect(OpusSilence.frames(of: [0x4B]) == nil)
    }

    @Test func packetsWithAudioAreNotSilence() {
        #expect(OpusSilence.frames(of: []) == nil)
        #expect(OpusSilence.frames(of: [0x48, 0x01, 0x02]) == nil)
    }
}
