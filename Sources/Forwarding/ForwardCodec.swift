/// The codec of a forwarded stream, as slots and senders are matched on it: VP8, or H.264 in packetization-mode 1
/// with its profile (a receiver decodes a stream of the profile it offered; constrained baseline also fits a
/// baseline slot).
public enum ForwardCodec: Hashable, Sendable {
    case vp8
    /// `profile`: profile_idc (0x42 baseline, 0x4D main, 0x64 high); `constrained`: constraint_set1 (the
    /// constrained baseline of browsers).
    case h264(profile: UInt8, constrained: Bool)

    /// From an `a=rtpmap` encoding name and the line's `a=fmtp` for it; nil for what cannot be forwarded
    /// (H.264 other than packetization-mode 1, other codecs). An H.264 line without `profile-level-id` is
    /// baseline (RFC 6184 §8.1).
    public init?(name: String, fmtp: String?) {
        switch name.lowercased() {
        case "vp8": self = .vp8
        case "h264":
            var mode = 0
            var profile: UInt8 = 0x42
            var constrained = false
            for part in (fmtp ?? "").split(separator: ";") {
                let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces() }
                guard pair.count == 2 else { continue }
                switch pair[0].lowercased() {
                case "packetization-mode": mode = Int(pair[1]) ?? -1
                case "profile-level-id":
                    guard pair[1].count == 6, let value = UInt32(pair[1], radix: 16) else { return nil }
                    profile = UInt8(value >> 16)
                    constrained = (value >> 8) & 0x40 != 0
                default: break
                }
            }
            guard mode == 1 else { return nil }
            self = .h264(profile: profile, constrained: constrained)
        default: return nil
        }
    }

    /// The allocator's name for it: what a sender sends.
    public var key: String {
        switch self {
        case .vp8: return "VP8"
        case .h264(let profile, let constrained):
            return "H264/" + String(profile, radix: 16) + (constrained ? "c" : "")
        }
    }

    /// The senders' keys a slot offering this codec accepts.
    public var accepts: Set<String> {
        switch self {
        case .vp8: return ["VP8"]
        case .h264(let profile, let constrained):
            let base = "H264/" + String(profile, radix: 16)
            // A constrained baseline stream decodes anywhere baseline does.
            if profile == 0x42 && !constrained { return [base, base + "c"] }
            return [base + (constrained ? "c" : "")]
        }
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
