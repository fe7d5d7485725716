import Testing
@testable import ServeConfig

/// ICE-TCP's port, the TURN servers with their secret, and the STUN server: defaults, sources and refusals.
@Suite struct ICESettingsTests {
    static let secret = "0123456789abcdef-turn"

    @Test func iceTCPDefaultsToTheMediaPortsNumberAndZeroTurnsItOff() throws {
        #expect(try ServeSettings.resolve(flags: ServeFlags(), env: [:], file: nil).iceTCPPort == 7882)
        #expect(try ServeSettings.resolve(flags: ServeFlags(rtpPort: 9000), env: [:], file: nil).iceTCPPort == 9000)
        let off = try ServeSettings.resolve(flags: ServeFlags(), env: ["COHOST_ICE_TCP_PORT": "0"], file: nil)
        #expect(off.iceTCPPort == 0)
    }

    @Test func turnServersComeWithTheirSecretFromEverySource() throws {
        let env = try ServeSettings.resolve(
            flags: ServeFlags(),
            env: [
                "COHOST_TURN_URLS": "turn:a.example:3478?transport=udp,turns:a.example:443",
                "COHOST_TURN_SECRET": Self.secret,
            ], file: nil)
        #expect(env.turnURLs == ["turn:a.example:3478?transport=udp", "turns:a.example:443"])
        #expect(env.turnSecret == Self.secret)
        let file = try ConfigFile.parse(
            "turn_urls = [\"turn:b.example\"]\nturn_secret = \"\(Self.secret)\"\nstun_url = \"stun:b.example:3478\"\n",
            path: "cohost.toml")
        let fromFile = try ServeSettings.resolve(flags: ServeFlags(), env: [:], file: file)
        #expect(fromFile.turnURLs == ["turn:b.example"] && fromFile.stunURL == "stun:b.example:3478")
    }

    @Test func malformedOrUnpairedValuesAreRefusedNamingTheirSource() {
        #expect(
            resolve(flags: ServeFlags(iceTCPPort: 70_000))
                == "--ice-tcp-port must be within 0...65535 (0 = no ICE-TCP), got 70000")
        #expect(
            resolve(flags: ServeFlags(rtmpPort: 7882))
                == "--rtmp-port must differ from ice_tcp_port 7882 (the rtp_port number, unless ice_tcp_port says "
                + "otherwise): both are TCP ports")
        #expect(
            resolve(flags: ServeFlags(rtmpPort: 9000, iceTCPPort: 9000))
                == "--ice-tcp-port must differ from rtmp_port (9000): both are TCP ports")
        #expect(
            resolve(env: ["COHOST_HTTP": "127.0.0.1:7882"])
                == "environment variable COHOST_HTTP must not use ice_tcp_port 7882 (the rtp_port number, unless "
                + "ice_tcp_port says otherwise): both are TCP ports")
        #expect(
            resolve(env: ["COHOST_TURN_URLS": "http://turn.example.com"])?.hasPrefix(
                "environment variable COHOST_TURN_URLS must hold TURN URIs such as") == true)
        #expect(
            resolve(flags: ServeFlags(turnURLs: ["turn:t.example"]))
                == "the built-in default of --turn-secret must be set with turn_urls: it is the TURN server's static-auth-secret"
        )
        #expect(
            resolve(flags: ServeFlags(turnURLs: ["turn:t.example"], turnSecret: "short"))
                == "--turn-secret must be at least 16 characters (a shared secret that mints credentials)")
        #expect(
            resolve(flags: ServeFlags(turnSecret: Self.secret))
                == "--turn-secret is set but turn_urls is empty: name the TURN servers it is shared with")
        #expect(
            resolve(flags: ServeFlags(stunURL: "turn:t.example"))
                == "--stun-url must be a STUN URI such as stun:stun.example.com:3478, got 'turn:t.example'")
    }
}
