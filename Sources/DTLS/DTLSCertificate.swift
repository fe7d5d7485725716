import COpenSSL

/// Cohost's DTLS identity: an ECDSA P-256 key and a self-signed certificate (RFC 8827 §6.5: WebRTC peers check the
/// certificate against the SDP fingerprint, not a CA). Made at start, or loaded from PEM files. Immutable after
/// creation; OpenSSL only reads the handles, so one certificate serves every context and thread.
public final class DTLSCertificate: @unchecked Sendable {
    let key: OpaquePointer
    let certificate: OpaquePointer
    /// SHA-256 of the certificate's DER encoding (the answer's `a=fingerprint:sha-256`).
    public let sha256: [UInt8]

    /// A fresh key and certificate, valid from a day ago for a year (clock skew on the peer's side).
    public static func generate(commonName: String = "cohost") throws(DTLSError) -> DTLSCertificate {
        ERR_clear_error()
        guard let key = cohost_ec_p256_key() else { throw .openSSL("EC P-256 key generation") }
        guard let x509 = X509_new() else {
            EVP_PKEY_free(key)
            throw .openSSL("X509_new")
        }
        var ok = X509_set_version(x509, 2) == 1
        var serial = [UInt8](repeating: 0, count: 8)
        _ = RAND_bytes(&serial, Int32(serial.count))
        let serialNumber = serial.reduce(0) { $0 << 8 | Int($1) } & Int(Int32.max)
        ok = ok && ASN1_INTEGER_set(X509_get_serialNumber(x509), serialNumber) == 1
        ok = ok && X509_gmtime_adj(X509_getm_notBefore(x509), -86_400) != nil
        ok = ok && X509_gmtime_adj(X509_getm_notAfter(x509), 365 * 86_400) != nil
        ok = ok && X509_set_pubkey(x509, key) == 1
        if ok, let name = X509_get_subject_name(x509) {
            ok = X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, commonName, -1, -1, 0) == 1
            ok = ok && X509_set_issuer_name(x509, name) == 1
        } else {
            ok = false
        }
        ok = ok && X509_sign(x509, key, EVP_sha256()) > 0
        guard ok else {
            X509_free(x509)
            EVP_PKEY_free(key)
            throw .openSSL("self-signed certificate")
        }
        return try DTLSCertificate(key: key, certificate: x509)
    }

    /// A certificate and its private key from PEM text (the `--dtls-cert` / `--dtls-key` files).
    public convenience init(certificatePEM: String, keyPEM: String) throws(DTLSError) {
        ERR_clear_error()
        guard let x509 = Self.readPEM(certificatePEM, { PEM_read_bio_X509($0, nil, nil, nil) }) else {
            throw .openSSL("reading the DTLS certificate (PEM)")
        }
        guard let key = Self.readPEM(keyPEM, { PEM_read_bio_PrivateKey($0, nil, nil, nil) }) else {
            X509_free(x509)
            throw .openSSL("reading the DTLS private key (PEM)")
        }
        guard X509_check_private_key(x509, key) == 1 else {
            X509_free(x509)
            EVP_PKEY_free(key)
            throw .openSSL("the DTLS private key does not match the certificate")
        }
        try self.init(key: key, certificate: x509)
    }

    private init(key: OpaquePointer, certificate: OpaquePointer) throws(DTLSError) {
        guard let digest = Self.digest(of: certificate, algorithm: "sha-256") else {
            X509_free(certificate)
            EVP_PKEY_free(key)
            throw .openSSL("certificate digest")
        }
        self.key = key
        self.certificate = certificate
        self.sha256 = digest
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(key)
    }

    /// `sha-256 AB:CD:…`, the value of an SDP `a=fingerprint` (RFC 8122 §5).
    public var fingerprintAttribute: String { "sha-256 " + Self.hexPairs(sha256) }

    /// The certificate and its private key as PEM text (to keep a generated identity across restarts).
    public func pem() throws(DTLSError) -> (certificate: String, key: String) {
        ERR_clear_error()
        guard let certificate = Self.writePEM({ PEM_write_bio_X509($0, self.certificate) }),
            let key = Self.writePEM({ PEM_write_bio_PrivateKey($0, self.key, nil, nil, 0, nil, nil) })
        else { throw .openSSL("writing PEM") }
        return (certificate, key)
    }

    private static func writePEM(_ write: (OpaquePointer) -> Int32) -> String? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { return nil }
        let pending = Int(BIO_ctrl_pending(bio))
        var bytes = [UInt8](repeating: 0, count: pending)
        let read = bytes.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32(pending)) }
        guard read == Int32(pending) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func hexPairs(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF")
        return bytes.map { String([digits[Int($0 >> 4)], digits[Int($0 & 15)]]) }.joined(separator: ":")
    }

    /// The digest SDP names `algorithm` (`sha-1`, `sha-256`, `sha-384`, `sha-512`) of a certificate's DER; nil for
    /// other names.
    static func digest(of certificate: OpaquePointer, algorithm: String) -> [UInt8]? {
        let md: OpaquePointer?
        switch algorithm {
        case "sha-1": md = EVP_sha1()
        case "sha-256": md = EVP_sha256()
        case "sha-384": md = EVP_sha384()
        case "sha-512": md = EVP_sha512()
        default: return nil
        }
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, md, &out, &length) == 1 else { return nil }
        return Array(out.prefix(Int(length)))
    }

    private static func readPEM(
        _ text: String,
        _ read: (OpaquePointer) -> OpaquePointer?
    ) -> OpaquePointer? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return read(bio)
        }
    }
}
