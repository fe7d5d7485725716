import Ingest
import RTP

/// Packet and frame rates over the last report interval (about a second).
struct StreamRates {
    private var lastMs: Int64?
    private var lastBytes = 0
    private var lastFrames = 0
    private(set) var kbps = 0
    private(set) var fps = 0

    mutating func update(nowMs: Int64, bytes: Int, frames: Int) {
        if let lastMs, nowMs > lastMs {
            kbps = (bytes - lastBytes) * 8 / Int(nowMs - lastMs)
            fps = Int((Double(frames - lastFrames) * 1000 / Double(nowMs - lastMs)).rounded())
        }
        lastMs = nowMs
        lastBytes = bytes
        lastFrames = frames
    }
}

extension InboundStream {
    /// The stream's reception report block, after updating `rates` with what it received (once a second).
    func receptionReport(nowMs: Int64, updating rates: inout StreamRates, framesDecoded: Int) -> ReceptionReport {
        rates.update(nowMs: nowMs, bytes: stats.bytes, frames: framesDecoded)
        return receptionReport(nowMs: nowMs)
    }

    /// A sender report of this stream: for LSR/DLSR and the media clock.
    func note(_ sr: SenderReport, nowMs: Int64) {
        noteSenderReport(ntp: sr.ntpTimestamp, rtpTimestamp: sr.rtpTimestamp, nowMs: nowMs)
    }
}
