import Foundation
import TestSupport

/// A minimal HTTP/1.1 listener on a free loopback port that records webhook POSTs and answers 204
/// (plain sockets on one thread: requests arrive one at a time, and the test only needs what came).
final class WebhookReceiver: @unchecked Sendable {
    struct Request: Sendable {
        let path: String
        /// Header names lowercased.
        let headers: [String: String]
        let body: [UInt8]
    }

    let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var received: [Request] = []
    private var thread: Thread?

    /// `port` 0: a free one.
    init(port wanted: Int = 0) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw HarnessError("socket() failed") }
        self.listener = listener
        var reuse: Int32 = 1
        _ = setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        guard Loopback.bind(listener, port: wanted), listen(listener, 16) == 0, let port = Loopback.localPort(listener)
        else {
            close(listener)
            throw HarnessError("could not listen on loopback")
        }
        self.port = port
        let thread = Thread { [listener] in
            while true {
                let fd = accept(listener, nil, nil)
                guard fd >= 0 else { return }  // the listener was shut down
                if let request = Self.serve(fd) { self.lock.withLock { self.received.append(request) } }
                close(fd)
            }
        }
        self.thread = thread
        thread.start()
    }

    var requests: [Request] { lock.withLock { received } }

    private var stopped = false

    /// Ends the accept loop (which holds the receiver until then); call it once the test is done.
    func stop() {
        guard
            lock.withLock({
                defer { stopped = true }
                return !stopped
            })
        else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Reads one request (headers, then Content-Length bytes), answers 204 and closes.
    private static func serve(_ fd: Int32) -> Request? {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var headerEnd: Int?
        var contentLength = 0
        var head = ""
        while data.count < 1 << 20 {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return nil }
            data += chunk[0..<n]
            if headerEnd == nil, let range = findHeaderEnd(data) {
                headerEnd = range
                head = String(decoding: data[0..<range], as: UTF8.self)
                for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                    contentLength =
                        Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
            if let end = headerEnd, data.count >= end + 4 + contentLength { break }
        }
        guard let end = headerEnd else { return nil }
        let response = Array("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
        _ = response.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let lines = head.split(separator: "\r\n")
        let path = lines.first?.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return Request(
            path: path, headers: headers, body: Array(data[(end + 4)..<min(data.count, end + 4 + contentLength)]))
    }

    private static func findHeaderEnd(_ data: [UInt8]) -> Int? {
        guard data.count >= 4 else { return nil }
        for i in 0...(data.count - 4) where data[i] == 13 && data[i + 1] == 10 && data[i + 2] == 13 && data[i + 3] == 10
        { return i }
        return nil
    }
}
