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
        var out: [UInt8] = []
        appendJSON(levels: levels, activeSpeaker: activeSpeaker, timeMs: timeMs, to: &out)
        return out
    }

    /// Appends what `json` returns to `out` (the programme reuses one buffer: every 200 ms per video room).
    public static func appendJSON(
        levels: [(userId: String, level: Int)], activeSpeaker: String?, timeMs: UInt32,
        to out: inout [UInt8]
    ) {
        out.append(contentsOf: #"{"levels":{"#.utf8)
        var first = true
        for entry in levels.prefix(FLVVoiceLevels.maxUsers) where isPlain(entry.userId) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: entry.userId.utf8)
            out.append(contentsOf: "\":".utf8)
            appendDecimal(min(100, max(0, entry.level)), to: &out)
        }
        out.append(contentsOf: #"},"activeSpeaker":"#.utf8)
        if let activeSpeaker, isPlain(activeSpeaker) {
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: activeSpeaker.utf8)
            out.append(UInt8(ascii: "\""))
        } else {
            out.append(contentsOf: "null".utf8)
        }
        out.append(contentsOf: ",\"time\":".utf8)
        appendDecimal(Int(timeMs), to: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// A non-negative integer's decimal digits, without going through a String.
    private static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// The SEI NAL unit (header byte included, emulation-prevented, no length prefix).
    public static func nal(payload: [UInt8]) -> [UInt8] {
        var nal: [UInt8] = []
        appendNAL(payload: payload, to: &nal)
        return nal
    }

    /// Appends what `nal` returns to `out`, escaping as it goes (no intermediate RBSP array).
    public static func appendNAL(payload: [UInt8], to out: inout [UInt8]) {
        out.append(0x06)  // nal_ref_idc 0, type 6 (SEI)
        var zeros = 0
        func put(_ byte: UInt8) {
            if zeros >= 2 && byte <= 3 {
                out.append(3)  // emulation_prevention_three_byte
                zeros = 0
            }
            out.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        put(5)  // payloadType 5: user_data_unregistered
        var size = uuid.count + payload.count
        while size >= 255 {
            put(255)
            size -= 255
        }
        put(UInt8(size))
        for byte in uuid { put(byte) }
        for byte in payload { put(byte) }
        put(0x80)  // rbsp_trailing_bits
    }

    /// `avcc` (4-byte length-prefixed NAL units, one access unit) with `nal` inserted before the first slice,
    /// where the standard wants SEI; appended at the end of the non-VCL units when the frame has no slice.
    /// A malformed `avcc` is returned unchanged.
    public static func inserting(_ nal: [UInt8], into avcc: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(avcc.count + 4 + nal.count)
        avcc.withUnsafeBytes { append(nal, insertedInto: $0, to: &out) }
        return out
    }

    /// Appends what `inserting` returns to `out`, reading `avcc` in place (the programme builds each video tag
    /// body this way, straight from the encoder's buffer).
    public static func append(_ nal: [UInt8], insertedInto avcc: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        var offset = 0
        var insertAt: Int?
        while offset + 4 <= avcc.count {
            let length =
                Int(avcc[offset]) << 24 | Int(avcc[offset + 1]) << 16 | Int(avcc[offset + 2]) << 8
                | Int(avcc[offset + 3])
            guard length > 0, offset + 4 + length <= avcc.count else {
                out.append(contentsOf: avcc)
                return
            }
            let type = avcc[offset + 4] & 0x1F
            if (1...5).contains(type) {
                insertAt = offset
                break
            }
            offset += 4 + length
        }
        guard offset <= avcc.count else {
            out.append(contentsOf: avcc)
            return
        }
        let at = insertAt ?? offset
        let n = nal.count
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: avcc[..<at]))
        out.append(UInt8(n >> 24 & 0xFF))
        out.append(UInt8(n >> 16 & 0xFF))
        out.append(UInt8(n >> 8 & 0xFF))
        out.append(UInt8(n & 0xFF))
        out.append(contentsOf: nal)
        out.append(contentsOf: UnsafeRawBufferPointer(rebasing: avcc[at...]))
    }

    private static func isPlain(_ id: String) -> Bool {
        let bytes = id.utf8
        return (1...64).contains(bytes.count)
            && bytes.allSatisfy { b in
                (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x5F
                    || b == 0x2E || b == 0x2D
            }
    }
}
