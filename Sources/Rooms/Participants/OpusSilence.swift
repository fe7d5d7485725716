/// Recognises Opus DTX frames (RFC 6716 §3.1, RFC 7587 §3.1.3): packets of at most 2 bytes, a TOC byte
/// and at most one more, which carry no speech. libopus decodes them as packet loss; Cohost takes them
/// as silence of the packet's duration and skips the decoder.
enum OpusSilence {
    /// The duration in 48 kHz frames of a DTX packet, or nil for any packet that carries audio.
    static func frames(of packet: [UInt8]) -> Int? {
        guard let toc = packet.first, packet.count <= 2 else { return nil }
        let config = Int(toc >> 3)
        // Frame sizes in 48 kHz samples per configuration group (Table 2 of RFC 6716).
        let size: Int
        switch config {
        case 0...11: size = [480, 960, 1920, 2880][config % 4]  // SILK: 10, 20, 40, 60 ms
        case 12...15: size = [480, 960][config % 2]  // hybrid: 10, 20 ms
        default: size = [120, 240, 480, 960][config % 4]  // CELT: 2.5, 5, 10, 20 ms
        }
        switch toc & 0x03 {
        case 0: return size
        case 1, 2: return size * 2
        default:
            // Code 3: the frame count is in the second byte (at most 120 ms in all).
            guard packet.count == 2 else { return nil }
            let count = Int(packet[1] & 0x3F)
            guard count > 0, count * size <= 5760 else { return nil }
            return count * size
        }
    }
}
