/// What `cohost serve` refuses to start with because a stranger could use it: dev mode (a published key and
/// secret) or an open `/metrics` on an address other machines reach, and secrets short or published enough to guess.
public enum ExposurePolicy {
    /// A secret signs every token of its key: 32 bytes is the HMAC-SHA256 key size.
    public static let minimumSecretBytes = 32
    /// Secrets printed in this repository (dev mode's and the deploy examples'): never real keys.
    public static let publishedSecrets: Set<String> = [
        "devsecret", "change-me-to-a-long-random-secret", "replace-with-openssl-rand-hex-16",
        "replace-with-openssl-rand-hex-32",
    ]

    /// Whether `host` (of a listener) can only be reached from this machine.
    public static func isLoopback(host: String) -> Bool {
        let h = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if h.lowercased() == "localhost" || h == "::1" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// Why dev mode may not serve on `http`; nil on a loopback address.
    public static func devModeRefusal(http: HostPort) -> String? {
        guard !isLoopback(host: http.host) else { return nil }
        let shown = http.host.isEmpty ? "all interfaces" : http.host
        return """
            no API keys, and the HTTP API would listen on \(shown) (port \(http.port)): dev mode, whose published \
            key lets anyone mint admin tokens, runs only on a loopback address. Give keys with --keys, \
            COHOST_KEYS, --keys-file or keys_file, or listen on 127.0.0.1
            """
    }

    /// Why `/metrics` may not be served open on `http`; nil on a loopback address or with a token. It names every
    /// room and user of the server.
    public static func openMetricsRefusal(http: HostPort, metricsToken: String?) -> String? {
        guard !isLoopback(host: http.host), metricsToken == nil else { return nil }
        let shown = http.host.isEmpty ? "all interfaces" : http.host
        return """
            the HTTP API would listen on \(shown) (port \(http.port)) with /metrics open, and /metrics names every \
            room and user: give it a token with --metrics-token, COHOST_METRICS_TOKEN or metrics_token \
            (e.g. openssl rand -hex 16), or listen on 127.0.0.1
            """
    }

    /// A warning for an API that other machines reach over plain HTTP (tokens cross the network in clear); nil on
    /// a loopback address or with TLS. A warning, not a refusal: a TLS proxy in front is the usual setup.
    public static func plainHTTPWarning(http: HostPort, tls: Bool) -> String? {
        guard !isLoopback(host: http.host), !tls else { return nil }
        let shown = http.host.isEmpty ? "all interfaces" : http.host
        return """
            the HTTP API listens on \(shown) (port \(http.port)) over plain HTTP: tokens and SDP cross the network \
            in clear unless a TLS proxy is in front; serve HTTPS with tls_cert and tls_key (docs/security.md)
            """
    }

    /// Why `secret` may not sign webhook deliveries; nil when it is acceptable. Never quotes the secret.
    public static func weakWebhookSecret(_ secret: String) -> String? {
        if publishedSecrets.contains(secret) {
            return "is an example printed in Cohost's repository: generate one (e.g. openssl rand -hex 32)"
        }
        if secret.utf8.count < minimumSecretBytes {
            return
                "has \(secret.utf8.count) bytes; at least \(minimumSecretBytes) are needed (e.g. openssl rand -hex 32)"
        }
        return nil
    }

    /// Why `secret` may not sign tokens of `key`; nil when it is acceptable. Never quotes the secret.
    public static func weakSecret(key: String, secret: String) -> String? {
        if publishedSecrets.contains(secret) {
            return "the secret of API key '\(key)' is an example printed in Cohost's repository: generate one "
                + "(e.g. openssl rand -base64 32)"
        }
        if secret.utf8.count < minimumSecretBytes {
            return "the secret of API key '\(key)' has \(secret.utf8.count) bytes; at least \(minimumSecretBytes) "
                + "are needed (e.g. openssl rand -base64 32)"
        }
        return nil
    }

    /// The `keys` list a keys file holds: `KEY:SECRET` entries one a line (or comma separated), blank lines and
    /// lines starting with `#` ignored.
    public static func keysSpec(fromFile text: String) -> String {
        text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: " \t\r") }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
            .joined(separator: ",")
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let skip = Set(set)
        return String(drop { skip.contains($0) }.reversed().drop { skip.contains($0) }.reversed())
    }
}
