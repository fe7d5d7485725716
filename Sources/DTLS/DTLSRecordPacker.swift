/// Splits what OpenSSL wrote into its memory BIO into DTLS records and packs them into datagrams of at most `mtu`
/// bytes. A memory BIO keeps no datagram boundaries; DTLS allows several records per datagram but never a record
/// across two (RFC 6347 §4.1.1), and OpenSSL already fragments handshake messages to fit the MTU it was given.
public enum DTLSRecordPacker {
    /// Content type (1), version (2), epoch (2), sequence number (6), length (2).
    public static let headerSize = 13

    /// Datagrams for `bytes`; a truncated trailing record (which OpenSSL does not write) is sent alone as it is.
    public static func datagrams(_ bytes: [UInt8], mtu: Int) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var current: [UInt8] = []
        var offset = 0
        while offset < bytes.count {
            let end: Int
            if bytes.count - offset >= headerSize {
                let length = Int(bytes[offset + 11]) << 8 | Int(bytes[offset + 12])
                end = min(bytes.count, offset + headerSize + length)
            } else {
                end = bytes.count
            }
            let record = bytes[offset..<end]
            if !current.isEmpty && current.count + record.count > mtu {
                out.append(current)
                current = []
            }
            current.append(contentsOf: record)
            offset = end
        }
        if !current.isEmpty { out.append(current) }
        return out
    }
}
