import CSRTP

/// libsrtp2's `srtp_init()` result, computed once per process. Swift initialises globals exactly once,
/// under a lock, so concurrent first sessions cannot race the library's global crypto kernel setup.
private let libraryInitStatus: UInt32 = srtp_init().rawValue

/// One direction of SRTP/SRTCP for any SSRC, over a libsrtp2 session.
///
/// Inbound sessions use `ssrc_any_inbound` and outbound ones `ssrc_any_outbound`: libsrtp creates a
/// stream (with its own replay window and rollover counter) the first time it sees each SSRC, all
/// keyed from the one SDES master key.
///
/// Confinement: libsrtp contexts are not thread-safe. The owner (one participant's media path) must
/// serialise every call on a session; `@unchecked Sendable` only lets the session move between
/// isolation domains, it does not make concurrent calls safe.
public final class SRTPSession: @unchecked Sendable {
    /// Which way packets flow: `inbound` unprotects, `outbound` protects.
    public enum Direction: Sendable { case inbound, outbound }

    /// Largest packet accepted, in bytes: the largest UDP payload. Keeps lengths well inside `Int32`.
    public static let maxPacketBytes = 65_535

    /// Replay window in packets. libsrtp's default of 128 is too small for video, where a keyframe
    /// burst plus reordering can legitimately arrive more than 128 sequence numbers late.
    static let replayWindow: UInt = 1024

    public let profile: SRTPProfile
    public let direction: Direction
    private let context: OpaquePointer
    /// Bytes libsrtp may append when protecting: the tag plus a possible MKI.
    private let trailerCapacity = Int(cohost_srtp_max_trailer_len())

    /// Creates a session keyed with an SDES master key and salt (`profile.keyLength` bytes).
    public init(profile: SRTPProfile, masterKeyAndSalt: [UInt8], direction: Direction) throws(SRTPError) {
        guard libraryInitStatus == srtp_err_status_ok.rawValue else {
            throw SRTPError(libsrtp: libraryInitStatus, during: "srtp_init")
        }
        guard masterKeyAndSalt.count == profile.keyLength else {
            throw .badParameter(
                "\(profile.rawValue) needs \(profile.keyLength) bytes of master key and salt, got \(masterKeyAndSalt.count)"
            )
        }
        var policy = srtp_policy_t()  // zero-filled: no MKI, no EKT, no encrypted header extensions
        switch profile {
        case .aesCm128HmacSha1_80:
            cohost_srtp_policy_aes_cm_128_hmac_sha1_80(&policy.rtp)
            cohost_srtp_policy_aes_cm_128_hmac_sha1_80(&policy.rtcp)
        case .aesCm128HmacSha1_32:
            // RFC 4568 §6.2.2: the 32-bit tag is for SRTP only; SRTCP keeps the 80-bit tag.
            cohost_srtp_policy_aes_cm_128_hmac_sha1_32(&policy.rtp)
            cohost_srtp_policy_aes_cm_128_hmac_sha1_80(&policy.rtcp)
        case .aeadAes128Gcm:
            cohost_srtp_policy_aead_aes_128_gcm(&policy.rtp)
            cohost_srtp_policy_aead_aes_128_gcm(&policy.rtcp)
        }
        policy.ssrc.type = direction == .inbound ? ssrc_any_inbound : ssrc_any_outbound
        policy.ssrc.value = 0
        policy.window_size = Self.replayWindow
        policy.allow_repeat_tx = 0
        policy.next = nil

        // libsrtp derives session keys inside srtp_create and keeps no pointer to the master key,
        // so a temporary copy is enough; it is wiped afterwards.
        var key = masterKeyAndSalt
        var session: srtp_t? = nil
        let status = key.withUnsafeMutableBufferPointer { buffer in
            policy.key = buffer.baseAddress
            defer { policy.key = nil }
            return srtp_create(&session, &policy).rawValue
        }
        for i in key.indices { key[i] = 0 }
        guard status == srtp_err_status_ok.rawValue, let session else {
            throw SRTPError(libsrtp: status, during: "srtp_create (\(profile.rawValue))")
        }
        self.profile = profile
        self.direction = direction
        self.context = session
    }

    deinit {
        srtp_dealloc(context)
    }

    /// Decrypts and authenticates an SRTP packet, returning the RTP packet.
    /// Throws `isAuthFailure` for tampered or wrongly keyed packets and `isReplay` for repeats.
    public func unprotectRTP(_ packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        var out: [UInt8] = []
        try unprotectRTP(packet, into: &out)
        return out
    }

    /// `unprotectRTP` into `output`, the caller's reused buffer (hot path: its storage is kept, so nothing
    /// is allocated per packet once it is large enough). On a throw `output` holds no packet.
    public func unprotectRTP(_ packet: [UInt8], into output: inout [UInt8]) throws(SRTPError) {
        try requireDirection(.inbound, "unprotectRTP")
        try Self.checkRTPHeader(packet)
        try transform(packet, spare: 0, into: &output, operation: "srtp_unprotect") { ctx, bytes, length in
            srtp_unprotect(ctx, bytes, length).rawValue
        }
    }

    /// `unprotectRTCP` into `output`, the caller's reused buffer (see `unprotectRTP(_:into:)`).
    public func unprotectRTCP(_ packet: [UInt8], into output: inout [UInt8]) throws(SRTPError) {
        try requireDirection(.inbound, "unprotectRTCP")
        try Self.checkRTCPHeader(packet)
        try transform(packet, spare: 0, into: &output, operation: "srtp_unprotect_rtcp") { ctx, bytes, length in
            srtp_unprotect_rtcp(ctx, bytes, length).rawValue
        }
    }

    /// Decrypts and authenticates an SRTCP packet, returning the RTCP compound packet.
    public func unprotectRTCP(_ packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        var out: [UInt8] = []
        try unprotectRTCP(packet, into: &out)
        return out
    }

    /// Encrypts and authenticates an RTP packet, returning the SRTP packet (tag appended).
    public func protectRTP(_ packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        try requireDirection(.outbound, "protectRTP")
        try Self.checkRTPHeader(packet)
        var out: [UInt8] = []
        try transform(packet, spare: trailerCapacity, into: &out, operation: "srtp_protect") { ctx, bytes, length in
            srtp_protect(ctx, bytes, length).rawValue
        }
        return out
    }

    /// `protectRTP` into `output`, the caller's reused buffer (the return path: a packet every 20 ms per
    /// listener, nothing allocated once the buffer is large enough). On a throw `output` holds no packet.
    public func protectRTP(_ packet: [UInt8], into output: inout [UInt8]) throws(SRTPError) {
        try requireDirection(.outbound, "protectRTP")
        try Self.checkRTPHeader(packet)
        try transform(packet, spare: trailerCapacity, into: &output, operation: "srtp_protect") { ctx, bytes, length in
            srtp_protect(ctx, bytes, length).rawValue
        }
    }

    /// Encrypts and authenticates an RTCP compound packet, returning the SRTCP packet
    /// (E-flag/index word and tag appended).
    public func protectRTCP(_ packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        var out: [UInt8] = []
        try protectRTCP(packet, into: &out)
        return out
    }

    /// `protectRTCP` into `output`, the caller's reused buffer (the server's feedback path: a report a second per
    /// participant, nothing allocated once the buffer is large enough). On a throw `output` holds no packet.
    public func protectRTCP(_ packet: [UInt8], into output: inout [UInt8]) throws(SRTPError) {
        try requireDirection(.outbound, "protectRTCP")
        try Self.checkRTCPHeader(packet)
        // srtp_protect_rtcp writes the 4-byte SRTCP index word before the trailer.
        try transform(packet, spare: trailerCapacity + 4, into: &output, operation: "srtp_protect_rtcp") {
            ctx, bytes, length in
            srtp_protect_rtcp(ctx, bytes, length).rawValue
        }
    }

    /// Runs one in-place libsrtp operation on a copy of `packet` with `spare` writable bytes after it, in
    /// `buffer`: emptied first, its capacity kept (a reused buffer allocates nothing; a new one allocates once).
    private func transform(
        _ packet: [UInt8], spare: Int, into buffer: inout [UInt8], operation: String,
        _ call: (OpaquePointer, UnsafeMutableRawPointer, UnsafeMutablePointer<Int32>) -> UInt32
    ) throws(SRTPError) {
        buffer.removeAll(keepingCapacity: true)
        buffer.reserveCapacity(packet.count + spare)
        buffer.append(contentsOf: packet)
        buffer.append(contentsOf: repeatElement(0, count: spare))
        var length = Int32(packet.count)
        let ctx = context
        let status = buffer.withUnsafeMutableBytes { raw -> UInt32 in
            guard let base = raw.baseAddress else { return UInt32(SRTPError.badParam) }
            return call(ctx, base, &length)
        }
        guard status == srtp_err_status_ok.rawValue else {
            buffer.removeAll(keepingCapacity: true)
            throw SRTPError(libsrtp: status, during: operation)
        }
        // libsrtp never reports more than it was given room for; check anyway rather than trust it.
        guard length >= 0, Int(length) <= buffer.count else {
            buffer.removeAll(keepingCapacity: true)
            throw SRTPError(
                status: SRTPError.fail, message: "\(operation): returned length \(length) outside the buffer")
        }
        buffer.removeLast(buffer.count - Int(length))
    }

    private func requireDirection(_ wanted: Direction, _ call: String) throws(SRTPError) {
        guard direction == wanted else {
            throw .badParameter("\(call) needs an \(wanted) session; this one is \(direction)")
        }
    }

    /// Rejects what is not a whole RTP header (version 2, CSRCs and extension inside the packet)
    /// before libsrtp reads it.
    static func checkRTPHeader(_ packet: [UInt8]) throws(SRTPError) {
        guard packet.count <= maxPacketBytes else {
            throw .badParameter("packet of \(packet.count) bytes exceeds \(maxPacketBytes)")
        }
        guard packet.count >= 12 else {
            throw .badParameter("RTP packet of \(packet.count) bytes is shorter than the 12-byte header")
        }
        guard packet[0] >> 6 == 2 else {
            throw .badParameter("not RTP version 2 (version \(packet[0] >> 6))")
        }
        var headerLength = 12 + 4 * Int(packet[0] & 0x0F)
        if packet[0] & 0x10 != 0 {
            guard packet.count >= headerLength + 4 else {
                throw .badParameter("RTP header extension runs past the end of the \(packet.count)-byte packet")
            }
            let words = Int(packet[headerLength + 2]) << 8 | Int(packet[headerLength + 3])
            headerLength += 4 + 4 * words
        }
        guard headerLength <= packet.count else {
            throw .badParameter(
                "RTP header of \(headerLength) bytes runs past the end of the \(packet.count)-byte packet")
        }
    }

    /// Rejects what cannot be an RTCP packet (version 2, at least the 8-byte common header).
    static func checkRTCPHeader(_ packet: [UInt8]) throws(SRTPError) {
        guard packet.count <= maxPacketBytes else {
            throw .badParameter("packet of \(packet.count) bytes exceeds \(maxPacketBytes)")
        }
        guard packet.count >= 8 else {
            throw .badParameter("RTCP packet of \(packet.count) bytes is shorter than the 8-byte header")
        }
        guard packet[0] >> 6 == 2 else {
            throw .badParameter("not RTCP version 2 (version \(packet[0] >> 6))")
        }
    }
}
