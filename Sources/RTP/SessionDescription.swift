/// An SDP offer (RFC 8866), reduced to what Cohost needs to answer it (RFC 3264) and receive its media.
public struct SessionDescription: Equatable, Sendable {
    /// The limits keep a hostile body from costing more than a bounded amount of work. A browser's offer with 16
    /// receive slots is about 50 KB in 1,800 lines (each Chromium video line lists every codec).
    public static let maxBytes = 64 * 1024
    public static let maxLines = 4096
    public static let maxLineLength = 4096

    public var media: [MediaDescription]
    /// `a=group:BUNDLE` (RFC 9143): each group's `mid`s in order.
    public var bundleGroups: [[String]] = []

    public init(media: [MediaDescription], bundleGroups: [[String]] = []) {
        self.media = media
        self.bundleGroups = bundleGroups
    }

    /// Parses an offer; lines may end in `\r\n` or `\n`, blank lines are skipped, unknown lines and
    /// attributes are ignored. A session-level direction attribute applies to media that set none.
    public static func parse(_ text: String) throws(SDPError) -> SessionDescription {
        let size = text.utf8.count  // checked before copying anything
        guard size <= maxBytes else { throw .tooLarge(bytes: size) }
        let bytes = Array(text.utf8)
        let rawLines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard rawLines.count <= maxLines else { throw .tooManyLines }

        var media: [MediaDescription] = []
        var sessionDirection: String?
        // Session-level transport attributes, parsed into a section that holds them until the media are known.
        var session = MediaDescription(rawKind: "", port: 0, proto: "")
        var bundleGroups: [[String]] = []
        var sawVersion = false
        for (index, raw) in rawLines.enumerated() {
            let number = index + 1
            var line = raw
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            if line.isEmpty { continue }
            guard line.count <= maxLineLength else { throw .lineTooLong(line: number) }
            guard line.count >= 2, line[line.startIndex + 1] == UInt8(ascii: "="),
                let type = line.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(type)
            else { throw .malformedLine(line: number) }
            let value = String(decoding: line.dropFirst(2), as: UTF8.self)

            if !sawVersion {
                guard type == UInt8(ascii: "v") else { throw .missingVersion }
                guard value == "0" else { throw .unsupportedVersion(String(value.prefix(32))) }
                sawVersion = true
                continue
            }
            switch type {
            case UInt8(ascii: "m"):
                media.append(try MediaDescription(mediaLine: value, line: number))
            case UInt8(ascii: "a"):
                if media.isEmpty {
                    let name = value.prefix { $0 != ":" }
                    let rest = value.dropFirst(name.count + 1)
                    if MediaDescription.directions.contains(value) {
                        sessionDirection = value
                    } else if name == "group" {
                        let fields = rest.split(separator: " ", omittingEmptySubsequences: true)
                        if fields.first == "BUNDLE", bundleGroups.count < 16 {
                            bundleGroups.append(fields.dropFirst().prefix(64).map(String.init))
                        }
                    } else {
                        try session.applyTransport(name: name, value: rest, line: number)
                    }
                } else {
                    try media[media.count - 1].apply(attribute: value, line: number)
                }
            default:
                continue
            }
        }
        guard sawVersion else { throw .missingVersion }
        guard !media.isEmpty else { throw .noMedia }
        for i in media.indices {
            if media[i].direction == nil { media[i].direction = sessionDirection }
            if media[i].iceUfrag == nil { media[i].iceUfrag = session.iceUfrag }
            if media[i].icePassword == nil { media[i].icePassword = session.icePassword }
            if media[i].fingerprint == nil { media[i].fingerprint = session.fingerprint }
            if media[i].setup == nil { media[i].setup = session.setup }
        }
        // RFC 9143 §7.2: a bundle-only line (port 0) in a BUNDLE group whose tagged (first) line has a port is
        // offered, not disabled; it takes the group's transport, so it is read as live with the tagged line's port.
        for group in bundleGroups {
            guard let tagged = media.first(where: { $0.mid == group.first && $0.port != 0 }) else { continue }
            for i in media.indices
            where media[i].port == 0 && media[i].bundleOnly && media[i].mid.map(group.contains) == true {
                media[i].port = tagged.port
            }
        }
        return SessionDescription(media: media, bundleGroups: bundleGroups)
    }
}

/// `a=rtpmap` value (RFC 8866 §6.6): encoding name as written, clock rate, optional channel count.
public struct RTPMap: Equatable, Hashable, Sendable {
    public var encodingName: String
    public var clockRate: Int
    public var channels: Int?

    public init(encodingName: String, clockRate: Int, channels: Int? = nil) {
        self.encodingName = encodingName
        self.clockRate = clockRate
        self.channels = channels
    }

    /// The attribute text after `a=rtpmap:<pt> `, e.g. `opus/48000/2`.
    public var attributeValue: String {
        "\(encodingName)/\(clockRate)" + (channels.map { "/\($0)" } ?? "")
    }
}

/// `a=crypto` (RFC 4568 §9.1): SDES keying for SRTP.
public struct CryptoAttribute: Equatable, Hashable, Sendable {
    public var tag: Int
    /// e.g. `AES_CM_128_HMAC_SHA1_80`.
    public var suite: String
    /// The key parameters as written, e.g. `inline:<base64>|2^20|1:4`.
    public var keyParams: String
    /// Optional session parameters after the key parameters, as written.
    public var sessionParams: [String]

    public init(tag: Int, suite: String, keyParams: String, sessionParams: [String] = []) {
        self.tag = tag
        self.suite = suite
        self.keyParams = keyParams
        self.sessionParams = sessionParams
    }

    /// The base64 key-and-salt of the first key parameter (between `inline:` and the first `|` or `;`).
    public var inlineKey: String? {
        guard keyParams.hasPrefix("inline:") else { return nil }
        let key = keyParams.dropFirst("inline:".count).prefix { $0 != "|" && $0 != ";" }
        return key.isEmpty ? nil : String(key)
    }

    /// The attribute text after `a=crypto:`.
    public var attributeValue: String {
        ([String(tag), suite, keyParams] + sessionParams).joined(separator: " ")
    }
}
