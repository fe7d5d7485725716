import Foundation
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Sends a raw H.264 (Annex-B) clip over RTP to a loopback port, looped for as long as it runs, at `fps` access
/// units a second (RFC 6184 packetization mode 1: single NAL unit packets, FU-A beyond `maxPayload`), each frame's
/// packets spread over most of its interval as a real-time sender's pacer does. ffmpeg cannot loop a raw stream (it
/// cannot seek one) nor keep parameter sets in band when looping a container, and it sends a frame in one burst.
final class H264ClipSender: @unchecked Sendable {
    private let accessUnits: [[[UInt8]]]
    private let ssrc: UInt32
    private let port: Int
    private let fps: Int
    private let maxPayload = 1188
    private let lock = NSLock()
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    private let firstFrame: Int

    /// `firstFrame`: where in the clip to start, so two senders of one clip do not send keyframes at once.
    init(clip path: String, ssrc: UInt32, port: Int, fps: Int = 30, firstFrame: Int = 0) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        accessUnits = Self.accessUnits(H264Units.nalUnits(annexB: bytes))
        guard !accessUnits.isEmpty else { throw HarnessError("no access units in \(path)") }
        self.ssrc = ssrc
        self.port = port
        self.fps = fps
        self.firstFrame = firstFrame
    }

    func start() {
        let thread = Thread { [self] in
            run()
            done.signal()
        }
        thread.start()
    }

    func stop() {
        let wasRunning = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        if wasRunning { done.wait() }
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func run() {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var seq: UInt16 = 1
        var timestamp: UInt32 = 90_000
        let start = Date()
        var index = 0
        func sleep(until due: Date) {
            let wait = due.timeIntervalSinceNow
            if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
        }
        let interval = 1 / Double(fps)
        while !isStopped {
            let due = start.addingTimeInterval(Double(index) * interval)
            sleep(until: due)
            let unit = accessUnits[(index + firstFrame) % accessUnits.count]
            let payloads = unit.enumerated().flatMap { n, nal in
                packets(nal).map { ($0.bytes, n == unit.count - 1 && $0.isLast) }
            }
            for (k, (payload, marker)) in payloads.enumerated() {
                if k % 16 == 15 {
                    sleep(until: due.addingTimeInterval(0.8 * interval * Double(k) / Double(payloads.count)))
                }
                var packet: [UInt8] = [
                    0x80, (marker ? 0x80 : 0) | 102, UInt8(seq >> 8), UInt8(seq & 0xFF),
                    UInt8(timestamp >> 24), UInt8(timestamp >> 16 & 0xFF), UInt8(timestamp >> 8 & 0xFF),
                    UInt8(timestamp & 0xFF),
                    UInt8(ssrc >> 24), UInt8(ssrc >> 16 & 0xFF), UInt8(ssrc >> 8 & 0xFF), UInt8(ssrc & 0xFF),
                ]
                packet += payload
                _ = packet.withUnsafeBytes { b in
                    Loopback.withSockaddr(port: port) { sendto(fd, b.baseAddress, b.count, 0, $0, $1) }
                }
                seq &+= 1
            }
            timestamp &+= UInt32(90_000 / fps)
            index += 1
        }
    }

    /// One NAL unit as RTP payloads: itself, or FU-A fragments (RFC 6184 §5.8).
    private func packets(_ nal: [UInt8]) -> [(bytes: [UInt8], isLast: Bool)] {
        guard nal.count > maxPayload else { return [(nal, true)] }
        let indicator = nal[0] & 0xE0 | 28
        let type = nal[0] & 0x1F
        var out: [(bytes: [UInt8], isLast: Bool)] = []
        var at = 1
        while at < nal.count {
            let end = min(nal.count, at + maxPayload - 2)
            let header = (at == 1 ? 0x80 : 0) | (end == nal.count ? 0x40 : 0) | type
            out.append(([indicator, header] + nal[at..<end], end == nal.count))
            at = end
        }
        return out
    }

    /// NAL units grouped into access units: a new one starts at a delimiter, parameter set or SEI after a slice,
    /// or at a slice whose first_mb_in_slice is 0 (its first payload bit is 1).
    static func accessUnits(_ nals: [[UInt8]]) -> [[[UInt8]]] {
        var units: [[[UInt8]]] = []
        var current: [[UInt8]] = []
        var hasSlice = false
        for nal in nals where !nal.isEmpty {
            let type = nal[0] & 0x1F
            let isSlice = type == 1 || type == 5
            let startsPicture = isSlice && nal.count > 1 && nal[1] & 0x80 != 0
            if hasSlice && (startsPicture || (6...9).contains(type)) {
                units.append(current)
                current = []
                hasSlice = false
            }
            current.append(nal)
            if isSlice { hasSlice = true }
        }
        if !current.isEmpty { units.append(current) }
        return units
    }
}
