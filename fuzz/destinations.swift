// Where outbound connections may go: any text as a URL, an address, a network or an allow-list entry never crashes
// the parsers; an address an allow-list-free policy lets through is never an internal one; a URL aimed at an address
// keeps everything but its host.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let open = DestinationPolicy()
    if let address = IPAddress(text) {
        let refusal = open.refusal(host: text)
        require((refusal == nil) == !address.isInternal, "an internal address allowed, or a public one refused")
        require(IPAddress(address.description) == address, "an address does not survive its own text")
    }
    _ = IPNetwork(text)?.contains(IPAddress("10.1.2.3")!)
    if let listed = try? DestinationPolicy(allowing: text.split(separator: ",").map(String.init)) {
        _ = listed.refusal(host: "stream.example", addresses: [IPAddress("8.8.8.8")!, IPAddress("::1")!])
        require(listed.refusal(host: "169.254.169.254") != nil, "a metadata address allowed")
    }
    if let location = SourceLocation(text) {
        let aimed = location.aimed(at: "192.0.2.1")
        require(SourceLocation(aimed)?.host == "192.0.2.1", "the aimed URL's host is not the address")
        require(aimed.hasPrefix(location.scheme) || aimed.lowercased().hasPrefix(location.scheme), "scheme lost")
    }
    return 0
}
