/// The PostgreSQL URL Cohost connects with: as given, but for a store on another machine with no `sslmode` of its
/// own, `sslmode=verify-full` (TLS, the server's certificate checked against `sslrootcert` and its name against the
/// host): libpq's default, `prefer`, falls back to plain text and checks no certificate. Loopback hosts and Unix
/// sockets are left as given. Key=value connection strings are not rewritten.
enum PostgresURL {
    static func withSecureDefault(_ url: String) -> String {
        let lowered = url.lowercased()
        guard lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") else { return url }
        guard !lowered.contains("sslmode=") else { return url }
        let afterScheme = url[url.range(of: "://")!.upperBound...]
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" }
        var host = Substring(authority.split(separator: "@", omittingEmptySubsequences: false).last ?? "")
        if host.hasPrefix("[") {
            host = host.dropFirst().prefix { $0 != "]" }
        } else {
            host = host.prefix { $0 != ":" }
        }
        let query = url.firstIndex(of: "?").map { url[$0...] } ?? ""
        // A Unix socket: no host, or a host= parameter naming a directory.
        if host.isEmpty || query.contains("host=/") || query.contains("host=%2F") { return url }
        if isLoopback(String(host)) { return url }
        return url + (query.isEmpty ? "?" : "&") + "sslmode=verify-full"
    }

    private static func isLoopback(_ host: String) -> Bool {
        let h = host.lowercased()
        if h == "localhost" || h == "::1" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
