// swift-tools-version:6.1
// Cohost: a conferencing (co-hosting) server and mixer. Module map: docs/architecture.md.
import PackageDescription

/// A system-library target for one C library: a module map plus a shim header, nothing else.
func cLibrary(_ name: String, pkgConfig: String? = nil, apt: String) -> Target {
    .systemLibrary(
        name: name, path: "Sources/CLibs/\(name)", pkgConfig: pkgConfig,
        providers: [.apt([apt])])
}

let package = Package(
    name: "cohost",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "cohost", targets: ["cohost"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.20.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.6.0"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
    ],
    targets: [
        // C libraries: module map + shim header per library.
        cLibrary("CSRTP", pkgConfig: "libsrtp2", apt: "libsrtp2-dev"),
        cLibrary("COpus", pkgConfig: "opus", apt: "libopus-dev"),
        cLibrary("CVPX", pkgConfig: "vpx", apt: "libvpx-dev"),
        cLibrary("CX264", apt: "libx264-dev"),
        cLibrary("CRTMP", pkgConfig: "librtmp", apt: "librtmp-dev"),
        cLibrary("CAVCodec", pkgConfig: "libavcodec", apt: "libavcodec-dev"),
        cLibrary("CAVFormat", pkgConfig: "libavformat", apt: "libavformat-dev"),
        cLibrary("CSRT", pkgConfig: "srt", apt: "libsrt-gnutls-dev"),
        cLibrary("CYUV", apt: "libyuv-dev"),
        cLibrary("COpenSSL", pkgConfig: "openssl", apt: "libssl-dev"),
        // libcrypto's HMAC alone, for the HMAC module (COpenSSL is DTLS's: libssl).
        cLibrary("CLibCrypto", pkgConfig: "libcrypto", apt: "libssl-dev"),
        cLibrary("CSQLite", pkgConfig: "sqlite3", apt: "libsqlite3-dev"),
        cLibrary("CPostgres", pkgConfig: "libpq", apt: "libpq-dev"),
        cLibrary("CFreeType", pkgConfig: "freetype2", apt: "libfreetype-dev"),
        cLibrary("CHarfBuzz", pkgConfig: "harfbuzz", apt: "libharfbuzz-dev"),
        // recvmmsg(2), which glibc declares only under _GNU_SOURCE: one C function (Server's UDP receive path).
        .target(name: "CUDP", path: "Sources/CLibs/CUDP"),
        // The compositor's per-frame tile scaling kernel (bilinear, table-driven, SSSE3 with a C fallback).
        // Optimised in debug builds too: the end-to-end tests run a debug server, and at -O0 the kernel is
        // slower than the libyuv call it replaces.
        .target(name: "CScale", path: "Sources/CLibs/CScale", cSettings: [.unsafeFlags(["-O2"])]),

        // Pure Swift value types and wire formats.
        .target(name: "Media"),
        .target(name: "RTP"),
        .target(name: "SRTP", dependencies: ["CSRTP"]),
        // HMAC-SHA1 and HMAC-SHA256 over libcrypto: STUN's integrity, tokens, webhook signatures.
        .target(name: "HMAC", dependencies: ["CLibCrypto"]),
        // STUN and the ICE-lite answers to connectivity checks (pure Swift but for HMAC).
        .target(name: "ICE", dependencies: ["HMAC"]),
        // DTLS 1.2 with the use_srtp extension over memory BIOs (OpenSSL): the keys of a WebRTC peer's SRTP.
        .target(name: "DTLS", dependencies: ["COpenSSL", "SRTP"]),
        .target(name: "Ingest", dependencies: ["RTP"]),
        // Timing and buffering between ingest and the mix (FIFOs, presenter, lip-sync, canvas timing): no C library.
        .target(name: "Playout", dependencies: ["Media", "RTP"]),
        .target(name: "Codecs", dependencies: ["COpus", "CVPX", "CX264", "CAVCodec", "CYUV", "CScale", "Media"]),
        // Media pulled from files and URLs (libavformat), decoded into a feed the rooms read.
        .target(
            name: "MediaSources", dependencies: ["CAVFormat", "CSRT", "CRTMP", "Media", "Playout", "Clocks", "Codecs"]),
        // The clocks: the monotonic time everything reads, and the one scheduler of media work (`MixClock`).
        .target(name: "Clocks"),
        // Layouts and their geometry: regions, grid and pip placement, validation, occlusion. No C library.
        .target(name: "Layout", dependencies: ["Media"]),
        // The API's wire types (the room's JSON, outputs, invites, nodes, the error body): the server encodes them,
        // the command line and the load tester decode them. Pure.
        .target(name: "CohostAPI", dependencies: ["Layout"]),
        // Selective forwarding's pure parts: per-slot RTP rewriting, the VP8 munger, the slot allocator, the
        // per-sender NACK history, keyframe coalescing, the bandwidth budget. Neither decodes nor encodes.
        .target(name: "Forwarding"),
        // The audio mix, mix-minus, meters and the active speaker: no C library.
        .target(name: "Mixing", dependencies: ["Media"]),
        .target(name: "Compositing", dependencies: ["Media", "Layout", "Codecs"]),
        // Participants' name labels: text shaped (HarfBuzz) and rasterised (FreeType) on a box, as I420 with alpha.
        .target(name: "Labels", dependencies: ["CFreeType", "CHarfBuzz", "Media"]),
        .target(
            name: "Publishing",
            dependencies: [
                "CRTMP", "CAVFormat", "RTP",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "Rooms",
            dependencies: [
                "RTP", "SRTP", "ICE", "DTLS", "Ingest", "Playout", "Codecs", "Clocks", "Layout", "Mixing",
                "Compositing", "Forwarding", "MediaSources",
                "Publishing", "Media", "CohostAPI",
                "HMAC", "Labels",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]),
        .target(
            name: "Server",
            dependencies: [
                "Rooms", "CohostAPI", "Clocks", "HMAC", "ICE", "Layout", "CUDP", "MediaSources", "Publishing",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        // `cohost serve` settings: flags, COHOST_* environment and the TOML config file, merged (no server code).
        .target(
            name: "ServeConfig",
            dependencies: [
                "ICE",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The API client of the `cohost` subcommands (room, participant, output, events, invite): HTTP over
        // URLSession, the events WebSocket, request bodies from flags, and the tables they print.
        .target(
            name: "CohostClient",
            dependencies: [
                "CohostAPI", "Layout",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The room stores (rooms and kicks that outlive the process; Rooms declares the protocol): SQLite embedded,
        // PostgreSQL (libpq) shared by a cluster.
        .target(name: "Store", dependencies: ["CSQLite", "CPostgres", "Rooms"]),
        // One node of a cluster on a shared PostgreSQL store: heartbeat, room owners, takeover (docs/cluster.md).
        .target(
            name: "Cluster",
            dependencies: [
                "Rooms", "CohostAPI",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]),
        // `cohost load-test`: synthetic VP8 + Opus participants over plain RTP, paced in real time, and the report.
        .target(name: "LoadTest", dependencies: ["CohostAPI", "CohostClient", "Codecs", "RTP", "Media"]),
        .executableTarget(
            name: "cohost",
            dependencies: [
                "Server", "Rooms", "Publishing", "ServeConfig", "DTLS", "CohostAPI", "CohostClient", "Layout",
                "LoadTest", "ICE",
                "Store", "Cluster",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]),

        // Tests mirror the modules.
        .testTarget(name: "MediaTests", dependencies: ["Media"]),
        .testTarget(name: "RTPTests", dependencies: ["RTP", "TestSupport"]),
        .testTarget(name: "SRTPTests", dependencies: ["SRTP", "TestSupport"]),
        .testTarget(name: "HMACTests", dependencies: ["HMAC"]),
        .testTarget(name: "ICETests", dependencies: ["ICE"]),
        .testTarget(name: "DTLSTests", dependencies: ["DTLS", "SRTP", "COpenSSL"]),
        .testTarget(name: "IngestTests", dependencies: ["Ingest", "RTP"]),
        .testTarget(name: "PlayoutTests", dependencies: ["Playout", "Media", "RTP"]),
        .testTarget(name: "CodecsTests", dependencies: ["Codecs", "CAVCodec", "Media", "TestSupport"]),
        .testTarget(
            name: "MediaSourcesTests", dependencies: ["MediaSources", "Media", "TestSupport", "Codecs", "Clocks"]),
        .testTarget(name: "ClocksTests", dependencies: ["Clocks", "TestSupport"]),
        .testTarget(name: "LayoutTests", dependencies: ["Layout", "Media"]),
        .testTarget(name: "ForwardingTests", dependencies: ["Forwarding", "RTP", "Codecs", "Media"]),
        .testTarget(name: "MixingTests", dependencies: ["Mixing", "Media", "TestSupport"]),
        .testTarget(name: "CompositingTests", dependencies: ["Compositing", "Layout", "Media", "TestSupport"]),
        .testTarget(name: "LabelsTests", dependencies: ["Labels", "Media", "Codecs"], resources: [.copy("Golden")]),
        .testTarget(
            name: "PublishingTests",
            dependencies: [
                "Publishing", "Codecs", "Media", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "RoomsTests",
            dependencies: [
                "Rooms", "CohostAPI", "Playout", "Codecs", "Clocks", "Publishing", "Media", "RTP", "SRTP", "ICE",
                "DTLS", "Forwarding", "MediaSources", "Layout",
                "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "ServeConfigTests",
            dependencies: [
                "ServeConfig",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "ServerTests",
            dependencies: [
                "Server", "Rooms", "CohostAPI", "DTLS", "ICE", "Publishing", "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .testTarget(name: "CohostClientTests", dependencies: ["CohostClient", "CohostAPI"]),
        .testTarget(
            name: "StoreTests",
            dependencies: [
                "Store", "Rooms", "Layout", "Codecs", "Media", "Publishing", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "ClusterTests",
            dependencies: ["Cluster", "Rooms", .product(name: "Logging", package: "swift-log")]),
        .testTarget(
            name: "LoadTestTests", dependencies: ["LoadTest", "CohostAPI", "Codecs", "RTP", "Media", "TestSupport"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "TestSupport", "Rooms", "Media", "RTP", "Codecs",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The return path's latency probe `make bench` runs against a live server (bench/ReturnProbe).
        .executableTarget(
            name: "ReturnProbe", dependencies: ["TestSupport", "Rooms", "Media"], path: "bench/ReturnProbe"),
        // Helpers shared by the tests: polling, test signals, and real processes (nginx-rtmp, ffmpeg, cohost).
        .target(
            name: "TestSupport", dependencies: ["Media", "RTP", "SRTP", "Codecs", "Rooms"], path: "Tests/TestSupport"),
    ]
)
