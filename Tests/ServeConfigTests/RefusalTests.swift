import Foundation
import Testing
@testable import ServeConfig

/// The message `body` throws, or nil when it does not throw.
func refusal(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch let error as ServeConfigError {
        return error.message
    } catch {
        return "not a ServeConfigError: \(error)"
    }
}

func resolve(flags: ServeFlags = ServeFlags(), env: [String: String] = [:], toml: String? = nil) -> String? {
    refusal {
        let file = try toml.map { try ConfigFile.parse($0, path: "cohost.toml") }
        _ = try ServeSettings.resolve(flags: flags, env: env, file: file)
    }
}

@Suite struct UnknownKeyAndTypeTests {
    static let known =
        "known keys: http, rtp_port, public_ip, keys, keys_file, auto_create_rooms, max_token_ttl, recordings_dir, output_hosts, "
        + "metrics_token, max_connections, participant_timeout, empty_room_timeout, decode_budget_ms, webhook_url, webhook_secret, log_level, "
        + "cors_origins, dtls_cert, dtls_key, public_ip6, web_dir, tls_cert, tls_key, data_dir, store, node_id, node_url, node_timeout, "
        + "media_dir, max_sources, max_sources_per_room, srt_port, rtmp_port, max_viewers, ice_tcp_port, turn_urls, "
        + "turn_secret, stun_url, max_connections_per_address, recordings_max_bytes, webhook_hosts, cluster_secret, cluster_hosts, recordings_room_max_bytes"

    @Test func anUnknownKeyIsRefusedWithItsNameAndLine() {
        #expect(
            resolve(toml: "http = \"127.0.0.1:7880\"\n\n  rtp_prot = 7000\n")
                == "unknown key 'rtp_prot' in config file cohost.toml (line 3); \(Self.known)")
    }

    @Test func theFirstUnknownKeyByLineIsTheOneReported() {
        #expect(
            resolve(toml: "zeta = 1\nalpha = 2\n")
                == "unknown key 'zeta' in config file cohost.toml (line 1); \(Self.known)")
    }

    @Test func anUnknownTableIsRefusedByItsHeaderLine() {
        #expect(
            resolve(toml: "rtp_port = 7000\n\n[server]\nhttp = \"0.0.0.0:80\"\n")
                == "unknown key 'server' in config file cohost.toml (line 3); \(Self.known)")
    }

    @Test func anUnknownDottedKeyIsRefusedByItsFirstPart() {
        #expect(
            resolve(toml: "rtp_port = 7000\nserver.port = 80\n")
                == "unknown key 'server' in config file cohost.toml (line 2); \(Self.known)")
    }

    @Test func aDottedKeyUnderAKnownNameIsATypeError() {
        #expect(
            resolve(toml: "http.port = 80\n")
                == "'http' in config file cohost.toml (line 1) must be a string, found table")
    }

    @Test func aStringWhereAnIntegerBelongsIsATypeErrorNamingTheKey() {
        #expect(
            resolve(toml: "rtp_port = \"7000\"\n")
                == "'rtp_port' in config file cohost.toml (line 1) must be an integer, found string")
    }

    @Test func anIntegerWhereAStringBelongsIsATypeErrorNamingTheKey() {
        #expect(
            resolve(toml: "\n\nhttp = 7880\n")
                == "'http' in config file cohost.toml (line 3) must be a string, found integer")
    }

    @Test func floatsAndBooleansAreTypeErrors() {
        #expect(
            resolve(toml: "participant_timeout = 2.5\n")
                == "'participant_timeout' in config file cohost.toml (line 1) must be an integer, found float")
        #expect(
            resolve(toml: "log_level = true\n")
                == "'log_level' in config file cohost.toml (line 1) must be a string, found boolean")
    }

    @Test func aWebhookListMustBeAnArrayOfStrings() {
        #expect(
            resolve(toml: "webhook_url = \"http://a.example/\"\n")
                == "'webhook_url' in config file cohost.toml (line 1) must be an array of strings, found string")
        #expect(
            resolve(toml: "webhook_url = [\"http://a.example/\", 3]\n")
                == "'webhook_url' in config file cohost.toml (line 1) must be an array of strings, found an item of type integer"
        )
    }

    @Test func aNonIntegerEnvironmentValueIsRefused() {
        #expect(
            resolve(env: ["COHOST_EMPTY_ROOM_TIMEOUT": "5m"])
                == "environment variable COHOST_EMPTY_ROOM_TIMEOUT must be an integer, got '5m'")
    }

    @Test func aTypeErrorInALowerSourceIsIgnoredWhenAHigherOneWins() {
        #expect(resolve(env: ["COHOST_RTP_PORT": "7000"], toml: "rtp_port = \"x\"\n") == nil)
    }

    @Test func aTOMLSyntaxErrorNamesTheFileAndLine() {
        #expect(
            resolve(toml: "rtp_port = 7000\nhttp = \n")
                == "config file cohost.toml line 2, column 8: expected a value, found a line feed")
    }

    @Test func aDuplicateKeyIsASyntaxError() {
        #expect(
            resolve(toml: "rtp_port = 7000\nrtp_port = 7001\n")
                == "config file cohost.toml line 2, column 1: 'rtp_port' is defined twice")
    }

    @Test func aNULByteIsRefusedRatherThanEndingTheDocumentEarly() {
        #expect(
            resolve(toml: "rtp_port = 7000\n\u{0}rtp_prot = 1\n")
                == "config file cohost.toml line 2, column 1: expected a key, found byte 0x0")
    }
}

@Suite struct BadValueTests {
    @Test func aBadPortIsRefusedNamingTheFlag() {
        #expect(
            resolve(flags: ServeFlags(rtpPort: 65535))
                == "--rtp-port must be within 1...65534 (RTCP uses the port above), got 65535")
    }

    @Test func theSRTPortIsNeitherTheMediaPortNorItsRTCPPort() {
        #expect(
            resolve(flags: ServeFlags(rtpPort: 9000, srtPort: 9001))
                == "--srt-port must not be the media port or the one above it (RTCP), got 9001")
        #expect(
            resolve(flags: ServeFlags(srtPort: 70000)) == "--srt-port must be within 0...65535 (0: none), got 70000")
        #expect(
            resolve(flags: ServeFlags(http: "127.0.0.1:8000", rtmpPort: 8000))
                == "--rtmp-port must not be the HTTP port, got 8000")
    }

    @Test func aBadPortIsRefusedNamingTheEnvironmentVariable() {
        #expect(
            resolve(env: ["COHOST_RTP_PORT": "0"])
                == "environment variable COHOST_RTP_PORT must be within 1...65534 (RTCP uses the port above), got 0")
    }

    @Test func aBadPortIsRefusedNamingTheFileKeyAndLine() {
        #expect(
            resolve(toml: "# media\nrtp_port = 70000\n")
                == "'rtp_port' in config file cohost.toml (line 2) must be within 1...65534 (RTCP uses the port above), got 70000"
        )
    }

    @Test func aBadHTTPListenerIsRefusedFromEachSource() {
        #expect(
            resolve(flags: ServeFlags(http: "7880")) == "--http must be HOST:PORT with a port in 1...65535, got '7880'")
        #expect(
            resolve(env: ["COHOST_HTTP": "host:0"])
                == "environment variable COHOST_HTTP must be HOST:PORT with a port in 1...65535, got 'host:0'")
        #expect(
            resolve(toml: "http = \":80\"\n")
                == "'http' in config file cohost.toml (line 1) must be HOST:PORT with a port in 1...65535, got ':80'")
    }

    @Test func aBadPublicIPIsRefusedFromEachSource() {
        #expect(
            resolve(flags: ServeFlags(publicIP: "example.com"))
                == "--public-ip must be an IPv4 address, got 'example.com'")
        #expect(
            resolve(env: ["COHOST_PUBLIC_IP": "1.2.3.256"])
                == "environment variable COHOST_PUBLIC_IP must be an IPv4 address, got '1.2.3.256'")
        #expect(
            resolve(toml: "public_ip = \"1.2.3\"\n")
                == "'public_ip' in config file cohost.toml (line 1) must be an IPv4 address, got '1.2.3'")
    }

    @Test func badTimeoutsAreRefusedFromEachSource() {
        #expect(
            resolve(flags: ServeFlags(participantTimeout: 0))
                == "--participant-timeout must be within 1...3600 s, got 0")
        #expect(
            resolve(env: ["COHOST_PARTICIPANT_TIMEOUT": "3601"])
                == "environment variable COHOST_PARTICIPANT_TIMEOUT must be within 1...3600 s, got 3601")
        #expect(
            resolve(toml: "empty_room_timeout = -1\n")
                == "'empty_room_timeout' in config file cohost.toml (line 1) must be within 0...86400 s (0 = never), got -1"
        )
        #expect(
            resolve(flags: ServeFlags(emptyRoomTimeout: 86_401))
                == "--empty-room-timeout must be within 0...86400 s (0 = never), got 86401")
        #expect(
            resolve(flags: ServeFlags(decodeBudgetMs: 5))
                == "--decode-budget-ms must be within 10...4000 ms of decoding a second, got 5")
        #expect(
            resolve(env: ["COHOST_MAX_CONNECTIONS": "8"])
                == "environment variable COHOST_MAX_CONNECTIONS must be within 16...65536, got 8")
    }

    @Test func aBadLogLevelIsRefusedFromEachSource() {
        let levels = "must be one of trace, debug, info, notice, warning, error, critical"
        #expect(resolve(flags: ServeFlags(logLevel: "verbose")) == "--log-level \(levels), got 'verbose'")
        #expect(
            resolve(env: ["COHOST_LOG_LEVEL": "INFO"]) == "environment variable COHOST_LOG_LEVEL \(levels), got 'INFO'")
        #expect(
            resolve(toml: "log_level = \"warn\"\n")
                == "'log_level' in config file cohost.toml (line 1) \(levels), got 'warn'")
    }

    @Test func aBadWebhookURLIsRefusedFromEachSource() {
        let rule = "must be an absolute http:// or https:// URL with a host, got"
        #expect(
            resolve(flags: ServeFlags(webhookURLs: ["ftp://a.example/"])) == "--webhook-url \(rule) 'ftp://a.example/'")
        #expect(
            resolve(env: ["COHOST_WEBHOOK_URL": "http://a.example/,/relative"])
                == "environment variable COHOST_WEBHOOK_URL \(rule) '/relative'")
        #expect(
            resolve(toml: "webhook_url = [\"http://\"]\n")
                == "'webhook_url' in config file cohost.toml (line 1) \(rule) 'http://'")
    }

    @Test func aWebhookSecretWithoutAnyURLIsRefusedNamingItsSource() {
        let secret = String(repeating: "w", count: 32)
        let rule = "needs at least one webhook URL (--webhook-url, COHOST_WEBHOOK_URL or webhook_url)"
        #expect(resolve(flags: ServeFlags(webhookSecret: secret)) == "--webhook-secret \(rule)")
        #expect(
            resolve(env: ["COHOST_WEBHOOK_SECRET": secret]) == "environment variable COHOST_WEBHOOK_SECRET \(rule)")
        #expect(
            resolve(toml: "webhook_secret = \"\(secret)\"\n")
                == "'webhook_secret' in config file cohost.toml (line 1) \(rule)")
    }

    @Test func webhooksNeedASecretOfTheirOwnStrongEnough() {
        let urls = ["https://hooks.example/cohost"]
        #expect(
            resolve(flags: ServeFlags(webhookURLs: urls))
                == "the built-in default of --webhook-secret must be set with webhook_url: deliveries are signed with "
                + "it, never with an API key's secret (e.g. openssl rand -hex 32)")
        #expect(
            resolve(flags: ServeFlags(webhookURLs: urls, webhookSecret: "short"))
                == "--webhook-secret has 5 bytes; at least 32 are needed (e.g. openssl rand -hex 32)")
        #expect(
            resolve(flags: ServeFlags(webhookURLs: urls, webhookSecret: "change-me-to-a-long-random-secret"))
                == "--webhook-secret is an example printed in Cohost's repository: generate one (e.g. openssl rand "
                + "-hex 32)")
        #expect(resolve(flags: ServeFlags(webhookURLs: urls, webhookSecret: String(repeating: "w", count: 32))) == nil)
        // The setting it replaces is refused by name, not ignored.
        #expect(
            resolve(toml: "webhook_key = \"k1\"\n")
                == "'webhook_key' in config file cohost.toml (line 1) is not read any more: webhooks are signed with "
                + "webhook_secret, a secret of their own, never an API key's")
    }

    @Test func aBadFileValueIsAcceptedWhenAHigherSourceOverridesIt() {
        #expect(resolve(flags: ServeFlags(rtpPort: 7000), toml: "rtp_port = 70000\n") == nil)
    }
}

@Suite struct WebRTCSettingTests {
    @Test func corsOriginsMustBeOriginsOrAStar() throws {
        let ok = try ServeSettings.resolve(
            flags: ServeFlags(corsOrigins: ["https://show.example", "http://127.0.0.1:8080", "*"]), env: [:], file: nil)
        #expect(ok.corsOrigins == ["https://show.example", "http://127.0.0.1:8080", "*"])
        for bad in ["show.example", "https://show.example/", "ftp://x", "https://a.example/page?x"] {
            #expect(throws: ServeConfigError.self) {
                try ServeSettings.resolve(flags: ServeFlags(corsOrigins: [bad]), env: [:], file: nil)
            }
        }
    }

    @Test func publicIP6MustBeAnIPv6Address() throws {
        #expect(try ServeSettings.resolve(flags: ServeFlags(publicIP6: "::1"), env: [:], file: nil).publicIP6 == "::1")
        for bad in ["10.0.0.1", "2001:db8::1%eth0", "host.example", "2001:db8:::1"] {
            #expect(throws: ServeConfigError.self) {
                try ServeSettings.resolve(flags: ServeFlags(publicIP6: bad), env: [:], file: nil)
            }
        }
    }

    @Test func aTLSCertificateNeedsItsKey() {
        #expect(throws: ServeConfigError.self) {
            try ServeSettings.resolve(flags: ServeFlags(tlsCert: "/c.pem"), env: [:], file: nil)
        }
        #expect(throws: ServeConfigError.self) {
            try ServeSettings.resolve(flags: ServeFlags(tlsKey: "/k.pem"), env: [:], file: nil)
        }
    }

    @Test func theStoreIsSQLiteAFilePostgresOrNoneAndANodeIsNamedProperly() throws {
        let secret = "cluster-0123456789abcdef0123456789abcdef"
        #expect(
            try ServeSettings.resolve(
                flags: ServeFlags(store: "postgres://db.example/cohost", clusterSecret: secret), env: [:], file: nil
            ).storeLocation == .postgres(url: "postgres://db.example/cohost"))
        // A cluster's nodes sign what they forward: no secret, or a weak one, and the node does not start.
        #expect(
            resolve(flags: ServeFlags(store: "postgres://db.example/cohost"))
                == "--store makes this server a cluster node, which needs cluster_secret (the same on every node, at "
                + "least 32 bytes: openssl rand -hex 32)")
        #expect(
            resolve(flags: ServeFlags(store: "postgres://db.example/cohost", clusterSecret: "short"))?.hasPrefix(
                "--cluster-secret has 5 bytes") == true)
        #expect(
            resolve(env: ["COHOST_STORE": "redis://x"])
                == "environment variable COHOST_STORE must be sqlite, sqlite:PATH, postgres://… or none, got 'redis://x'"
        )
        #expect(
            resolve(flags: ServeFlags(nodeID: "a b")) == "--node-id must be 1…64 of [A-Za-z0-9_.-], got 'a b'")
        #expect(
            resolve(flags: ServeFlags(nodeURL: "http://h:1/api"))
                == "--node-url must be http(s)://host[:port] with nothing after it, got 'http://h:1/api'")
        #expect(resolve(flags: ServeFlags(nodeTimeout: 2)) == "--node-timeout must be within 3...600 s, got 2")
        #expect(
            resolve(toml: "store = \"sqlite:\"\n")
                == "'store' in config file cohost.toml (line 1) must be sqlite, sqlite:PATH, postgres://… or none, got 'sqlite:'"
        )
        #expect(resolve(flags: ServeFlags(dataDir: "")) != nil)
        let defaults = try ServeSettings.resolve(flags: ServeFlags(), env: [:], file: nil)
        #expect(defaults.storeLocation == .sqlite(path: "./data/cohost.db"))
    }

    @Test func aDTLSCertificateNeedsItsKey() {
        #expect(throws: ServeConfigError.self) {
            try ServeSettings.resolve(flags: ServeFlags(dtlsCert: "/c.pem"), env: [:], file: nil)
        }
        #expect(throws: ServeConfigError.self) {
            try ServeSettings.resolve(flags: ServeFlags(dtlsKey: "/k.pem"), env: [:], file: nil)
        }
    }
}
