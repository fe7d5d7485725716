/// One `m=` section of an offer with the attributes Cohost reads.
public struct MediaDescription: Equatable, Sendable {
    public enum Kind: String, Sendable { case audio, video }

    /// nil for media types Cohost does not receive (application, text, ...): the answer rejects them.
    public var kind: Kind?
    /// The media type as written in the `m=` line.
    public var rawKind: String
    public var port: Int
    /// e.g. `RTP/AVP`, `RTP/SAVP`, `RTP/AVPF`, `RTP/SAVPF`.
    public var proto: String
    /// The `m=` formats as written (a rejected line in the answer repeats them).
    public var formats: [String]
    /// The formats as RTP payload types; empty when the protocol is not RTP.
    public var payloadTypes: [UInt8]
    public var rtpmaps: [UInt8: RTPMap]
    public var fmtps: [UInt8: String]
    /// Distinct `a=ssrc` ids in order of first appearance.
    public var ssrcs: [UInt32]
    /// sendonly / recvonly / sendrecv / inactive, from this section or else the session level.
    public var direction: String?
    public var cryptos: [CryptoAttribute]
    public var rtcpMux: Bool
    /// `a=mid` (RFC 5888), echoed in the answer when present.
    public var mid: String?
    /// `a=rtcp-fb` (RFC 4585 §4.2) per payload type, e.g. `nack`, `nack pli`, `ccm fir`; the
    /// wildcard `*` is stored under every payload type of the line.
    public var rtcpFeedback: [UInt8: [String]] = [:]
    /// `a=ssrc-group:FID <primary> <retransmission>` (RFC 5576 §4.2, RFC 4588 §8): retransmission SSRC by primary SSRC.
    public var retransmissionSSRCs: [UInt32: UInt32] = [:]
    /// ICE credentials (RFC 8839 §5.4), from this section or else the session level.
    public var iceUfrag: String?
    public var icePassword: String?
    /// The DTLS certificate fingerprint (RFC 8122 §5): the hash function's name, lowercased, and the digest bytes;
    /// from this section or else the session level.
    public var fingerprint: Fingerprint?
    /// `a=setup` (RFC 4145 §4): active, passive, actpass or holdconn.
    public var setup: String?
    /// `a=bundle-only` (RFC 9143 §6): the line has port 0 yet is live, on the BUNDLE group's transport.
    public var bundleOnly = false
    /// `a=extmap` (RFC 8285): the id of each offered header extension, by URI (at most 16 kept).
    public var extensions: [String: UInt8] = [:]
    /// `a=rid` lines (RFC 8851): a simulcast or RID-tagged send offer.
    public var rids: [String] = []
    /// The RIDs an `a=rid` line says are sent (`a=rid:<id> send`).
    public var sendRids: [String] = []
    /// `a=simulcast:send …` (RFC 8853 §5.1): the streams sent, in order, each its first alternative (a paused one's
    /// `~` dropped).
    public var simulcastSend: [String] = []
    /// `a=content` (RFC 4796): `slides` marks a screen share beside the camera.
    public var content: String?

    public struct Fingerprint: Equatable, Sendable {
        public var algorithm: String
        public var digest: [UInt8]
        public init(algorithm: String, digest: [UInt8]) {
            self.algorithm = algorithm
            self.digest = digest
        }
    }

    public init(
        kind: Kind? = nil, rawKind: String, port: Int, proto: String, formats: [String] = [],
        payloadTypes: [UInt8] = [], rtpmaps: [UInt8: RTPMap] = [:], fmtps: [UInt8: String] = [:],
        ssrcs: [UInt32] = [], direction: String? = nil, cryptos: [CryptoAttribute] = [],
        rtcpMux: Bool = false, mid: String? = nil
    ) {
        self.kind = kind
        self.rawKind = rawKind
        self.port = port
        self.proto = proto
        self.formats = formats
        self.payloadTypes = payloadTypes
        self.rtpmaps = rtpmaps
        self.fmtps = fmtps
        self.ssrcs = ssrcs
        self.direction = direction
        self.cryptos = cryptos
        self.rtcpMux = rtcpMux
        self.mid = mid
    }

    static let directions: Set<String> = ["sendonly", "recvonly", "sendrecv", "inactive"]

    /// Whether the formats are RTP payload types (RFC 8866 §5.14: for RTP/* protocols, and UDP/TLS/RTP/* of RFC 5764).
    public var isRTP: Bool {
        let upper = proto.uppercased()
        return upper.hasPrefix("RTP/") || upper.hasPrefix("UDP/TLS/RTP/")
    }

    /// `m=<media> <port>[/<number of ports>] <proto> <fmt> ...`
    init(mediaLine value: String, line: Int) throws(SDPError) {
        let fields = value.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 4 else { throw .badMediaLine(line: line) }
        let portText = fields[1].prefix { $0 != "/" }
        guard let port = Int(portText), (0...65535).contains(port) else { throw .badPort(line: line) }
        let formats = fields[3...].map(String.init)
        self.init(
            kind: Kind(rawValue: String(fields[0])), rawKind: String(fields[0]), port: port,
            proto: String(fields[2]), formats: formats)
        if isRTP {
            for format in formats {
                guard let pt = Self.payloadType(format) else { throw .badPayloadType(line: line) }
                payloadTypes.append(pt)
            }
        }
    }

    static func payloadType<S: StringProtocol>(_ text: S) -> UInt8? {
        guard text.count <= 3, let value = UInt8(text), value <= 127 else { return nil }
        return value
    }

    /// Applies one `a=` line belonging to this section; unknown attributes are ignored.
    mutating func apply(attribute: String, line: Int) throws(SDPError) {
        let name = attribute.prefix { $0 != ":" }
        let value = attribute.dropFirst(name.count + 1)
        switch name {
        case "rtpmap":
            let (pt, map) = try Self.parseRtpmap(value, line: line)
            rtpmaps[pt] = map
        case "fmtp":
            let ptText = value.prefix { $0 != " " }
            guard let pt = Self.payloadType(ptText) else { throw .badPayloadType(line: line) }
            fmtps[pt] = String(value.dropFirst(ptText.count).drop { $0 == " " })
        case "ssrc":
            let idText = value.prefix { $0 != " " }
            guard idText.count <= 10, let id = UInt32(idText) else { throw .badSsrc(line: line) }
            if !ssrcs.contains(id) { ssrcs.append(id) }
        case "crypto":
            cryptos.append(try Self.parseCrypto(value, line: line))
        case "rtcp-mux":
            rtcpMux = true
        case "bundle-only":
            bundleOnly = true
        case "rtcp-fb":
            let ptText = value.prefix { $0 != " " }
            let feedback = value.dropFirst(ptText.count).split(separator: " ").joined(separator: " ").lowercased()
            guard !feedback.isEmpty, feedback.count <= 64 else { throw .malformedLine(line: line) }
            let targets: [UInt8]
            if ptText == "*" {
                targets = payloadTypes
            } else {
                guard let pt = Self.payloadType(ptText) else { throw .badPayloadType(line: line) }
                targets = [pt]
            }
            for pt in targets where rtcpFeedback[pt, default: []].count < 16 {
                if !rtcpFeedback[pt, default: []].contains(feedback) { rtcpFeedback[pt, default: []].append(feedback) }
            }
        case "ssrc-group":
            let fields = value.split(separator: " ")
            guard fields.first == "FID" else { break }
            guard fields.count == 3, fields[1].count <= 10, fields[2].count <= 10,
                let primary = UInt32(fields[1]), let repair = UInt32(fields[2])
            else { throw .badSsrc(line: line) }
            retransmissionSSRCs[primary] = repair
        case "content":
            content = String(value.prefix(32))
        case "mid":
            mid = String(value)
        case "extmap":
            // `<id>[/<direction>] <uri> [<attributes>]`; ids 1–14 (one-byte) or 1–255 (two-byte).
            let fields = value.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, let id = UInt8(fields[0].prefix { $0 != "/" }), id >= 1, id != 15,
                fields[1].count <= 256
            else { throw .malformedLine(line: line) }
            if extensions.count < 16 { extensions[String(fields[1])] = id }
        case "rid":
            let fields = value.split(separator: " ", maxSplits: 2)
            if rids.count < 8, let id = fields.first {
                rids.append(String(id.prefix(32)))
                if fields.count > 1, fields[1] == "send" { sendRids.append(String(id.prefix(32))) }
            }
        case "simulcast":
            simulcastSend = Self.simulcastStreams(value, direction: "send")
        case "ice-ufrag", "ice-pwd", "fingerprint", "setup":
            try applyTransport(name: name, value: value, line: line)
        default:
            if Self.directions.contains(attribute) { direction = attribute }
        }
    }

    /// The streams of one direction of an `a=simulcast` value (`send 1;2,3;~4 recv 5`): at most 8, each the first of
    /// its alternatives, without the paused mark.
    static func simulcastStreams(_ value: Substring, direction: String) -> [String] {
        let fields = value.split(separator: " ", omittingEmptySubsequences: true)
        var streams: [String] = []
        var index = 0
        while index + 1 < fields.count {
            if fields[index] == direction {
                for stream in fields[index + 1].split(separator: ";") where streams.count < 8 {
                    guard let first = stream.split(separator: ",").first else { continue }
                    let id = first.hasPrefix("~") ? first.dropFirst() : first[...]
                    if !id.isEmpty { streams.append(String(id.prefix(32))) }
                }
            }
            index += 2
        }
        return streams
    }

    /// A transport attribute, at either level (`SessionDescription.parse` copies session-level ones into the
    /// sections that set none).
    mutating func applyTransport(name: Substring, value: Substring, line: Int) throws(SDPError) {
        switch name {
        case "ice-ufrag":
            // RFC 8839 §5.4: 4–256 ice-chars (ALPHA / DIGIT / "+" / "/").
            guard Self.isICEChars(value, 4...256) else { throw .malformedLine(line: line) }
            iceUfrag = String(value)
        case "ice-pwd":
            guard Self.isICEChars(value, 22...256) else { throw .malformedLine(line: line) }
            icePassword = String(value)
        case "fingerprint":
            // Offers may list several (aiortc: sha-256, -384, -512): the first is checked.
            let parsed = try Self.parseFingerprint(value, line: line)
            if fingerprint == nil { fingerprint = parsed }
        case "setup":
            let role = value.lowercased()
            guard ["active", "passive", "actpass", "holdconn"].contains(role) else { throw .malformedLine(line: line) }
            setup = role
        default:
            break
        }
    }

    static func isICEChars(_ value: Substring, _ length: ClosedRange<Int>) -> Bool {
        length.contains(value.utf8.count)
            && value.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2B
                    || c == 0x2F
            }
    }

    /// `<hash-func> <XX:XX:...>`, the digest 16–64 bytes.
    static func parseFingerprint(_ value: Substring, line: Int) throws(SDPError) -> Fingerprint {
        let fields = value.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count == 2, fields[0].count <= 16 else { throw .malformedLine(line: line) }
        let pairs = fields[1].split(separator: ":", omittingEmptySubsequences: false)
        guard (16...64).contains(pairs.count) else { throw .malformedLine(line: line) }
        var digest: [UInt8] = []
        for pair in pairs {
            guard pair.count == 2, let byte = UInt8(pair, radix: 16) else { throw .malformedLine(line: line) }
            digest.append(byte)
        }
        return Fingerprint(algorithm: fields[0].lowercased(), digest: digest)
    }

    /// `<payload type> <encoding name>/<clock rate>[/<encoding parameters>]`
    static func parseRtpmap(_ value: Substring, line: Int) throws(SDPError) -> (UInt8, RTPMap) {
        let fields = value.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count == 2 else { throw .badRtpmap(line: line) }
        guard let pt = payloadType(fields[0]) else { throw .badPayloadType(line: line) }
        let parts = fields[1].split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, !parts[0].isEmpty,
            parts[1].count <= 9, let clock = Int(parts[1]), clock > 0
        else { throw .badRtpmap(line: line) }
        var channels: Int?
        if parts.count == 3 {
            guard parts[2].count <= 3, let c = Int(parts[2]), c > 0 else { throw .badRtpmap(line: line) }
            channels = c
        }
        return (pt, RTPMap(encodingName: String(parts[0]), clockRate: clock, channels: channels))
    }

    /// `<tag> <crypto-suite> <key-params> *(<session-param>)` with `inline:` key params.
    static func parseCrypto(_ value: Substring, line: Int) throws(SDPError) -> CryptoAttribute {
        let fields = value.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 3, fields[0].count <= 9, let tag = Int(fields[0]), tag >= 0
        else { throw .badCrypto(line: line) }
        let crypto = CryptoAttribute(
            tag: tag, suite: String(fields[1]), keyParams: String(fields[2]),
            sessionParams: fields[3...].map(String.init))
        guard crypto.inlineKey != nil else { throw .badCrypto(line: line) }
        return crypto
    }
}
