import Testing
import Logging
@testable import ServeConfig

/// Every key given in every source, each source with its own values, so each winner is visible. All but
/// `keys_file`, which may not be given with `keys` (`keysFileTakesTheSamePrecedence` covers it).
enum Fixture {
    /// The keys the fixture gives, in declaration order (the file's lines 2... in this order).
    static let keys = SettingKey.allCases.filter { $0 != .keysFile }

    static let flags = ServeFlags(
        http: "0.0.0.0:8001", rtpPort: 9001, publicIP: "10.0.0.1", keys: "flag:s1", autoCreateRooms: true,
        maxTokenTTL: 101, recordingsDir: "/flag/rec", outputHosts: ["flag.example"],
        metricsToken: "flag-metrics-token", maxConnections: 101, participantTimeout: 11,
        emptyRoomTimeout: 12, decodeBudgetMs: 101, webhookURLs: ["http://flag.example/hook"],
        webhookSecret: "flag-webhook-secret-0123456789abcd",
        logLevel: "debug", corsOrigins: ["https://flag.example"], dtlsCert: "/flag/cert.pem", dtlsKey: "/flag/key.pem",
        publicIP6: "2001:db8::1", webDir: "/flag/web", tlsCert: "/flag/tls.crt", tlsKey: "/flag/tls.key",
        dataDir: "/flag/data", store: "none", nodeID: "flag-node", nodeURL: "http://10.0.0.1:8001", nodeTimeout: 11,
        mediaDir: "/flag/media", maxSources: 11, maxSourcesPerRoom: 1, srtPort: 9101, rtmpPort: 9201, maxViewers: 11,
        iceTCPPort: 9301, turnURLs: ["turn:flag.example"], turnSecret: "flag-turn-secret-0000",
        stunURL: "stun:flag.example", maxConnectionsPerAddress: 31,
        recordingsMaxBytes: 1_000_001_000, webhookHosts: ["flag.example"],
        clusterSecret: "flag-cluster-secret-0123456789abcdef", clusterHosts: ["flag.example"],
        recordingsRoomMaxBytes: 100_001)

    static let env = [
        "COHOST_HTTP": "0.0.0.0:8002", "COHOST_RTP_PORT": "9002", "COHOST_PUBLIC_IP": "10.0.0.2",
        "COHOST_KEYS": "env:s2", "COHOST_AUTO_CREATE_ROOMS": "false", "COHOST_MAX_TOKEN_TTL": "102",
        "COHOST_RECORDINGS_DIR": "/env/rec", "COHOST_OUTPUT_HOSTS": "env.example, 10.2.0.0/16",
        "COHOST_METRICS_TOKEN": "env-metrics-token-", "COHOST_MAX_CONNECTIONS": "202",
        "COHOST_PARTICIPANT_TIMEOUT": "21", "COHOST_EMPTY_ROOM_TIMEOUT": "22", "COHOST_DECODE_BUDGET_MS": "202",
        "COHOST_WEBHOOK_URL": "http://env.example/a, https://env.example/b",
        "COHOST_WEBHOOK_SECRET": "env-webhook-secret-0123456789abcde",
        "COHOST_LOG_LEVEL": "warning", "COHOST_CORS_ORIGINS": "https://env.example, http://127.0.0.1:8080",
        "COHOST_DTLS_CERT": "/env/cert.pem", "COHOST_DTLS_KEY": "/env/key.pem", "COHOST_PUBLIC_IP6": "2001:db8::2",
        "COHOST_WEB_DIR": "/env/web", "COHOST_TLS_CERT": "/env/tls.crt", "COHOST_TLS_KEY": "/env/tls.key",
        "COHOST_DATA_DIR": "/env/data", "COHOST_STORE": "sqlite:/env/rooms.db", "COHOST_NODE_ID": "env-node",
        "COHOST_NODE_URL": "http://10.0.0.2:8002", "COHOST_NODE_TIMEOUT": "22", "COHOST_MEDIA_DIR": "/env/media",
        "COHOST_MAX_SOURCES": "22", "COHOST_MAX_SOURCES_PER_ROOM": "2", "COHOST_SRT_PORT": "9102",
        "COHOST_RTMP_PORT": "9202",
        "COHOST_MAX_VIEWERS": "12", "COHOST_ICE_TCP_PORT": "9302", "COHOST_TURN_URLS": "turn:env.example",
        "COHOST_TURN_SECRET": "env-turn-secret-00000", "COHOST_STUN_URL": "stun:env.example",
        "COHOST_MAX_CONNECTIONS_PER_ADDRESS": "32", "COHOST_RECORDINGS_MAX_BYTES": "1000002000",
        "COHOST_WEBHOOK_HOSTS": "env.example, 10.3.0.0/16",
        "COHOST_CLUSTER_SECRET": "env-cluster-secret-0123456789abcdef0", "COHOST_CLUSTER_HOSTS": "env.example",
        "COHOST_RECORDINGS_ROOM_MAX_BYTES": "100002",
    ]

    static let fileText = """
        # every key
        http = "0.0.0.0:8003"
        rtp_port = 9003
        public_ip = "10.0.0.3"
        keys = "file:s3"
        auto_create_rooms = true
        max_token_ttl = 103
        recordings_dir = "/file/rec"
        output_hosts = ["file.example"]
        metrics_token = "file-metrics-token"
        max_connections = 303
        participant_timeout = 31
        empty_room_timeout = 32
        decode_budget_ms = 303
        webhook_url = ["http://file.example/hook"]
        webhook_secret = "file-webhook-secret-0123456789abcd"
        log_level = "error"
        cors_origins = ["https://file.example"]
        dtls_cert = "/file/cert.pem"
        dtls_key = "/file/key.pem"
        public_ip6 = "2001:db8::3"
        web_dir = "/file/web"
        tls_cert = "/file/tls.crt"
        tls_key = "/file/tls.key"
        data_dir = "/file/data"
        store = "sqlite"
        node_id = "file-node"
        node_url = "https://node3.example"
        node_timeout = 33
        media_dir = "/file/media"
        max_sources = 33
        max_sources_per_room = 3
        srt_port = 9103
        rtmp_port = 9203
        max_viewers = 13
        ice_tcp_port = 9303
        turn_urls = ["turn:file.example"]
        turn_secret = "file-turn-secret-0000"
        stun_url = "stun:file.example"
        max_connections_per_address = 33
        recordings_max_bytes = 1000003000
        webhook_hosts = ["file.example"]
        cluster_secret = "file-cluster-secret-0123456789abcdef"
        cluster_hosts = ["file.example"]
        recordings_room_max_bytes = 100003
        """

    static func file() throws -> ConfigFile { try ConfigFile.parse(fileText, path: "/etc/cohost/cohost.toml") }
}

@Suite struct PrecedenceTests {
    @Test func aFlagBeatsTheEnvironmentAndTheFileForEveryKey() throws {
        let s = try ServeSettings.resolve(flags: Fixture.flags, env: Fixture.env, file: try Fixture.file())
        #expect(s.http == HostPort("0.0.0.0:8001"))
        #expect(s.rtpPort == 9001)
        #expect(s.publicIP == "10.0.0.1")
        #expect(s.keys == "flag:s1")
        #expect(s.participantTimeout == 11)
        #expect(s.emptyRoomTimeout == 12)
        #expect(s.decodeBudgetMs == 101)
        #expect(s.webhookURLs == ["http://flag.example/hook"])
        #expect(s.webhookSecret == "flag-webhook-secret-0123456789abcd")
        #expect(s.logLevel == .debug)
        #expect(s.corsOrigins == ["https://flag.example"] && s.dtlsCert == "/flag/cert.pem")
        #expect(s.publicIP6 == "2001:db8::1" && s.webDir == "/flag/web" && s.tlsCert == "/flag/tls.crt")
        #expect(s.dataDir == "/flag/data" && s.store == "none" && s.storeLocation == nil)
        #expect(s.nodeID == "flag-node" && s.nodeURL == "http://10.0.0.1:8001" && s.nodeTimeout == 11)
        #expect(s.autoCreateRooms == true && s.maxTokenTTL == 101 && s.recordingsDir == "/flag/rec")
        #expect(s.outputHosts == ["flag.example"] && s.metricsToken == "flag-metrics-token" && s.maxConnections == 101)
        #expect(
            s.mediaDir == "/flag/media" && s.maxSources == 11 && s.maxSourcesPerRoom == 1 && s.srtPort == 9101
                && s.rtmpPort == 9201 && s.maxViewers == 11)
        #expect(
            s.iceTCPPort == 9301 && s.turnURLs == ["turn:flag.example"] && s.turnSecret == "flag-turn-secret-0000"
                && s.stunURL == "stun:flag.example" && s.maxConnectionsPerAddress == 31
                && s.recordingsMaxBytes == 1_000_001_000 && s.webhookHosts == ["flag.example"]
                && s.clusterSecret == "flag-cluster-secret-0123456789abcdef" && s.clusterHosts == ["flag.example"]
                && s.recordingsRoomMaxBytes == 100_001)
        for key in Fixture.keys { #expect(s.origin(of: key) == .flag(key)) }
    }

    @Test func theEnvironmentBeatsTheFileForEveryKey() throws {
        let s = try ServeSettings.resolve(flags: ServeFlags(), env: Fixture.env, file: try Fixture.file())
        #expect(s.http == HostPort("0.0.0.0:8002"))
        #expect(s.rtpPort == 9002)
        #expect(s.publicIP == "10.0.0.2")
        #expect(s.keys == "env:s2")
        #expect(s.participantTimeout == 21)
        #expect(s.emptyRoomTimeout == 22)
        #expect(s.decodeBudgetMs == 202)
        #expect(s.webhookURLs == ["http://env.example/a", "https://env.example/b"])
        #expect(s.webhookSecret == "env-webhook-secret-0123456789abcde")
        #expect(s.logLevel == .warning)
        #expect(s.autoCreateRooms == false && s.maxTokenTTL == 102 && s.recordingsDir == "/env/rec")
        #expect(s.dataDir == "/env/data" && s.storeLocation == .sqlite(path: "/env/rooms.db"))
        #expect(s.nodeID == "env-node" && s.nodeURL == "http://10.0.0.2:8002" && s.nodeTimeout == 22)
        #expect(
            s.outputHosts == ["env.example", "10.2.0.0/16"] && s.metricsToken == "env-metrics-token-"
                && s.maxConnections == 202)
        #expect(
            s.mediaDir == "/env/media" && s.maxSources == 22 && s.maxSourcesPerRoom == 2 && s.srtPort == 9102
                && s.rtmpPort == 9202 && s.maxViewers == 12)
        #expect(
            s.iceTCPPort == 9302 && s.turnURLs == ["turn:env.example"] && s.turnSecret == "env-turn-secret-00000"
                && s.stunURL == "stun:env.example" && s.maxConnectionsPerAddress == 32
                && s.recordingsMaxBytes == 1_000_002_000 && s.webhookHosts == ["env.example", "10.3.0.0/16"]
                && s.clusterSecret == "env-cluster-secret-0123456789abcdef0" && s.clusterHosts == ["env.example"]
                && s.recordingsRoomMaxBytes == 100_002)
        for key in Fixture.keys { #expect(s.origin(of: key) == .environment(key)) }
    }

    @Test func theFileBeatsTheDefaultsForEveryKeyAndRecordsItsLine() throws {
        let s = try ServeSettings.resolve(flags: ServeFlags(), env: [:], file: try Fixture.file())
        #expect(s.http == HostPort("0.0.0.0:8003"))
        #expect(s.rtpPort == 9003)
        #expect(s.publicIP == "10.0.0.3")
        #expect(s.keys == "file:s3")
        #expect(s.participantTimeout == 31)
        #expect(s.emptyRoomTimeout == 32)
        #expect(s.decodeBudgetMs == 303)
        #expect(s.webhookURLs == ["http://file.example/hook"])
        #expect(s.webhookSecret == "file-webhook-secret-0123456789abcd")
        #expect(s.logLevel == .error)
        #expect(s.autoCreateRooms == true && s.maxTokenTTL == 103 && s.recordingsDir == "/file/rec")
        #expect(s.dataDir == "/file/data" && s.storeLocation == .sqlite(path: "/file/data/cohost.db"))
        #expect(s.nodeID == "file-node" && s.nodeURL == "https://node3.example" && s.nodeTimeout == 33)
        #expect(s.outputHosts == ["file.example"] && s.metricsToken == "file-metrics-token" && s.maxConnections == 303)
        #expect(
            s.mediaDir == "/file/media" && s.maxSources == 33 && s.maxSourcesPerRoom == 3 && s.srtPort == 9103
                && s.rtmpPort == 9203 && s.maxViewers == 13)
        #expect(
            s.iceTCPPort == 9303 && s.turnURLs == ["turn:file.example"] && s.turnSecret == "file-turn-secret-0000"
                && s.stunURL == "stun:file.example" && s.maxConnectionsPerAddress == 33
                && s.recordingsMaxBytes == 1_000_003_000 && s.webhookHosts == ["file.example"]
                && s.clusterSecret == "file-cluster-secret-0123456789abcdef" && s.clusterHosts == ["file.example"]
                && s.recordingsRoomMaxBytes == 100_003)
        // The fixture's keys sit on lines 2... in declaration order.
        for (index, key) in Fixture.keys.enumerated() {
            #expect(s.origin(of: key) == .file(key, path: "/etc/cohost/cohost.toml", line: index + 2))
        }
    }

    @Test func keysFileTakesTheSamePrecedence() throws {
        let file = try ConfigFile.parse("keys_file = \"/file/keys\"\n", path: "c.toml")
        let env = ["COHOST_KEYS_FILE": "/env/keys"]
        #expect(
            try ServeSettings.resolve(flags: ServeFlags(keysFile: "/flag/keys"), env: env, file: file).keysFile
                == "/flag/keys")
        #expect(try ServeSettings.resolve(flags: ServeFlags(), env: env, file: file).keysFile == "/env/keys")
        let fromFile = try ServeSettings.resolve(flags: ServeFlags(), env: [:], file: file)
        #expect(
            fromFile.keysFile == "/file/keys"
                && fromFile.origin(of: .keysFile) == .file(.keysFile, path: "c.toml", line: 1))
    }

    @Test func nothingGivenMeansTheBuiltInDevDefaults() throws {
        let s = try ServeSettings.resolve(flags: ServeFlags(), env: [:], file: nil)
        #expect(
            s
                == ServeSettings(
                    http: HostPort("127.0.0.1:7880")!, rtpPort: 7882, publicIP: "127.0.0.1", keys: nil,
                    maxTokenTTL: 86_400, recordingsDir: "./recordings", outputHosts: [], maxConnections: 1024,
                    participantTimeout: 10,
                    emptyRoomTimeout: 300, decodeBudgetMs: 500, webhookURLs: [], webhookSecret: nil, logLevel: .info,
                    origins: Dictionary(uniqueKeysWithValues: SettingKey.allCases.map { ($0, .builtInDefault($0)) })))
    }

    @Test func eachSettingIsTakenFromItsOwnHighestSource() throws {
        let file = try ConfigFile.parse(
            "rtp_port = 9003\nlog_level = \"error\"\nhttp = \"0.0.0.0:8003\"\n", path: "c.toml")
        let s = try ServeSettings.resolve(
            flags: ServeFlags(http: "127.0.0.1:8001"), env: ["COHOST_RTP_PORT": "9002"], file: file)
        #expect(s.http == HostPort("127.0.0.1:8001"))
        #expect(s.rtpPort == 9002)
        #expect(s.logLevel == .error)
        #expect(s.publicIP == "127.0.0.1")
        #expect(s.origin(of: .http) == .flag(.http))
        #expect(s.origin(of: .rtpPort) == .environment(.rtpPort))
        #expect(s.origin(of: .logLevel) == .file(.logLevel, path: "c.toml", line: 2))
        #expect(s.origin(of: .publicIP) == .builtInDefault(.publicIP))
    }

    @Test func anEmptyEnvironmentVariableCountsAsUnset() throws {
        let file = try ConfigFile.parse("keys = \"file:s3\"\nrtp_port = 9003\n", path: "c.toml")
        let s = try ServeSettings.resolve(
            flags: ServeFlags(), env: ["COHOST_KEYS": "", "COHOST_RTP_PORT": ""], file: file)
        #expect(s.keys == "file:s3")
        #expect(s.rtpPort == 9003)
    }

    @Test func aWebhookListIsTakenWholeFromOneSourceNeverMerged() throws {
        let file = try ConfigFile.parse(
            "webhook_url = [\"http://a.example/1\", \"http://a.example/2\"]\n", path: "c.toml")
        let secret = String(repeating: "w", count: 32)
        let fromEnv = try ServeSettings.resolve(
            flags: ServeFlags(webhookSecret: secret), env: ["COHOST_WEBHOOK_URL": "http://b.example/3"], file: file)
        #expect(fromEnv.webhookURLs == ["http://b.example/3"])
        let fromFlags = try ServeSettings.resolve(
            flags: ServeFlags(webhookURLs: ["http://c.example/4", "http://c.example/5"], webhookSecret: secret),
            env: ["COHOST_WEBHOOK_URL": "http://b.example/3"], file: file)
        #expect(fromFlags.webhookURLs == ["http://c.example/4", "http://c.example/5"])
    }

    @Test func theConfigPathComesFromTheFlagThenCohostConfig() {
        #expect(ServeSettings.configPath(flag: "/a.toml", env: ["COHOST_CONFIG": "/b.toml"]) == "/a.toml")
        #expect(ServeSettings.configPath(flag: nil, env: ["COHOST_CONFIG": "/b.toml"]) == "/b.toml")
        #expect(ServeSettings.configPath(flag: nil, env: ["COHOST_CONFIG": ""]) == nil)
        #expect(ServeSettings.configPath(flag: nil, env: [:]) == nil)
    }

    @Test func namesFollowOneRuleAcrossFileEnvironmentAndFlags() {
        #expect(
            SettingKey.allCases.map(\.fileKey) == [
                "http", "rtp_port", "public_ip", "keys", "keys_file", "auto_create_rooms", "max_token_ttl",
                "recordings_dir", "output_hosts", "metrics_token", "max_connections", "participant_timeout",
                "empty_room_timeout",
                "decode_budget_ms", "webhook_url", "webhook_secret", "log_level", "cors_origins", "dtls_cert",
                "dtls_key",
                "public_ip6", "web_dir", "tls_cert", "tls_key", "data_dir", "store", "node_id",
                "node_url", "node_timeout", "media_dir", "max_sources", "max_sources_per_room",
                "srt_port", "rtmp_port", "max_viewers", "ice_tcp_port", "turn_urls", "turn_secret", "stun_url",
                "max_connections_per_address", "recordings_max_bytes", "webhook_hosts", "cluster_secret",
                "cluster_hosts", "recordings_room_max_bytes",
            ])
        #expect(
            SettingKey.allCases.map(\.envVar) == [
                "COHOST_HTTP", "COHOST_RTP_PORT", "COHOST_PUBLIC_IP", "COHOST_KEYS", "COHOST_KEYS_FILE",
                "COHOST_AUTO_CREATE_ROOMS", "COHOST_MAX_TOKEN_TTL", "COHOST_RECORDINGS_DIR", "COHOST_OUTPUT_HOSTS",
                "COHOST_METRICS_TOKEN", "COHOST_MAX_CONNECTIONS", "COHOST_PARTICIPANT_TIMEOUT",
                "COHOST_EMPTY_ROOM_TIMEOUT", "COHOST_DECODE_BUDGET_MS", "COHOST_WEBHOOK_URL", "COHOST_WEBHOOK_SECRET",
                "COHOST_LOG_LEVEL", "COHOST_CORS_ORIGINS", "COHOST_DTLS_CERT", "COHOST_DTLS_KEY",
                "COHOST_PUBLIC_IP6", "COHOST_WEB_DIR", "COHOST_TLS_CERT", "COHOST_TLS_KEY", "COHOST_DATA_DIR",
                "COHOST_STORE", "COHOST_NODE_ID", "COHOST_NODE_URL", "COHOST_NODE_TIMEOUT", "COHOST_MEDIA_DIR",
                "COHOST_MAX_SOURCES", "COHOST_MAX_SOURCES_PER_ROOM", "COHOST_SRT_PORT",
                "COHOST_RTMP_PORT", "COHOST_MAX_VIEWERS", "COHOST_ICE_TCP_PORT", "COHOST_TURN_URLS",
                "COHOST_TURN_SECRET", "COHOST_STUN_URL", "COHOST_MAX_CONNECTIONS_PER_ADDRESS",
                "COHOST_RECORDINGS_MAX_BYTES", "COHOST_WEBHOOK_HOSTS",
                "COHOST_CLUSTER_SECRET", "COHOST_CLUSTER_HOSTS", "COHOST_RECORDINGS_ROOM_MAX_BYTES",
            ])
        #expect(
            SettingKey.allCases.map(\.flag) == [
                "--http", "--rtp-port", "--public-ip", "--keys", "--keys-file", "--auto-create-rooms",
                "--max-token-ttl", "--recordings-dir", "--output-hosts", "--metrics-token", "--max-connections",
                "--participant-timeout",
                "--empty-room-timeout", "--decode-budget-ms", "--webhook-url", "--webhook-secret", "--log-level",
                "--cors-origins", "--dtls-cert", "--dtls-key", "--public-ip6",
                "--web-dir", "--tls-cert", "--tls-key", "--data-dir", "--store",
                "--node-id", "--node-url", "--node-timeout", "--media-dir", "--max-sources", "--max-sources-per-room",
                "--srt-port", "--rtmp-port", "--max-viewers", "--ice-tcp-port", "--turn-urls", "--turn-secret",
                "--stun-url", "--max-connections-per-address", "--recordings-max-bytes", "--webhook-hosts",
                "--cluster-secret", "--cluster-hosts", "--recordings-room-max-bytes",
            ])
    }
}
