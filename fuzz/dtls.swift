// The DTLS side of the shared media port: datagrams cut from the input (a length byte before each) go to a server
// endpoint mid-handshake, the way the UDP thread hands them over. No input crashes or hangs it, and none completes
// a handshake (no peer certificate can match the all-zero fingerprint). The record packer, fed the raw input, keeps
// every byte in order and never makes a datagram over the MTU unless it holds one record.
let context = try! DTLSContext(certificate: DTLSCertificate.generate())

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let packed = DTLSRecordPacker.datagrams(bytes, mtu: 200)
    require(packed.flatMap { $0 } == bytes, "the packer lost or reordered bytes")
    for datagram in packed where datagram.count > 200 {
        let length = datagram.count >= 13 ? Int(datagram[11]) << 8 | Int(datagram[12]) : -1
        require(datagram.count <= 13 + length, "an oversize datagram holds more than one record")
    }
    guard
        let server = try? DTLSEndpoint(
            context: context, role: .server, peerFingerprint: ("sha-256", [UInt8](repeating: 0, count: 32)))
    else { return 0 }
    server.cookieSubject = [127, 0, 0, 1]
    var at = 0
    while at < bytes.count {
        let length = Int(bytes[at])
        let datagram = Array(bytes[(at + 1)..<min(bytes.count, at + 1 + length)])
        at += 1 + length
        for reply in server.receive(datagram) { require(reply.count <= 1200, "a reply over the MTU") }
        require(server.state != .connected, "a handshake completed without a matching certificate")
    }
    return 0
}
