import Testing
@testable import ServeConfig

@Suite struct ExposureTests {
    static let strong = String(repeating: "k", count: 32)

    @Test func devModeServesOnlyOnLoopback() throws {
        for host in ["127.0.0.1", "127.3.4.5", "localhost", "[::1]"] {
            let http = try #require(HostPort("\(host):7880"))
            #expect(ExposurePolicy.devModeRefusal(http: http) == nil, "\(host)")
        }
        for host in ["0.0.0.0", "203.0.113.7", "[::]", "cohost.example"] {
            let http = try #require(HostPort("\(host):7880"))
            let refusal = try #require(ExposurePolicy.devModeRefusal(http: http))
            #expect(refusal.contains("--keys") && refusal.contains("COHOST_KEYS") && refusal.contains("--keys-file"))
        }
    }

    @Test func metricsAreOpenOnlyOnLoopback() throws {
        for host in ["127.0.0.1", "localhost", "[::1]"] {
            let http = try #require(HostPort("\(host):7880"))
            #expect(ExposurePolicy.openMetricsRefusal(http: http, metricsToken: nil) == nil, "\(host)")
        }
        for host in ["0.0.0.0", "203.0.113.7", "[::]", "cohost.example"] {
            let http = try #require(HostPort("\(host):7880"))
            let refusal = try #require(ExposurePolicy.openMetricsRefusal(http: http, metricsToken: nil))
            #expect(refusal.contains("--metrics-token") && refusal.contains("COHOST_METRICS_TOKEN"))
            #expect(ExposurePolicy.openMetricsRefusal(http: http, metricsToken: "0123456789abcdef") == nil)
        }
    }

    @Test func plainHTTPOnAnAddressOthersReachIsWarnedAbout() throws {
        for host in ["127.0.0.1", "localhost", "[::1]"] {
            let http = try #require(HostPort("\(host):7880"))
            #expect(ExposurePolicy.plainHTTPWarning(http: http, tls: false) == nil, "\(host)")
        }
        let exposed = try #require(HostPort("0.0.0.0:7880"))
        #expect(ExposurePolicy.plainHTTPWarning(http: exposed, tls: true) == nil)
        #expect(
            ExposurePolicy.plainHTTPWarning(http: exposed, tls: false)
                == "the HTTP API listens on 0.0.0.0 (port 7880) over plain HTTP: tokens and SDP cross the network "
                + "in clear unless a TLS proxy is in front; serve HTTPS with tls_cert and tls_key (docs/security.md)")
    }

    @Test func shortAndPublishedSecretsAreRefusedWithoutQuotingThem() throws {
        let short = try #require(ExposurePolicy.weakSecret(key: "prod1", secret: "hunter2-hunter2"))
        #expect(
            short == "the secret of API key 'prod1' has 15 bytes; at least 32 are needed (e.g. openssl rand -base64 32)"
        )
        let published = try #require(
            ExposurePolicy.weakSecret(key: "prod1", secret: "change-me-to-a-long-random-secret"))
        #expect(published.contains("example printed in Cohost's repository") && !published.contains("change-me"))
        #expect(ExposurePolicy.weakSecret(key: "dev", secret: "devsecret") != nil)
        #expect(ExposurePolicy.weakSecret(key: "prod1", secret: Self.strong) == nil)
    }

    @Test func aKeysFileHoldsOneKeyALineWithCommentsAndBlankLines() {
        let text = "# rotated 2026-11\nprod1:\(Self.strong)\n\n  prod2:\(Self.strong)x  \r\n#old:gone\n"
        #expect(ExposurePolicy.keysSpec(fromFile: text) == "prod1:\(Self.strong),prod2:\(Self.strong)x")
    }

    @Test func keysAndAKeysFileTogetherAreRefused() {
        #expect(
            resolve(flags: ServeFlags(keys: "k:\(Self.strong)"), env: ["COHOST_KEYS_FILE": "/etc/cohost/keys"])
                == "environment variable COHOST_KEYS_FILE and --keys are both set: give the keys once")
    }

    @Test func autoCreateRoomsIsABooleanInEveryPlace() throws {
        let fromEnv = try ServeSettings.resolve(
            flags: ServeFlags(), env: ["COHOST_AUTO_CREATE_ROOMS": "yes"], file: nil)
        #expect(fromEnv.autoCreateRooms == true)
        let fromFile = try ServeSettings.resolve(
            flags: ServeFlags(), env: [:], file: ConfigFile.parse("auto_create_rooms = false\n", path: "c.toml"))
        #expect(fromFile.autoCreateRooms == false)
        #expect(try ServeSettings.resolve(flags: ServeFlags(), env: [:], file: nil).autoCreateRooms == nil)
        #expect(
            resolve(env: ["COHOST_AUTO_CREATE_ROOMS": "maybe"])
                == "environment variable COHOST_AUTO_CREATE_ROOMS must be true or false, got 'maybe'")
        #expect(
            resolve(toml: "auto_create_rooms = \"true\"\n")
                == "'auto_create_rooms' in config file cohost.toml (line 1) must be a boolean, found string")
    }

    @Test func tokenLifetimeAndMetricsTokenHaveBounds() throws {
        #expect(try ServeSettings.resolve(flags: ServeFlags(), env: [:], file: nil).maxTokenTTL == 86_400)
        #expect(resolve(flags: ServeFlags(maxTokenTTL: 59)) == "--max-token-ttl must be within 60...31536000 s, got 59")
        #expect(resolve(flags: ServeFlags(metricsToken: "short")) == "--metrics-token must be at least 16 characters")
        let settings = try ServeSettings.resolve(
            flags: ServeFlags(outputHosts: ["rtmp.example", "127.0.0.0/8"]), env: [:], file: nil)
        #expect(settings.outputHosts == ["rtmp.example", "127.0.0.0/8"] && settings.recordingsDir == "./recordings")
    }
}
