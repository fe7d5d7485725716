import COpenSSL

/// One OpenSSL `SSL_CTX` for every DTLS-SRTP peer: DTLS 1.2 only, Cohost's certificate, the `use_srtp` profiles
/// Cohost can key (RFC 5764; GCM first, RFC 7714), any peer certificate accepted by OpenSSL (the caller checks it
/// against the SDP fingerprint once the handshake is done, RFC 8122), and stateless cookies (RFC 6347 §4.2.1).
///
/// Thread-safe once made: OpenSSL's context is reference-counted and read-only for `SSL_new`.
public final class DTLSContext: @unchecked Sendable {
    let context: OpaquePointer
    public let certificate: DTLSCertificate
    /// The cookie key: a HelloVerifyRequest's cookie is HMAC-SHA256(this key, the endpoint's cookie subject).
    private let cookieKey: [UInt8]

    public static let srtpProfiles = "SRTP_AEAD_AES_128_GCM:SRTP_AES128_CM_SHA1_80"

    public init(certificate: DTLSCertificate) throws(DTLSError) {
        ERR_clear_error()
        var key = [UInt8](repeating: 0, count: 32)
        guard RAND_bytes(&key, Int32(key.count)) == 1 else { throw .openSSL("RAND_bytes") }
        cookieKey = key
        guard let context = SSL_CTX_new(DTLS_method()) else { throw .openSSL("SSL_CTX_new(DTLS)") }
        self.context = context
        self.certificate = certificate
        guard cohost_ssl_ctx_set_min_dtls12(context) == 1,
            SSL_CTX_use_certificate(context, certificate.certificate) == 1,
            SSL_CTX_use_PrivateKey(context, certificate.key) == 1,
            SSL_CTX_check_private_key(context) == 1,
            SSL_CTX_set_tlsext_use_srtp(context, Self.srtpProfiles) == 0,
            cohost_ssl_ctx_set_ecdh_auto(context) == 1,
            SSL_CTX_set_cipher_list(context, "ECDHE+AESGCM:ECDHE+CHACHA20:ECDHE+AES") == 1
        else {
            SSL_CTX_free(context)
            throw .openSSL("configuring the DTLS context")
        }
        // The peer's certificate is self-signed by design: accept it here, compare its digest after the handshake.
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT) { _, _ in 1 }
        _ = cohost_ssl_ctx_set_read_ahead(context, 1)
        SSL_CTX_set_cookie_generate_cb(context) { ssl, cookie, length in
            guard let ssl, let cookie, let length, let endpoint = DTLSEndpoint.from(ssl) else { return 0 }
            let mac = endpoint.cookie()
            mac.withUnsafeBufferPointer { cookie.update(from: $0.baseAddress!, count: mac.count) }
            length.pointee = UInt32(mac.count)
            return 1
        }
        SSL_CTX_set_cookie_verify_cb(context) { ssl, cookie, length in
            guard let ssl, let cookie, let endpoint = DTLSEndpoint.from(ssl) else { return 0 }
            let offered = Array(UnsafeBufferPointer(start: cookie, count: Int(length)))
            let expected = endpoint.cookie()
            return !expected.isEmpty && expected == offered ? 1 : 0
        }
    }

    deinit { SSL_CTX_free(context) }

    /// 32 bytes; empty if OpenSSL fails, which no ClientHello's cookie matches (the handshake then fails).
    func cookie(for subject: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length = 0
        let done = EVP_Q_mac(
            nil, "HMAC", nil, "SHA256", nil, cookieKey, cookieKey.count, subject, subject.count, &out, out.count,
            &length)
        return done == nil ? [] : Array(out.prefix(length))
    }
}
