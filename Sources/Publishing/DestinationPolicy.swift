import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a room admin may aim an output or a pulled source, and where webhooks may go. Never at a link-local or
/// cloud-metadata address (169.254.0.0/16, fe80::/10). Without an allow-list, never at an internal address either
/// (loopback, RFC 1918, CGNAT, ULA, 0.0.0.0/8, multicast; dev mode allows loopback); with one (`output_hosts`,
/// `webhook_hosts`), only at a host or into a network it names, internal or not. Immutable, so any thread may ask.
public struct DestinationPolicy: Sendable, Equatable {
    /// A host name (exact, case-insensitive) or an IPv4/IPv6 network.
    public enum Pattern: Sendable, Equatable {
        case host(String)
        case network(IPNetwork)
    }

    /// nil: any public host (and loopback when `allowsLoopback`).
    public let allowed: [Pattern]?
    /// Dev mode without a list: a developer's own machine is a destination.
    public let allowsLoopback: Bool
    /// The setting that lists allowed hosts, named in refusals.
    public let setting: String

    public init(setting: String = "output_hosts", allowsLoopback: Bool = false) {
        allowed = nil
        self.allowsLoopback = allowsLoopback
        self.setting = setting
    }

    /// Parses allow-list items: `example.com`, `10.1.2.3`, `10.0.0.0/8`, `::1`, `fd00::/8`. Empty: no list.
    public init(
        allowing items: [String], setting: String = "output_hosts", allowsLoopback: Bool = false
    ) throws(OutputRulesError) {
        self.setting = setting
        self.allowsLoopback = allowsLoopback
        guard !items.isEmpty else {
            allowed = nil
            return
        }
        var patterns: [Pattern] = []
        for item in items {
            let text = item.trimmingCharacters(in: .whitespaces)
            if let network = IPNetwork(text) {
                patterns.append(.network(network))
            } else if HostName.isValid(text) {
                patterns.append(.host(text.lowercased()))
            } else {
                throw OutputRulesError(message: "'\(item)' is neither a host name nor an IP address or CIDR")
            }
        }
        allowed = patterns
    }

    /// Why `host` may not be a destination before resolving it, nil when it may be (a name is judged by where it
    /// resolves: `refusal(host:addresses:)` decides at connect time).
    public func refusal(host: String) -> String? {
        if let address = IPAddress(host) { return refusal(address, literal: host) }
        guard let allowed else { return nil }
        if allowed.contains(.host(host.lowercased())) { return nil }
        return allowed.contains { if case .network = $0 { true } else { false } } ? nil : notAllowed(host)
    }

    /// Why `host`, resolved to `addresses`, may not be connected to; nil when every address may.
    public func refusal(host: String, addresses: [IPAddress]) -> String? {
        if let problem = refusal(host: host) { return problem }
        for address in addresses where address.isAlwaysRefused { return Self.linkLocal(host) }
        // A listed name is the operator's word, wherever it resolves.
        if let allowed, allowed.contains(.host(host.lowercased())) { return nil }
        // Nothing resolved, nothing to allow.
        guard !addresses.isEmpty else { return notAllowed(host) }
        for address in addresses {
            if let problem = refusal(address, literal: host) { return problem }
        }
        return nil
    }

    private func refusal(_ address: IPAddress, literal: String) -> String? {
        if address.isAlwaysRefused { return Self.linkLocal(literal) }
        if let allowed { return allowed.contains { $0.matches(address) } ? nil : notAllowed(literal) }
        if address.isLoopback && allowsLoopback { return nil }
        return address.isInternal ? internalRefused(literal) : nil
    }

    /// Whether the operator's allow-list names `host` itself (an address literal inside a listed network counts).
    public func allows(host: String) -> Bool {
        guard let allowed else { return false }
        if let address = IPAddress(host) { return allowed.contains { $0.matches(address) } }
        return allowed.contains(.host(host.lowercased()))
    }

    /// Why `host` is refused whatever the operator allows (a link-local or metadata address literal).
    public static func alwaysRefusedHost(_ host: String) -> String? {
        guard let address = IPAddress(host), address.isAlwaysRefused else { return nil }
        return linkLocal(host)
    }

    private static func linkLocal(_ host: String) -> String {
        "'\(host)' is a link-local or metadata address: outputs, sources and webhooks never go there"
    }

    private func notAllowed(_ host: String) -> String { "'\(host)' is not among the hosts \(setting) allows" }

    private func internalRefused(_ host: String) -> String {
        "'\(host)' is an internal address (loopback, private, shared or reserved): list it in \(setting) to allow it"
    }
}

public struct OutputRulesError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// An IPv4 or IPv6 address, as 16 bytes (IPv4 in its IPv4-mapped form, so one set of ranges covers both).
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init?(_ text: String) {
        var trimmed = text
        if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") { trimmed = String(trimmed.dropFirst().dropLast()) }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, trimmed, &v4) == 1 {
            bytes = Self.mapped(withUnsafeBytes(of: v4.s_addr) { Array($0) })
        } else if inet_pton(AF_INET6, trimmed, &v6) == 1 {
            bytes = withUnsafeBytes(of: v6) { Array($0) }
        } else {
            return nil
        }
    }

    /// An IPv4 address's four bytes, or an IPv6 address's sixteen, in network order.
    init?(raw: [UInt8]) {
        switch raw.count {
        case 4: bytes = Self.mapped(raw)
        case 16: bytes = raw
        default: return nil
        }
    }

    private static func mapped(_ v4: [UInt8]) -> [UInt8] { [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + v4 }

    public var isIPv4: Bool { bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF }

    /// 169.254.0.0/16 (IPv4 link-local, where clouds serve instance metadata) and fe80::/10 (IPv6 link-local),
    /// also inside NAT64's 64:ff9b::/96.
    public var isAlwaysRefused: Bool {
        if let v4 = embeddedIPv4 { return v4[0] == 169 && v4[1] == 254 }
        return bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80
    }

    /// 127.0.0.0/8 and ::1.
    public var isLoopback: Bool {
        if let v4 = embeddedIPv4 { return v4[0] == 127 }
        return bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1
    }

    /// Not a public unicast address: loopback, 0.0.0.0/8 and ::, RFC 1918, CGNAT (100.64.0.0/10), IETF protocol
    /// assignments (192.0.0.0/24), benchmarking (198.18.0.0/15), multicast, 240.0.0.0/4 and broadcast, ULA
    /// (fc00::/7), site-local (fec0::/10), link-local, and the IPv4 forms of all of these (mapped, NAT64).
    public var isInternal: Bool {
        if isAlwaysRefused || isLoopback { return true }
        if let v4 = embeddedIPv4 {
            let (a, b) = (v4[0], v4[1])
            return a == 0 || a == 10 || (a == 100 && b & 0xC0 == 64) || (a == 172 && b & 0xF0 == 16)
                || (a == 192 && b == 168) || (a == 192 && b == 0 && v4[2] == 0) || (a == 198 && b & 0xFE == 18)
                || a >= 224
        }
        if bytes.allSatisfy({ $0 == 0 }) { return true }
        // IPv4-compatible (::a.b.c.d, deprecated): nothing public is reached that way.
        if bytes[0..<12].allSatisfy({ $0 == 0 }) { return true }
        return bytes[0] & 0xFE == 0xFC || (bytes[0] == 0xFE && bytes[1] & 0xC0 == 0xC0) || bytes[0] == 0xFF
    }

    /// The IPv4 address inside an IPv4-mapped (::ffff:0:0/96) or NAT64 (64:ff9b::/96) one.
    private var embeddedIPv4: [UInt8]? {
        if isIPv4 { return Array(bytes[12...]) }
        let nat64: [UInt8] = [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0]
        return bytes[0..<12].elementsEqual(nat64) ? Array(bytes[12...]) : nil
    }

    public var description: String {
        if isIPv4 { return bytes[12...].map(String.init).joined(separator: ".") }
        return stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            .joined(separator: ":")
    }
}

/// An address and a prefix length (`10.0.0.0/8`, `fd00::/8`); a bare address is a /32 or /128.
public struct IPNetwork: Sendable, Equatable {
    public let address: IPAddress
    /// Over the 128-bit form (an IPv4 /8 is 96 + 8).
    public let prefixBits: Int

    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddress(String(parts[0])) else { return nil }
        let width = address.isIPv4 ? 32 : 128
        var bits = width
        if parts.count == 2 {
            guard let n = Int(parts[1]), (0...width).contains(n) else { return nil }
            bits = n
        }
        self.address = address
        prefixBits = bits + (address.isIPv4 ? 96 : 0)
    }

    public func contains(_ other: IPAddress) -> Bool {
        var remaining = prefixBits
        for i in 0..<16 where remaining > 0 {
            let take = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - take))
            if address.bytes[i] & mask != other.bytes[i] & mask { return false }
            remaining -= take
        }
        return true
    }
}

extension DestinationPolicy.Pattern {
    func matches(_ address: IPAddress) -> Bool {
        if case .network(let network) = self { return network.contains(address) }
        return false
    }
}

/// Host-name syntax (RFC 1123 labels), so an allow-list entry that is neither a name nor an address is refused.
enum HostName {
    static func isValid(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        return text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && label.first != "-" && label.last != "-"
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }
}
