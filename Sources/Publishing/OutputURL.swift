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
