import Foundation

/// One SRT connection publishing the programme (caller mode, live transmission type), MPEG-TS in 1316-byte
/// payloads. libavformat's srt protocol connects (`MuxerIO`); the MPEG-TS muxer is made on the first media tag,
/// from the header tags the publisher writes first. Used by its publisher's worker thread only.
final class SRTOutputConnection: PublishingConnection {
    /// A peer silent this long (no acknowledgement, no keepalive) is gone: the publisher reconnects.
    static let peerIdleTimeoutMs = 2000
    static let connectTimeoutMs: Int64 = 5000

    private let io: MuxerIO
    private var headers: [FLVTag] = []
    private var muxer: ProgrammeMuxer?

    var socket: Int32 { -1 }

    /// Connects to `address` (the URL's host, resolved) with the URL's parameters.
    init(url: String, address: String) throws(OutputIOError) {
        guard let target = OutputURL.srtTarget(url, peerIdleTimeoutMs: Self.peerIdleTimeoutMs, address: address) else {
            throw OutputIOError(description: "invalid SRT URL \(redactedURL(url))", isFinal: true)
        }
        do {
            io = try MuxerIO.connect(target, options: [:], timeoutMs: Self.connectTimeoutMs)
        } catch {
            throw OutputIOError(description: "cannot connect to \(redactedURL(url)): \(error.description)")
        }
    }

    func write(_ tag: FLVTag) throws(OutputIOError) {
        if let muxer { return try muxer.write(tag) }
        guard !tag.isSequenceHeader, tag.kind != .script else {
            headers.append(tag)
            return
        }
        let made = try ProgrammeMuxer(io: io, container: .mpegTS, headers: headers)
        muxer = made
        try made.write(tag)
    }

    /// SRT's own acknowledgements and keepalives are libsrt's: nothing to read here.
    func serviceIncoming() throws(OutputIOError) {}

    /// A literal address as it is; a name resolved with `getaddrinfo` (its first address, IPv4 or IPv6).
    static func resolve(_ host: String) throws(OutputIOError) -> String {
        if IPAddress(host) != nil { return host }
        do { return try HostResolver.addresses(of: host)[0].description } catch {
            throw OutputIOError(description: error.message)
        }
    }
}
