import RTP

extension JoinNegotiator {
    /// The ICE and DTLS parameters of a WebRTC offer (an m= line in UDP/TLS/RTP/SAVPF, RFC 8843), nil for other
    /// offers. Every line must share one ICE ufrag, password and fingerprint (BUNDLE: one transport); plain RTP and
    /// WebRTC lines do not mix.
    static func webRTCParameters<R: RandomNumberGenerator>(
        of offer: SessionDescription, identity: WebRTCIdentity?, using random: inout R
    ) throws(RoomError) -> WebRTCParameters? {
        let live = offer.media.filter { $0.port != 0 }
        let secure = live.filter { $0.proto.uppercased().contains("TLS") }
        guard let first = secure.first else { return nil }
        guard identity != nil else {
            throw RoomError(
                .unsupported, "unsupported_transport",
                "m=\(first.rawKind) is \(first.proto): this server has no DTLS certificate for WebRTC")
        }
        guard secure.count == live.count else {
            throw .badRequest("invalid_sdp", "WebRTC (UDP/TLS/RTP/SAVPF) and plain RTP lines cannot be mixed")
        }
        guard first.proto.uppercased() == "UDP/TLS/RTP/SAVPF" || first.proto.uppercased() == "UDP/TLS/RTP/SAVP" else {
            throw RoomError(
                .unsupported, "unsupported_transport",
                "m=\(first.rawKind) is \(first.proto): Cohost takes WebRTC over UDP (UDP/TLS/RTP/SAVPF)")
        }
        guard let ufrag = first.iceUfrag, let password = first.icePassword else {
            throw .badRequest("invalid_sdp", "a WebRTC offer needs a=ice-ufrag and a=ice-pwd")
        }
        guard let fingerprint = first.fingerprint else {
            throw .badRequest("invalid_sdp", "a WebRTC offer needs a=fingerprint (DTLS-SRTP)")
        }
        // SHA-1 is refused: a certificate made to collide with the peer's fingerprint would pass the check.
        guard ["sha-256", "sha-384", "sha-512"].contains(fingerprint.algorithm) else {
            throw .badRequest(
                "invalid_sdp",
                "a=fingerprint uses \(fingerprint.algorithm); Cohost checks sha-256, sha-384 or sha-512")
        }
        for media in secure.dropFirst()
        where media.iceUfrag != ufrag || media.icePassword != password || media.fingerprint != fingerprint {
            throw .badRequest(
                "invalid_sdp", "every line must share one ICE ufrag, password and fingerprint (a=group:BUNDLE)")
        }
        let setup = first.setup ?? "actpass"
        guard setup != "holdconn" else { throw .badRequest("invalid_sdp", "a=setup:holdconn: no DTLS to set up") }
        var kinds: [String: NegotiatedStream.Kind] = [:]
        for media in secure {
            guard let mid = media.mid, let kind = media.kind else { continue }
            kinds[mid] = kind == .audio ? .audio : .video
        }
        let localUfrag = randomICEString(8, using: &random)
        let localPassword = randomICEString(24, using: &random)
        return WebRTCParameters(
            localUfrag: localUfrag, localPassword: localPassword, remoteUfrag: ufrag,
            remotePassword: password, fingerprint: fingerprint, dtlsServer: setup != "passive",
            midExtension: first.extensions[midExtensionURI], midKinds: kinds)
    }
}
