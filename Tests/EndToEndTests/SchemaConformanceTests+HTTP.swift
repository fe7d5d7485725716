import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TestSupport

/// One HTTP answer exactly as it came off the wire.
struct WireResponse: Sendable {
    let status: Int
    /// Header names lower-cased.
    let headers: [String: String]
    let body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }
    var contentType: String? { headers["content-type"] }
    /// `error.code` of a JSON error body.
    var errorCode: String? { (json?["error"] as? [String: Any])?["code"] as? String }
    var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] }
}

/// HTTP/1.1 over a plain socket, so a test controls every byte it sends (no client-side rewriting of
/// headers, bodies of any size, WebSocket upgrade requests) and sees every byte of the answer.
enum RawHTTP {
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// Sends one request with `Connection: close` and reads the answer. A `101` answer is returned
    /// as soon as its headers are in (the socket is then closed, ending the WebSocket at once).
    static func exchange(
        port: Int, method: String, target: String, headers: [(String, String)] = [],
        body: [UInt8] = []
    ) throws -> WireResponse {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 15, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard Loopback.connect(fd, port: port) else {
            throw Failure(description: "connect to 127.0.0.1:\(port): errno \(errno)")
        }

        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        let upgrading = headers.contains { $0.0.lowercased() == "upgrade" }
        if !upgrading { head += "Connection: close\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        // A server that refuses a large body may answer and close before reading all of it: a failed
        // send is not an error here, the answer (if any) is what counts.
        sendAll(fd, Array(head.utf8) + body)

        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received.append(contentsOf: chunk[0..<n])
            if let parsed = parse(received), parsed.complete || parsed.response.status == 101 { return parsed.response }
        }
        guard let parsed = parse(received) else {
            throw Failure(description: "\(method) \(target): no HTTP answer (\(received.count) bytes)")
        }
        return parsed.response
    }

    private static func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// The answer in `bytes`, and whether its body is complete (by Content-Length or chunked framing).
    static func parse(_ bytes: [UInt8]) -> (response: WireResponse, complete: Bool)? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard
            let end = (0...max(0, bytes.count - 4)).first(where: {
                bytes.count >= $0 + 4 && Array(bytes[$0..<$0 + 4]) == separator
            })
        else {
            return nil
        }
        let lines = String(decoding: bytes[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let rest = Array(bytes[(end + 4)...])
        if let length = headers["content-length"].flatMap(Int.init) {
            return (
                WireResponse(status: status, headers: headers, body: Array(rest.prefix(length))), rest.count >= length
            )
        }
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            let (body, complete) = dechunk(rest)
            return (WireResponse(status: status, headers: headers, body: body), complete)
        }
        return (WireResponse(status: status, headers: headers, body: rest), false)
    }

    private static func dechunk(_ bytes: [UInt8]) -> ([UInt8], Bool) {
        var body: [UInt8] = []
        var i = 0
        while let lineEnd = (i..<max(i, bytes.count - 1)).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 }) {
            let sizeText = String(decoding: bytes[i..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { return (body, false) }
            if size == 0 { return (body, true) }
            let start = lineEnd + 2
            guard start + size <= bytes.count else { return (body, false) }
            body.append(contentsOf: bytes[start..<start + size])
            i = start + size + 2
        }
        return (body, false)
    }
}
