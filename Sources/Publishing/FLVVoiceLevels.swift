/// The `onVoiceLevels` data message that carries voice levels inside the FLV (protocol/flv-voice-levels.md).
///
/// Body (AMF0): the string `"onVoiceLevels"`, then an ECMA array of exactly three members, in this order:
/// - `levels`: an AMF0 object, one number member per participant, `userId → 0…100` (integer valued);
/// - `activeSpeaker`: the active speaker's user id as a string, or null when there is none;
/// - `time`: the tag timestamp in milliseconds, as a number (players' script-data callbacks do not
///   hand over the tag timestamp, so the message carries it).
///
/// The message is bounded: at most `maxUsers` participants with ids of 1…`maxUserIdBytes` UTF-8 bytes,
/// so a body never exceeds `maxBodySize` bytes whatever the caller passes.
public enum FLVVoiceLevels {
    /// The data message name (first AMF0 value).
    public static let name = "onVoiceLevels"
    /// Participants beyond this many are left out (rooms hold at most 64).
    public static let maxUsers = 64
    /// Longest user id written, in UTF-8 bytes (the API guarantees ids of at most 64 bytes).
    public static let maxUserIdBytes = 64

    /// The largest body `FLVMuxer.voiceLevelsTag` produces: 64 users with 64-byte ids and a 64-byte
    /// active speaker. Fixed parts: name 3+13, ECMA array 1+4 and end 3, `levels` 2+6 + object marker 1
    /// and end 3, `activeSpeaker` 2+13 + string 3+64, `time` 2+4 + number 9. Each user: 2+64 + number 9.
    public static let maxBodySize =
        (3 + 13) + (1 + 4) + (2 + 6 + 1) + maxUsers * (2 + maxUserIdBytes + 9) + 3
        + (2 + 13 + 3 + maxUserIdBytes) + (2 + 4 + 9) + 3

    /// Whether `userId` can be written as an AMF0 member name here: not empty (an empty name is the
    /// object-end marker) and not longer than `maxUserIdBytes`.
    static func isWritable(_ userId: String) -> Bool {
        let length = userId.utf8.count
        return length > 0 && length <= maxUserIdBytes
    }
}

extension FLVMuxer {
    /// A script tag (type 18) with the `onVoiceLevels` data message at `timestampMs`.
    ///
    /// `levels` keeps the caller's order (the room passes join order). Entries whose id is empty, longer
    /// than `FLVVoiceLevels.maxUserIdBytes`, or repeated (after the first) are left out, as is everything
    /// after the first `FLVVoiceLevels.maxUsers` written; levels are clamped to 0…100. An `activeSpeaker`
    /// that is not a writable id is sent as null. The RTMP output sends it as a plain AMF0 data message
    /// (no `@setDataFrame`), a file output writes it as a script tag.
    public static func voiceLevelsTag(
        levels: [(userId: String, level: Int)], activeSpeaker: String?,
        timestampMs: UInt32
    ) -> FLVTag {
        var bodies = FLVBodyRing(slots: 1, reserve: 0)
        return voiceLevelsTag(levels: levels, activeSpeaker: activeSpeaker, timestampMs: timestampMs, bodies: &bodies)
    }

    /// `voiceLevelsTag` with the body written straight as AMF0 bytes into a body of `bodies` (every 200 ms per
    /// room: no value tree, no set of ids, no allocation once the ring is warm).
    public static func voiceLevelsTag(
        levels: [(userId: String, level: Int)], activeSpeaker: String?,
        timestampMs: UInt32, bodies: inout FLVBodyRing
    ) -> FLVTag {
        let body = bodies.build { out in
            appendAMF0Name(FLVVoiceLevels.name, marker: true, to: &out)
            out.append(AMF0Marker.ecmaArray.rawValue)
            AMF0Writer.appendBigEndian(UInt32(3), to: &out)
            appendAMF0Name("levels", to: &out)
            out.append(AMF0Marker.object.rawValue)
            var written = 0
            for i in levels.indices where written < FLVVoiceLevels.maxUsers {
                let id = levels[i].userId
                // The first of repeated ids wins (a linear scan: at most 64 short ids, every 200 ms).
                guard FLVVoiceLevels.isWritable(id), !levels[..<i].contains(where: { $0.userId == id }) else {
                    continue
                }
                appendAMF0Name(id, to: &out)
                appendAMF0Number(Double(min(100, max(0, levels[i].level))), to: &out)
                written += 1
            }
            out.append(contentsOf: [0x00, 0x00, AMF0Marker.objectEnd.rawValue])
            appendAMF0Name("activeSpeaker", to: &out)
            if let activeSpeaker, FLVVoiceLevels.isWritable(activeSpeaker) {
                appendAMF0Name(activeSpeaker, marker: true, to: &out)
            } else {
                out.append(AMF0Marker.null.rawValue)
            }
            appendAMF0Name("time", to: &out)
            appendAMF0Number(Double(timestampMs), to: &out)
            out.append(contentsOf: [0x00, 0x00, AMF0Marker.objectEnd.rawValue])
        }
        return FLVTag(kind: .script, timestampMs: timestampMs, body: body, isKeyframe: true, isSequenceHeader: false)
    }

    /// A short UTF-8 string with its 16-bit length (a member name, or with `marker` an AMF0 string value).
    /// Only for strings known to be under 64 KiB (ids are at most 64 bytes).
    private static func appendAMF0Name(_ string: String, marker: Bool = false, to out: inout [UInt8]) {
        if marker { out.append(AMF0Marker.string.rawValue) }
        AMF0Writer.appendBigEndian(UInt16(string.utf8.count), to: &out)
        out.append(contentsOf: string.utf8)
    }

    private static func appendAMF0Number(_ number: Double, to out: inout [UInt8]) {
        out.append(AMF0Marker.number.rawValue)
        AMF0Writer.appendBigEndian(number.bitPattern, to: &out)
    }
}
