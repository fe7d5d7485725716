import Testing
@testable import Publishing

@Suite("FLV muxing")
struct FLVMuxerTests {
    @Test("the file header is FLV, version 1, the A/V flags, size 9 and PreviousTagSize0")
    func fileHeader() {
        #expect(
            FLVMuxer.fileHeader(hasVideo: true, hasAudio: true)
                == [0x46, 0x4C, 0x56, 0x01, 0x05, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00])
        #expect(FLVMuxer.fileHeader(hasVideo: false, hasAudio: true)[4] == 0x04)
        #expect(FLVMuxer.fileHeader(hasVideo: true, hasAudio: false)[4] == 0x01)
    }

    @Test("the AVC sequence header is 0x17 0x00, composition time 0, then the record")
    func avcSequenceHeader() {
        let tag = FLVMuxer.avcSequenceHeader([0x01, 0x64, 0x00, 0x1F])
        #expect(
            tag.serialized() == [
                0x09, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                0x17, 0x00, 0x00, 0x00, 0x00, 0x01, 0x64, 0x00, 0x1F,
                0x00, 0x00, 0x00, 0x14,
            ])
        #expect(tag.isSequenceHeader && tag.isKeyframe)
    }

    @Test("the AAC sequence header is 0xAF 0x00 then the AudioSpecificConfig")
    func aacSequenceHeader() {
        let tag = FLVMuxer.aacSequenceHeader([0x11, 0x90])
        #expect(
            tag.serialized() == [
                0x08, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                0xAF, 0x00, 0x11, 0x90,
                0x00, 0x00, 0x00, 0x0F,
            ])
        #expect(tag.isSequenceHeader)
    }

    @Test("a video tag has the 24-bit timestamp, its extended upper byte, and a signed composition time")
    func videoTag() {
        let tag = FLVMuxer.videoTag(
            avcc: [0x00, 0x00, 0x00, 0x02, 0x41, 0x9A], isKeyframe: false,
            timestampMs: 0x0123_4567, compositionTimeMs: 40)
        #expect(
            tag.serialized() == [
                0x09, 0x00, 0x00, 0x0B, 0x23, 0x45, 0x67, 0x01, 0x00, 0x00, 0x00,
                0x27, 0x01, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0x02, 0x41, 0x9A,
                0x00, 0x00, 0x00, 0x16,
            ])
        #expect(!tag.isKeyframe && !tag.isSequenceHeader)
        let key = FLVMuxer.videoTag(avcc: [0x00], isKeyframe: true, timestampMs: 0, compositionTimeMs: -40)
        #expect(Array(key.body.prefix(5)) == [0x17, 0x01, 0xFF, 0xFF, 0xD8])
        #expect(key.isKeyframe)
    }

    @Test("an audio tag is 0xAF 0x01 then the raw AAC frame")
    func audioTag() {
        let tag = FLVMuxer.audioTag(aac: [0x21, 0x10, 0x04], timestampMs: 1000)
        #expect(
            tag.serialized() == [
                0x08, 0x00, 0x00, 0x05, 0x00, 0x03, 0xE8, 0x00, 0x00, 0x00, 0x00,
                0xAF, 0x01, 0x21, 0x10, 0x04,
                0x00, 0x00, 0x00, 0x10,
            ])
        #expect(tag.serializedSize == 20)
    }

    @Test("onMetaData carries the video and audio fields in order")
    func metadataWithVideo() throws {
        let info = FLVStreamInfo(
            width: 1280, height: 720, fps: 24, videoBitrateKbps: 1536,
            audioSampleRate: 48_000, audioChannels: 2, audioBitrateKbps: 128, encoder: "Cohost test")
        let tag = FLVMuxer.metadataTag(info)
        #expect(tag.kind == .script && tag.timestampMs == 0 && tag.isMetadata)
        let values = try decodeAMF0(tag.body)
        #expect(values.count == 2)
        #expect(values.first == .string("onMetaData"))
        guard case .ecmaArray(let properties)? = values.last else {
            Issue.record("metadata is not an ECMA array: \(values)")
            return
        }
        #expect(
            properties.map(\.name) == [
                "duration", "width", "height", "framerate", "videocodecid", "videodatarate",
                "audiocodecid", "audiosamplerate", "audiosamplesize", "stereo",
                "audiodatarate", "encoder",
            ])
        let metadata = values[1]
        #expect(metadata["width"] == .number(1280))
        #expect(metadata["height"] == .number(720))
        #expect(metadata["framerate"] == .number(24))
        #expect(metadata["videocodecid"] == .number(7))
        #expect(metadata["audiocodecid"] == .number(10))
        #expect(metadata["audiosamplerate"] == .number(48_000))
        #expect(metadata["stereo"] == .boolean(true))
        #expect(metadata["encoder"] == .string("Cohost test"))
        // The ECMA array count field says 12.
        #expect(Array(tag.body[13..<18]) == [0x08, 0x00, 0x00, 0x00, 0x0C])
    }

    @Test("audio-only metadata has no video fields")
    func metadataAudioOnly() throws {
        let info = FLVStreamInfo(
            width: 0, height: 0, fps: 0, videoBitrateKbps: nil, audioChannels: 1, audioBitrateKbps: 64)
        let values = try decodeAMF0(FLVMuxer.metadataTag(info).body)
        guard case .ecmaArray(let properties)? = values.last else {
            Issue.record("metadata is not an ECMA array")
            return
        }
        #expect(
            properties.map(\.name) == [
                "duration", "audiocodecid", "audiosamplerate", "audiosamplesize", "stereo",
                "audiodatarate", "encoder",
            ])
        #expect(values[1]["stereo"] == .boolean(false))
    }

    @Test("a data tag is a script tag with the name then the values, not mistaken for metadata")
    func dataTag() throws {
        let tag = FLVMuxer.dataTag(name: "onVoiceLevels", values: [.number(3)], timestampMs: 200)
        #expect(tag.kind == .script && tag.timestampMs == 200 && !tag.isMetadata)
        #expect(try decodeAMF0(tag.body) == [.string("onVoiceLevels"), .number(3)])
        #expect(Array(tag.serialized().prefix(8)) == [0x12, 0x00, 0x00, 0x19, 0x00, 0x00, 0xC8, 0x00])
    }
}
