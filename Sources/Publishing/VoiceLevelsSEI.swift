/// Voice levels inside the H.264 stream: an SEI `user_data_unregistered` message (H.264 §D.1.7) carrying
/// the same JSON as the `voice_levels` event, put in front of a video frame every 200 ms.
///
/// Why a second carrier besides the `onVoiceLevels` data message: RTMP servers such as nginx-rtmp drop
/// AMF0 data messages other than `@setDataFrame`/`onMetaData`, but they relay the video payload untouched,
/// so a player behind any server still gets the levels in step with the picture (flv.js and hls.js hand
/// SEI payloads to the page). Format: protocol/flv-voice-levels.md.
public enum VoiceLevelsSEI {
    /// The 16-byte UUID that marks Cohost's message: ASCII "CohostVoiceLevel".
    public static let uuid: [UInt8] = Array("CohostVoiceLevel".utf8)

    /// The JSON payload: `{"levels":{"alice":67},"activeSpeaker":"alice"|null,"time":1200}`, ids as given
    /// (they match `[A-Za-z0-9_.-]{1,64}`, so they need no escaping; anything else is left out).
    public static func json(levels: [(userId: String, level: Int)], activeSpeaker: String?, timeMs: UInt32) -> [UInt8] {
        var out = Array(#"{"levels":{"#.utf8)
        var first = true
        for entry in levels.prefix(FLVVoiceLevels.maxUsers) where isPlain(entry.userId) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out += Array("\"\(entry.userId)\":\(min(100, max(0, entry.level)))".utf8)
        }
        out += Array(#"},"activeSpeaker":"#.utf8)
        if let activeSpeaker, isPlain(activeSpeaker) { out += Array("\"\(activeSpeaker)\"".utf8) } else { out += Array("null".utf8) }
        out += Array(",\"time\":\(timeMs)}".utf8)
        return out
    }

    /// The SEI NAL unit (header byte included, emulation-prevented, no length prefix).
    public static func nal(payload: [UInt8]) -> [UInt8] {
        var rbsp: [UInt8] = [5]                       // payloadType 5: user_data_unregistered
        var size = uuid.count + payload.count
        while size >= 255 { rbsp.append(255); size -= 255 }
        rbsp.append(UInt8(size))
        rbsp += uuid
        rbsp += payload
        rbsp.append(0x80)                             // rbsp_trailing_bits
        var nal: [UInt8] = [0x06]                     // nal_ref_idc 0, type 6 (SEI)
        nal.reserveCapacity(rbsp.count + rbsp.count / 64 + 2)
        var zeros = 0
        for byte in rbsp {
            if zeros >= 2 && byte <= 3 {
                nal.append(3)                         // emulation_prevention_three_byte
                zeros = 0
            }
            nal.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return nal
    }

    /// `avcc` (4-byte length-prefixed NAL units, one access unit) with `nal` inserted before the first slice,
    /// where the standard wants SEI; appended at the end of the non-VCL units when the frame has no slice.
    /// A malformed `avcc` is returned unchanged.
    public static func inserting(_ nal: [UInt8], into avcc: [UInt8]) -> [UInt8] {
        var offset = 0
        var insertAt: Int?
        while offset + 4 <= avcc.count {
            let length = Int(avcc[offset]) << 24 | Int(avcc[offset + 1]) << 16 | Int(avcc[offset + 2]) << 8 | Int(avcc[offset + 3])
            guard length > 0, offset + 4 + length <= avcc.count else { return avcc }
            let type = avcc[offset + 4] & 0x1F
            if (1...5).contains(type) { insertAt = offset; break }
            offset += 4 + length
        }
        guard offset <= avcc.count else { return avcc }
        let at = insertAt ?? offset
        let n = nal.count
        var out: [UInt8] = []
        out.reserveCapacity(avcc.count + 4 + n)
        out += avcc[..<at]
        out += [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
        out += nal
        out += avcc[at...]
        return out
    }

    private static func isPlain(_ id: String) -> Bool {
        let bytes = id.utf8
        return (1...64).contains(bytes.count) && bytes.allSatisfy { b in
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x5F || b == 0x2E || b == 0x2D
        }
    }
}
