import Testing

@testable import Server

/// Which pages may open the events WebSocket, and which Host names a dev-mode server answers.
@Suite struct WebOriginsTests {
    @Test func aSocketFromTheServersOwnPageOrAListedOriginIsAllowedAnotherPagesIsNot() {
        let origins = WebOrigins(corsOrigins: ["https://show.example"])
        #expect(origins.allowsSocket(origin: nil, host: "127.0.0.1:7880"), "not a browser page")
        #expect(origins.allowsSocket(origin: "http://127.0.0.1:7880", host: "127.0.0.1:7880"))
        #expect(origins.allowsSocket(origin: "https://Cohost.Example", host: "cohost.example"))
        #expect(origins.allowsSocket(origin: "https://show.example", host: "cohost.example"))
        #expect(!origins.allowsSocket(origin: "https://evil.example", host: "cohost.example"))
        #expect(!origins.allowsSocket(origin: "http://127.0.0.1:9999", host: "127.0.0.1:7880"))
        #expect(!origins.allowsSocket(origin: "null", host: "127.0.0.1:7880"))
        #expect(WebOrigins(corsOrigins: ["*"]).allowsSocket(origin: "https://any.example", host: "x"))
        // WebSocket client libraries send their URL's scheme and host: no page of a browser's.
        #expect(origins.allowsSocket(origin: "ws://127.0.0.1", host: "127.0.0.1:7880"))
    }

    @Test func devModeAnswersOnlyLoopbackNames() {
        let dev = WebOrigins(loopbackHostsOnly: true)
        for host in ["127.0.0.1:7880", "127.9.8.7", "localhost:7880", "LOCALHOST", "[::1]:7880", "[::1]"] {
            #expect(dev.allowsHost(host), "\(host)")
        }
        for host in ["rebind.example:7880", "127.0.0.1.nip.io", "[::2]:7880", "10.0.0.1:7880", "", "127.0.0:80"] {
            #expect(!dev.allowsHost(host), "\(host)")
        }
        #expect(!dev.allowsHost(nil))
        #expect(WebOrigins().allowsHost("rebind.example"), "with API keys every name is answered")
    }
}
