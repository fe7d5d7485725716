/// What `onMetaData` describes about a stream.
public struct FLVStreamInfo: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var fps: Int
    /// nil for an audio-only stream: the metadata then carries no video fields.
    public var videoBitrateKbps: Int?
    public var audioSampleRate: Int
    public var audioChannels: Int
    public var audioBitrateKbps: Int
    public var encoder: String

    public init(
        width: Int, height: Int, fps: Int, videoBitrateKbps: Int?,
        audioSampleRate: Int = 48_000, audioChannels: Int = 2, audioBitrateKbps: Int,
        encoder: String = "Cohost"
    ) {
        self.width = width
        self.height = height
        self.fps = fps
        self.videoBitrateKbps = videoBitrateKbps
        self.audioSampleRate = audioSampleRate
        self.audioChannels = audioChannels
        self.audioBitrateKbps = audioBitrateKbps
        self.encoder = encoder
    }

    public var hasVideo: Bool { videoBitrateKbps != nil }
}

/// Builds FLV tags for H.264 video and AAC audio (FLV spec v10.1, annex E).
public enum FLVMuxer {
    /// FLV codec ids: AVC is video codec 7, AAC is sound format 10.
    static let avcCodecID = 7.0
    static let aacCodecID = 10.0
    /// AAC audio tag header byte: format 10, rate index 3, 16-bit, stereo. The spec fixes these
    /// bits for AAC; the real rate and channels come from the AudioSpecificConfig.
    static let aacTagHeader: UInt8 = 0xAF

    /// "FLV", version 1, the flags, header size 9, then PreviousTagSize0 (0).
    public static func fileHeader(hasVideo: Bool, hasAudio: Bool) -> [UInt8] {
        let flags: UInt8 = (hasAudio ? 0x04 : 0) | (hasVideo ? 0x01 : 0)
        return [0x46, 0x4C, 0x56, 0x01, flags, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00]
    }

    /// The `onMetaData` script tag at timestamp 0; video fields only when the stream has video.
    public static func metadataTag(_ info: FLVStreamInfo) -> FLVTag {
        var properties: [AMF0Property] = [AMF0Property("duration", .number(0))]
        if let videoBitrate = info.videoBitrateKbps {
            properties += [
                AMF0Property("width", .number(Double(info.width))),
                AMF0Property("height", .number(Double(info.height))),
                AMF0Property("framerate", .number(Double(info.fps))),
                AMF0Property("videocodecid", .number(avcCodecID)),
                AMF0Property("videodatarate", .number(Double(videoBitrate))),
            ]
        }
        properties += [
            AMF0Property("audiocodecid", .number(aacCodecID)),
            AMF0Property("audiosamplerate", .number(Double(info.audioSampleRate))),
            AMF0Property("audiosamplesize", .number(16)),
            AMF0Property("stereo", .boolean(info.audioChannels >= 2)),
            AMF0Property("audiodatarate", .number(Double(info.audioBitrateKbps))),
            AMF0Property("encoder", .string(info.encoder)),
        ]
        return scriptTag(encodeAMF0([.string("onMetaData"), .ecmaArray(properties)]), timestampMs: 0)
    }

    /// AVC sequence header: keyframe + AVC, AVCPacketType 0, composition time 0, then the record.
    public static func avcSequenceHeader(_ decoderConfigurationRecord: [UInt8]) -> FLVTag {
        FLVTag(
            kind: .video, timestampMs: 0, body: [0x17, 0x00, 0x00, 0x00, 0x00] + decoderConfigurationRecord,
            isKeyframe: true, isSequenceHeader: true)
    }

    /// AAC sequence header: 0xAF, AACPacketType 0, then the AudioSpecificConfig.
    public static func aacSequenceHeader(_ audioSpecificConfig: [UInt8]) -> FLVTag {
        FLVTag(
            kind: .audio, timestampMs: 0, body: [aacTagHeader, 0x00] + audioSpecificConfig,
            isKeyframe: true, isSequenceHeader: true)
    }

    /// One H.264 access unit in AVCC form (4-byte length-prefixed NAL units).
    /// `compositionTimeMs` is pts − dts, written as a signed 24-bit big-endian value.
    public static func videoTag(
        avcc: [UInt8], isKeyframe: Bool, timestampMs: UInt32, compositionTimeMs: Int32
    ) -> FLVTag {
        var body: [UInt8] = []
        body.reserveCapacity(5 + avcc.count)
        appendVideoHeader(isKeyframe: isKeyframe, compositionTimeMs: compositionTimeMs, to: &body)
        body.append(contentsOf: avcc)
        return FLVTag(
            kind: .video, timestampMs: timestampMs, body: body, isKeyframe: isKeyframe, isSequenceHeader: false)
    }

    /// One raw AAC frame: 0xAF, AACPacketType 1, then the frame.
    public static func audioTag(aac: [UInt8], timestampMs: UInt32) -> FLVTag {
        var body: [UInt8] = []
        body.reserveCapacity(2 + aac.count)
        appendAudioHeader(to: &body)
        body.append(contentsOf: aac)
        return FLVTag(kind: .audio, timestampMs: timestampMs, body: body, isKeyframe: true, isSequenceHeader: false)
    }

    /// `videoTag` with the body built in `bodies` (no allocation once the ring is warm) from bytes the encoder
    /// still owns; `sei` (a NAL unit without length prefix) goes before the first slice, as `VoiceLevelsSEI.inserting`.
    public static func videoTag(
        avcc: UnsafeRawBufferPointer, sei: [UInt8]? = nil, isKeyframe: Bool, timestampMs: UInt32,
        compositionTimeMs: Int32, bodies: inout FLVBodyRing
    ) -> FLVTag {
        let body = bodies.build { body in
            appendVideoHeader(isKeyframe: isKeyframe, compositionTimeMs: compositionTimeMs, to: &body)
            if let sei {
                VoiceLevelsSEI.append(sei, insertedInto: avcc, to: &body)
            } else {
                body.append(contentsOf: avcc)
            }
        }
        return FLVTag(
            kind: .video, timestampMs: timestampMs, body: body, isKeyframe: isKeyframe, isSequenceHeader: false)
    }

    /// `audioTag` with the body built in `bodies` (no allocation once the ring is warm) from bytes the encoder
    /// still owns.
    public static func audioTag(aac: UnsafeRawBufferPointer, timestampMs: UInt32, bodies: inout FLVBodyRing) -> FLVTag {
        let body = bodies.build { body in
            appendAudioHeader(to: &body)
            body.append(contentsOf: aac)
        }
        return FLVTag(kind: .audio, timestampMs: timestampMs, body: body, isKeyframe: true, isSequenceHeader: false)
    }

    /// VideoTagHeader: frame type + codec id 7 (AVC), AVCPacketType 1 (NALU), 24-bit composition time.
    private static func appendVideoHeader(isKeyframe: Bool, compositionTimeMs: Int32, to body: inout [UInt8]) {
        let cts = UInt32(bitPattern: max(-0x80_0000, min(0x7F_FFFF, compositionTimeMs)))
        body.append(isKeyframe ? 0x17 : 0x27)
        body.append(0x01)
        body.append(UInt8(cts >> 16 & 0xFF))
        body.append(UInt8(cts >> 8 & 0xFF))
        body.append(UInt8(cts & 0xFF))
    }

    /// AudioTagHeader for AAC, AACPacketType 1 (raw frame).
    private static func appendAudioHeader(to body: inout [UInt8]) {
        body.append(aacTagHeader)
        body.append(0x01)
    }

    /// A script tag carrying a custom data message: the name, then the values (voice levels).
    public static func dataTag(name: String, values: [AMF0Value], timestampMs: UInt32) -> FLVTag {
        scriptTag(encodeAMF0([.string(name)] + values), timestampMs: timestampMs)
    }

    private static func scriptTag(_ body: [UInt8], timestampMs: UInt32) -> FLVTag {
        FLVTag(kind: .script, timestampMs: timestampMs, body: body, isKeyframe: true, isSequenceHeader: false)
    }
}
