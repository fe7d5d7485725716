/// Whether a forwarded packet starts a keyframe, read from its payload alone (the forwarder never decodes): a
/// receiver whose slot starts or switches is sent nothing until one.
public enum ForwardedKeyframe {
    /// VP8 (RFC 7741): the first packet of a frame (S = 1, partition 0) whose VP8 header's P bit is 0.
    public static func vp8(_ payload: ArraySlice<UInt8>) -> Bool {
        guard let first = payload.first else { return false }
        var offset = payload.startIndex + 1
        guard first & 0x10 != 0, first & 0x07 == 0 else { return false }
        if first & 0x80 != 0 {
            guard offset < payload.endIndex else { return false }
            let flags = payload[offset]
            offset += 1
            if flags & 0x80 != 0 {
                guard offset < payload.endIndex else { return false }
                offset += payload[offset] & 0x80 != 0 ? 2 : 1
            }
            if flags & 0x40 != 0 { offset += 1 }
            if flags & 0x30 != 0 { offset += 1 }
        }
        guard offset < payload.endIndex else { return false }
        return payload[offset] & 0x01 == 0
    }

    /// H.264 (RFC 6184, packetization-mode 1): a packet carrying a sequence parameter set or the start of an IDR
    /// slice, whole, aggregated (STAP-A) or as the first fragment (FU-A with S = 1).
    public static func h264(_ payload: ArraySlice<UInt8>) -> Bool {
        guard let first = payload.first else { return false }
        switch first & 0x1F {
        case 5, 7: return true
        case 24:
            var offset = payload.startIndex + 1
            while offset + 2 < payload.endIndex {
                let size = Int(payload[offset]) << 8 | Int(payload[offset + 1])
                let type = payload[offset + 2] & 0x1F
                if type == 5 || type == 7 { return true }
                offset += 2 + size
            }
            return false
        case 28:
            guard payload.count >= 2 else { return false }
            let header = payload[payload.startIndex + 1]
            return header & 0x80 != 0 && (header & 0x1F == 5 || header & 0x1F == 7)
        default: return false
        }
    }
}
