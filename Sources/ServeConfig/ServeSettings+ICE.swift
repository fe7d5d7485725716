import ICE

extension ServeSettings {
    /// ICE-TCP's port, the TURN servers and their shared secret, and the STUN server that tells the public address.
    static func resolveICE(
        _ given: Given, _ refuse: Refusal, into settings: inout ServeSettings
    ) throws(ServeConfigError) {
        let tcp = given.iceTCPPort ?? settings.rtpPort
        guard (0...65_535).contains(tcp) else {
            throw refuse(.iceTCPPort, "must be within 0...65535 (0 = no ICE-TCP), got \(tcp)")
        }
        // The value given last in the user's mind is the one to name: ICE-TCP's own when set, else the other port.
        let implicit = given.iceTCPPort == nil ? " (the rtp_port number, unless ice_tcp_port says otherwise)" : ""
        if tcp != 0 && tcp == settings.rtmpPort {
            throw given.iceTCPPort == nil
                ? refuse(.rtmpPort, "must differ from ice_tcp_port \(tcp)\(implicit): both are TCP ports")
                : refuse(.iceTCPPort, "must differ from rtmp_port (\(tcp)): both are TCP ports")
        }
        if tcp != 0 && tcp == settings.http.port {
            throw given.iceTCPPort == nil
                ? refuse(.http, "must not use ice_tcp_port \(tcp)\(implicit): both are TCP ports")
                : refuse(.iceTCPPort, "must differ from the HTTP port (\(tcp))")
        }
        settings.iceTCPPort = tcp
        for url in given.turnURLs {
            guard let parsed = ICEServerURL(url), parsed.isTURN else {
                throw refuse(
                    .turnURLs,
                    "must hold TURN URIs such as turn:turn.example.com:3478?transport=udp or "
                        + "turns:turn.example.com:443?transport=tcp, got '\(url)'")
            }
        }
        if !given.turnURLs.isEmpty {
            guard let secret = given.turnSecret else {
                throw refuse(.turnSecret, "must be set with turn_urls: it is the TURN server's static-auth-secret")
            }
            guard secret.utf8.count >= 16 else {
                throw refuse(.turnSecret, "must be at least 16 characters (a shared secret that mints credentials)")
            }
        } else if given.turnSecret != nil {
            throw refuse(.turnSecret, "is set but turn_urls is empty: name the TURN servers it is shared with")
        }
        settings.turnURLs = given.turnURLs
        settings.turnSecret = given.turnSecret
        if let stun = given.stunURL {
            guard let parsed = ICEServerURL(stun), parsed.scheme == .stun else {
                throw refuse(.stunURL, "must be a STUN URI such as stun:stun.example.com:3478, got '\(stun)'")
            }
        }
        settings.stunURL = given.stunURL
    }
}
