import MediaSources
import Publishing

/// A pulled source's destination rules applied at every connect: its host resolved, each address checked against
/// the server's `DestinationPolicy`, the first one dialled. Why a host was refused goes to the operator's log only.
struct CheckedSourceDestinations: SourceDestinations {
    let policy: DestinationPolicy
    let onRefusal: @Sendable (String) -> Void

    func address(for host: String) -> String? {
        let addresses: [IPAddress]
        do { addresses = try HostResolver.addresses(of: host) } catch {
            onRefusal(error.message)
            return nil
        }
        if let refusal = policy.refusal(host: host, addresses: addresses) {
            onRefusal(refusal)
            return nil
        }
        return addresses[0].description
    }

    func tellsFailures(of host: String) -> Bool { policy.allows(host: host) }
}
