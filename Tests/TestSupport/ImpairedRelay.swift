import Foundation

/// A UDP relay on loopback that makes a bad network between senders and a server: it drops a share
/// of the datagrams and delays each of the others by a random time, which also reorders them.
///
/// Senders send to `port`; datagrams go on to `targetPort` from the relay's socket, so the server
/// sees one source address. Datagrams coming back from the server (RTCP feedback) are passed to the
/// last sender unimpaired. The randomness is seeded: a run is reproducible.
public final class ImpairedRelay: @unchecked Sendable {
    public let port: Int
    private let fd: Int32
    private let target: sockaddr_in
    private let dropRate: Double
    private let minDelayMs: Int
    private let maxDelayMs: Int
    private var random: SplitMix64
    private let lock = NSLock()
    private var running = true
    private var thread: Thread?
    private var _forwarded = 0, _dropped = 0, _returned = 0

    public var forwarded: Int { lock.withLock { _forwarded } }
    public var dropped: Int { lock.withLock { _dropped } }
    /// Datagrams from the server back to the sender (e.g. NACK, PLI, receiver reports).
    public var returned: Int { lock.withLock { _returned } }

    /// Each forwarded datagram waits between `minDelayMs` and `maxDelayMs` (uniform); equal bounds
    /// make a constant delay, e.g. a slow path for one stream.
    public init(targetPort: Int, dropRate: Double, minDelayMs: Int = 0, maxDelayMs: Int, seed: UInt64 = 42) throws {
        self.dropRate = dropRate
        self.minDelayMs = min(minDelayMs, maxDelayMs)
        self.maxDelayMs = maxDelayMs
        random = SplitMix64(seed: seed)
        let sock = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard sock >= 0 else { throw TestSupportError.system("socket", errno) }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(sock, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            close(sock)
            throw TestSupportError.system("bind", errno)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(sock, $0, &length) }
        }
        fd = sock
        port = Int(UInt16(bigEndian: address.sin_port))
        target = Self.loopback(port: targetPort)
        let thread = Thread { [unowned self] in self.loop() }
        thread.name = "impaired-relay"
        self.thread = thread
        thread.start()
    }

    deinit {
        stop()
        close(fd)
    }

    public func stop() {
        lock.withLock { running = false }
        Thread.sleep(forTimeInterval: 0.05)
    }

    private static func loopback(port: Int) -> sockaddr_in { Loopback.address(port: port) }

    private func loop() {
        var pending: [(due: Double, bytes: [UInt8])] = []
        var sender: sockaddr_in?
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while lock.withLock({ running }) {
            let now = Date().timeIntervalSince1970
            pending.sort { $0.due < $1.due }
            while let first = pending.first, first.due <= now {
                send(first.bytes, to: target)
                pending.removeFirst()
            }
            let waitMs = pending.first.map { max(0, Int(($0.due - now) * 1000)) } ?? 10
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, Int32(min(waitMs, 10))) > 0 else { continue }
            var from = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let n = buffer.withUnsafeMutableBytes { b in
                withUnsafeMutablePointer(to: &from) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(fd, b.baseAddress, b.count, 0, $0, &length)
                    }
                }
            }
            guard n > 0 else { continue }
            let bytes = Array(buffer[0..<n])
            if from.sin_port == target.sin_port {
                if let sender { send(bytes, to: sender) }
                lock.withLock { _returned += 1 }
                continue
            }
            sender = from
            if random.nextUnit() < dropRate {
                lock.withLock { _dropped += 1 }
                continue
            }
            let delay = (Double(minDelayMs) + random.nextUnit() * Double(maxDelayMs - minDelayMs)) / 1000
            pending.append((now + delay, bytes))
            lock.withLock { _forwarded += 1 }
        }
    }

    private func send(_ bytes: [UInt8], to address: sockaddr_in) {
        var address = address
        _ = bytes.withUnsafeBytes { b in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, b.baseAddress, b.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }
}

/// A small seeded PRNG (SplitMix64), so impairment runs are reproducible.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    public mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
