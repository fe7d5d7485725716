import Foundation

/// Stream keys live in the last path component of RTMP URLs, and credentials in `user:pass@`: never log or report
/// either whole.
public func redactedURL(_ url: String) -> String {
    var url = url
    if let scheme = url.range(of: "://") {
        let authorityEnd = url[scheme.upperBound...].firstIndex(of: "/") ?? url.endIndex
        if let at = url[scheme.upperBound..<authorityEnd].lastIndex(of: "@") {
            url.replaceSubrange(scheme.upperBound...at, with: "…@")
        }
    }
    // An SRT URL's passphrase, in its query.
    if let start = url.range(of: "passphrase=") {
        let end = url[start.upperBound...].firstIndex(of: "&") ?? url.endIndex
        url.replaceSubrange(start.upperBound..<end, with: "…")
    }
    guard OutputURL.scheme(of: url).hasPrefix("rtmp"), let slash = url.lastIndex(of: "/") else { return url }
    let key = url[url.index(after: slash)...]
    guard key.count > 4 else { return url }
    return String(url[...slash]) + key.prefix(2) + "…"
}

/// URL checks shared by the outputs and `makeOutput`.
///
/// They read Unicode scalars, not Characters: a combining mark after a "/" makes one Character of the two, which
/// would hide that slash from a split on Characters while librtmp and the file system still see it.
enum OutputURL {
    /// What follows "://", nil when there is none.
    static func afterScheme(_ url: String) -> Substring.UnicodeScalarView? {
        guard let range = url.unicodeScalars.firstRange(of: "://".unicodeScalars) else { return nil }
        return url.unicodeScalars[range.upperBound...]
    }

    /// The string of these scalars.
    static func text(_ scalars: some Sequence<Unicode.Scalar>) -> String {
        String(String.UnicodeScalarView(scalars))
    }

    /// Lower-cased scheme ("" when there is none).
    static func scheme(of url: String) -> String {
        guard let range = url.unicodeScalars.firstRange(of: "://".unicodeScalars) else { return "" }
        return text(url.unicodeScalars[..<range.lowerBound]).lowercased()
    }

    /// Why an rtmp:// or rtmps:// URL cannot be published to, nil when it looks usable.
    static func rtmpProblem(_ url: String) -> String? {
        guard ["rtmp", "rtmps"].contains(scheme(of: url)), let rest = afterScheme(url) else {
            return "not an rtmp:// or rtmps:// URL"
        }
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard let host = parts.first, !host.isEmpty else { return "no host" }
        guard parts.count >= 3, !parts[1].isEmpty, parts.last?.isEmpty == false else {
            return "needs an application and a stream name (rtmp://host/app/stream)"
        }
        guard url.utf8.count < 2048, !url.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0 == "\0" })
        else {
            return "contains whitespace or is too long"
        }
        return nil
    }

    /// The host of an rtmp[s]:// URL, without port or IPv6 brackets ("" when there is none).
    static func rtmpHost(_ url: String) -> String {
        guard let rest = afterScheme(url) else { return "" }
        var authority = rest.prefix { $0 != "/" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.first == "[", let close = authority.firstIndex(of: "]") {
            return text(authority[authority.index(after: authority.startIndex)..<close])
        }
        return text(authority.prefix { $0 != ":" })
    }

    /// The application part of an rtmp:// URL (between the host and the stream name), as librtmp
    /// sends it in `connect`: "live" for rtmp://host/live/key, "app/inst" for rtmp://host/app/inst/key.
    static func rtmpApplication(_ url: String) -> String {
        guard let rest = afterScheme(url) else { return "" }
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3 else { return "" }
        return parts.dropFirst().dropLast().map { text($0) }.joined(separator: "/")
    }

    /// The query parameters an srt:// output takes: who it is to the listener, its encryption and its buffer.
    static let srtParameters: Set<String> = ["streamid", "passphrase", "latency", "pbkeylen"]

    /// Why an srt:// URL cannot be published to, nil when it looks usable: `srt://host:port` with at most
    /// `streamid`, `passphrase` (10 to 79 characters, SRT's rule), `latency` (milliseconds, up to 10 s) and
    /// `pbkeylen` (16, 24 or 32).
    static func srtProblem(_ url: String) -> String? {
        guard scheme(of: url) == "srt", let rest = afterScheme(url) else { return "not an srt:// URL" }
        guard url.utf8.count < 2048, !url.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0 == "\0" })
        else { return "contains whitespace or is too long" }
        let text = text(rest)
        let authority = text.prefix { $0 != "?" && $0 != "/" }
        let remainder = text.dropFirst(authority.count)
        guard remainder.isEmpty || remainder.first == "?" else { return "takes no path (srt://host:port?streamid=…)" }
        guard !srtHost(url).isEmpty else { return "no host" }
        guard let port = authority.split(separator: ":").last.flatMap({ Int($0) }), authority.contains(":"),
            (1...65535).contains(port)
        else { return "needs a port (srt://host:port)" }
        for (key, value) in query(String(remainder.dropFirst())) {
            guard srtParameters.contains(key) else {
                return "unknown parameter \(key) (takes \(srtParameters.sorted().joined(separator: ", ")))"
            }
            switch key {
            case "passphrase":
                guard (10...79).contains(value.count) else { return "a passphrase has 10 to 79 characters" }
            case "latency":
                guard let ms = Int(value), (0...10_000).contains(ms) else {
                    return "latency is 0 to 10000 milliseconds"
                }
            case "pbkeylen":
                guard ["16", "24", "32"].contains(value) else { return "pbkeylen is 16, 24 or 32" }
            default:
                guard !value.isEmpty, value.count <= 512 else { return "\(key) is empty or too long" }
            }
        }
        return nil
    }

    /// The host of an srt:// URL, without port or IPv6 brackets.
    static func srtHost(_ url: String) -> String { rtmpHost(url) }

    /// The port of an srt:// URL (0 when there is none).
    static func srtPort(_ url: String) -> Int {
        guard let rest = afterScheme(url) else { return 0 }
        let authority = text(rest).prefix { $0 != "?" && $0 != "/" }
        return authority.split(separator: ":").last.flatMap { Int($0) } ?? 0
    }

    /// The URL libavformat's srt protocol opens for an output URL that passed `srtProblem`: caller, live, MPEG-TS
    /// payloads of 1316 bytes, the latency in the microseconds libavformat counts in.
    /// `address`: the resolved address to connect to instead of the URL's host.
    static func srtTarget(_ url: String, peerIdleTimeoutMs: Int, address: String? = nil) -> String? {
        guard srtProblem(url) == nil, let rest = afterScheme(url) else { return nil }
        let text = text(rest)
        var authority = String(text.prefix { $0 != "?" })
        let given = authority.count
        if let address, let port = authority.split(separator: ":").last {
            authority = (address.contains(":") ? "[\(address)]" : address) + ":" + port
        }
        var parameters = [
            "mode=caller", "transtype=live", "pkt_size=1316", "peer_idle_timeout=\(peerIdleTimeoutMs * 1000)",
        ]
        for (key, value) in query(String(text.dropFirst(given + 1))) {
            let encoded = value.addingPercentEncoding(withAllowedCharacters: .urlQueryValueAllowed) ?? value
            parameters.append(key == "latency" ? "latency=\((Int(value) ?? 0) * 1000)" : "\(key)=\(encoded)")
        }
        return "srt://\(authority)?" + parameters.joined(separator: "&")
    }

    /// A query's pairs, percent-decoded.
    static func query(_ query: String) -> [(String, String)] {
        query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1)
            let key = String(parts[0]).removingPercentEncodingIfValid
            return (key, parts.count > 1 ? String(parts[1]).removingPercentEncodingIfValid : "")
        }
    }

    /// The absolute path of a file:// URL.
    static func filePath(_ url: String) -> Result<String, OutputError> {
        guard scheme(of: url) == "file", let rest = afterScheme(url) else {
            return .failure(.unsupportedScheme(url: url))
        }
        let path = text(rest).removingPercentEncodingIfValid
        let scalars = path.unicodeScalars
        guard scalars.first == "/", scalars.count > 1, scalars.last != "/", !scalars.contains("\0") else {
            return .failure(.invalidURL(url: url, reason: "a file URL needs an absolute path (file:///dir/name.flv)"))
        }
        return .success(path)
    }
}

extension String {
    /// Decodes %XX escapes; returns the string unchanged when an escape is malformed.
    var removingPercentEncodingIfValid: String {
        guard contains("%") else { return self }
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return self }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self) ?? self
    }
}

extension CharacterSet {
    /// What may stand unescaped in a query value.
    static let urlQueryValueAllowed: CharacterSet = {
        var set = CharacterSet.urlQueryAllowed
        set.remove(charactersIn: "&=+")
        return set
    }()
}
