import COpenSSL
import SRTP

/// The SRTP keys a DTLS-SRTP handshake produced (RFC 5764 §4.2): the profile the peers agreed on and, each as
/// master key followed by master salt (what `SRTPSession` takes), the key Cohost protects with and the one it
/// unprotects the peer's packets with.
public struct DTLSSRTPKeys: Equatable, Sendable {
    public var profile: SRTPProfile
    public var local: [UInt8]
    public var remote: [UInt8]
}

/// One peer's DTLS 1.2 association over memory BIOs: the caller feeds each datagram that came from the peer and
/// sends each datagram that comes back. Server role (`a=setup:passive`, the usual answer) or client role (when the
/// offer says `passive`). The server asks for a cookie first (HelloVerifyRequest), keyed per context and bound to
/// `cookieSubject`, the peer's transport address. When the handshake finishes, the peer's certificate must match
/// the offer's fingerprint, and SRTP keys are exported; a close_notify from the peer closes the endpoint.
///
/// Not thread-safe: the owner serialises every call (one lock per WebRTC transport).
public final class DTLSEndpoint {
    public enum Role: Sendable { case server, client }
    public enum State: Equatable, Sendable {
        case handshaking
        case connected
        /// The peer sent close_notify, or `close()` was called.
        case closed
        case failed(String)
    }

    public let role: Role
    public private(set) var state = State.handshaking
    public private(set) var keys: DTLSSRTPKeys?
    /// What the cookie is bound to: the bytes of the peer's address.
    public var cookieSubject: [UInt8] = []
    /// Datagrams refused by OpenSSL or fed after the end; counted, never fatal.
    public private(set) var discarded = 0

    private let context: DTLSContext
    let ssl: OpaquePointer
    private let readBIO: OpaquePointer
    private let writeBIO: OpaquePointer
    private let mtu: Int
    private let expectedFingerprint: (algorithm: String, digest: [UInt8])
    private var scratch = [UInt8](repeating: 0, count: 4096)

    /// `peerFingerprint`: the offer's `a=fingerprint` (algorithm as SDP names it, lowercased; the digest bytes).
    public init(
        context: DTLSContext, role: Role, peerFingerprint: (algorithm: String, digest: [UInt8]), mtu: Int = 1200
    ) throws(DTLSError) {
        ERR_clear_error()
        guard let ssl = SSL_new(context.context) else { throw .openSSL("SSL_new") }
        guard let readBIO = BIO_new(BIO_s_mem()), let writeBIO = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw .openSSL("BIO_new")
        }
        // An empty memory BIO then reads as "retry later", not as the end of the stream.
        _ = cohost_bio_set_mem_eof_return(readBIO, -1)
        _ = cohost_bio_set_mem_eof_return(writeBIO, -1)
        SSL_set_bio(ssl, readBIO, writeBIO)
        self.context = context
        self.ssl = ssl
        self.readBIO = readBIO
        self.writeBIO = writeBIO
        self.role = role
        self.mtu = mtu
        self.expectedFingerprint = peerFingerprint
        SSL_set_options(ssl, cohost_ssl_op_no_query_mtu())
        // One handshake per association: the fingerprint check runs on it, and a renegotiation could bring in
        // another certificate unchecked.
        SSL_set_options(ssl, cohost_ssl_op_no_renegotiation())
        _ = cohost_ssl_set_mtu(ssl, mtu - 28)
        _ = cohost_dtls_set_link_mtu(ssl, mtu)
        switch role {
        case .server:
            SSL_set_options(ssl, cohost_ssl_op_cookie_exchange())
            SSL_set_accept_state(ssl)
        case .client:
            SSL_set_connect_state(ssl)
        }
        _ = cohost_ssl_set_app_data(ssl, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { SSL_free(ssl) }  // frees both BIOs

    static func from(_ ssl: OpaquePointer) -> DTLSEndpoint? {
        guard let raw = cohost_ssl_get_app_data(ssl) else { return nil }
        return Unmanaged<DTLSEndpoint>.fromOpaque(raw).takeUnretainedValue()
    }

    func cookie() -> [UInt8] { context.cookie(for: cookieSubject) }

    /// The client's first flight (ClientHello); nothing for a server, which waits for one.
    public func start() -> [[UInt8]] {
        guard role == .client, state == .handshaking else { return [] }
        advanceHandshake()
        return drain()
    }

    /// Handles one datagram from the peer and returns the datagrams to send back.
    public func receive(_ datagram: [UInt8]) -> [[UInt8]] {
        guard state == .handshaking || state == .connected, !datagram.isEmpty else {
            discarded += 1
            return []
        }
        ERR_clear_error()
        let written = datagram.withUnsafeBytes { BIO_write(readBIO, $0.baseAddress, Int32($0.count)) }
        guard written == Int32(datagram.count) else {
            discarded += 1
            return []
        }
        if state == .handshaking { advanceHandshake() }
        if state == .connected { readRecords() }
        // Whatever OpenSSL left unread (a malformed datagram) must not prefix the next one.
        if BIO_ctrl_pending(readBIO) > 0 { _ = BIO_ctrl(readBIO, BIO_CTRL_RESET, 0, nil) }
        return drain()
    }

    /// Milliseconds until OpenSSL wants `handleTimeout()` (a handshake flight to retransmit); nil when no timer runs.
    public var timeoutRemainingMs: Int? {
        guard state == .handshaking else { return nil }
        var tv = timeval()
        guard cohost_dtls_get_timeout(ssl, &tv) == 1 else { return nil }
        return Int(tv.tv_sec) * 1000 + Int(tv.tv_usec) / 1000
    }

    /// Retransmits the last flight when its timer expired; fails the endpoint after OpenSSL's retry limit.
    public func handleTimeout() -> [[UInt8]] {
        guard state == .handshaking else { return [] }
        ERR_clear_error()
        if cohost_dtls_handle_timeout(ssl) < 0 {
            state = .failed(DTLSError.openSSL("DTLS handshake timed out").message)
        }
        return drain()
    }

    /// Sends close_notify and closes.
    public func close() -> [[UInt8]] {
        guard state == .connected || state == .handshaking else { return [] }
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        state = .closed
        return drain()
    }

    private func advanceHandshake() {
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            finishHandshake()
            return
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            break
        default:
            state = .failed(DTLSError.openSSL("DTLS handshake").message)
        }
    }

    private func finishHandshake() {
        guard let peer = SSL_get1_peer_certificate(ssl) else {
            state = .failed("the peer sent no certificate")
            return
        }
        defer { X509_free(peer) }
        guard let digest = DTLSCertificate.digest(of: peer, algorithm: expectedFingerprint.algorithm),
            digest == expectedFingerprint.digest
        else {
            state = .failed("the peer's certificate does not match the offer's a=fingerprint")
            return
        }
        guard let selected = SSL_get_selected_srtp_profile(ssl) else {
            state = .failed("the peer agreed no SRTP profile (use_srtp)")
            return
        }
        let profile: SRTPProfile
        let keyLength = 16
        let saltLength: Int
        switch Int32(selected.pointee.id) {
        case SRTP_AES128_CM_SHA1_80:
            profile = .aesCm128HmacSha1_80
            saltLength = 14
        case SRTP_AEAD_AES_128_GCM:
            profile = .aeadAes128Gcm
            saltLength = 12
        default:
            state = .failed("unexpected SRTP profile \(selected.pointee.id)")
            return
        }
        var material = [UInt8](repeating: 0, count: 2 * (keyLength + saltLength))
        let label = "EXTRACTOR-dtls_srtp"
        guard SSL_export_keying_material(ssl, &material, material.count, label, label.utf8.count, nil, 0, 0) == 1
        else {
            state = .failed(DTLSError.openSSL("SSL_export_keying_material").message)
            return
        }
        // RFC 5764 §4.2: client key, server key, client salt, server salt.
        let clientKey = material[0..<keyLength]
        let serverKey = material[keyLength..<2 * keyLength]
        let clientSalt = material[2 * keyLength..<2 * keyLength + saltLength]
        let serverSalt = material[(2 * keyLength + saltLength)...]
        let client = Array(clientKey + clientSalt)
        let server = Array(serverKey + serverSalt)
        keys = DTLSSRTPKeys(
            profile: profile, local: role == .server ? server : client, remote: role == .server ? client : server)
        state = .connected
    }

    /// Application data is read and dropped (Cohost opens no data channel); a close_notify ends the association.
    private func readRecords() {
        while true {
            let result = scratch.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if result > 0 { continue }
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_ZERO_RETURN:
                state = .closed
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                break
            default:
                // A fatal alert from the peer, or a record OpenSSL refused after the handshake.
                state = .failed(DTLSError.openSSL("DTLS read").message)
            }
            return
        }
    }

    func drain() -> [[UInt8]] {
        let pending = Int(BIO_ctrl_pending(writeBIO))
        guard pending > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: pending)
        let read = bytes.withUnsafeMutableBytes { BIO_read(writeBIO, $0.baseAddress, Int32(pending)) }
        guard read > 0 else { return [] }
        return DTLSRecordPacker.datagrams(Array(bytes.prefix(Int(read))), mtu: mtu)
    }
}
