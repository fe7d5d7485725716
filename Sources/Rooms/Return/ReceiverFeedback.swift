import Foundation
import RTP
import Synchronization

/// What a participant reports about a stream Cohost sends it (the report blocks of its RTCP about that SSRC):
/// loss, jitter and the round trip. Written by the UDP thread, read by the room (loss protection, bitrate) and by
/// metrics: behind its own lock.
final class ReceiverFeedback: Sendable {
    struct Snapshot: Sendable, Equatable {
        /// Loss in the receiver's last report interval, percent.
        var lossPercent: Int = 0
        var cumulativeLost: Int = 0
        var jitterMs: Double = 0
        var roundTripMs: Int?
        /// When the last report came (monotonic ms), nil before any.
        var lastReportMs: Int64?
        /// The last receiver estimated maximum bitrate (REMB), bits per second.
        var estimatedBitrate: Int?
        var reports: Int = 0
        /// The last report with loss, and how much: loss protection stays on for 10 s after it.
        var lastLossMs: Int64?
        var lastLossPercent: Int = 0
    }

    private let clockRate: Int
    private let state = Mutex(Snapshot())

    init(clockRate: Int) { self.clockRate = clockRate }

    var snapshot: Snapshot { state.withLock { $0 } }

    /// A report block about this stream, received at `nowMs`; `ntpNow` is the wall clock then (NTP), for the
    /// round trip: arrival − LSR − DLSR (RFC 3550 §6.4.1).
    func note(_ block: ReceptionReport, nowMs: Int64, ntpNow: UInt64) {
        var rtt: Int?
        if block.lastSenderReport != 0 {
            let arrival = NTPTime.middle(ntpNow)
            let delta = Int64(Int32(bitPattern: arrival &- block.lastSenderReport &- block.delaySinceLastSenderReport))
            if delta >= 0 { rtt = Int(delta * 1000 / 65_536) }
        }
        state.withLock {
            $0.lossPercent = Int(block.fractionLost) * 100 / 256
            $0.cumulativeLost = Int(block.totalLost)
            $0.jitterMs = Double(block.jitter) * 1000 / Double(clockRate)
            if let rtt { $0.roundTripMs = rtt }
            $0.lastReportMs = nowMs
            $0.reports += 1
            if block.fractionLost > 0 {
                $0.lastLossMs = nowMs
                $0.lastLossPercent = max(1, $0.lossPercent)
            }
        }
    }

    func note(estimatedBitrate: Int) { state.withLock { $0.estimatedBitrate = estimatedBitrate } }

    /// The loss of the receiver's last lossy report when it came within 10 s, percent; else 0.
    func recentLossPercent(nowMs: Int64) -> Int {
        state.withLock { s in
            guard let last = s.lastLossMs, nowMs - last <= 10_000 else { return 0 }
            return s.lastLossPercent
        }
    }
}
