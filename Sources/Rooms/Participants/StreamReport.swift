import Ingest
import RTP

/// Per-stream counters shown in `GET /v1/rooms/{room}`.
public struct StreamReport: Sendable, Encodable {
    public var kind: String
    public var codec: String
    public var ssrc: UInt32
    public var packets: Int
    public var bytes: Int
    public var lost: Int
    public var framesDecoded: Int
    public var decodeErrors: Int
    /// Over the last second.
    public var fps: Int
    public var kbps: Int
    public var jitterMs: Double
    public var nacksSent: Int
    public var keyframeRequests: Int
    /// Audio: lost time filled by Opus concealment or FEC.
    public var concealedMs: Int
    /// Video: packets that arrived as answers to NACKs (on the RFC 4588 repair SSRC, or the media SSRC).
    public var retransmissions: Int
    /// Video: the smoothed time from a NACK to its retransmission, once one was timed.
    public var roundTripMs: Int?
    /// Audio: how long this voice is held back to stay in sync with a slower video path.
    public var lipSyncDelayMs: Int
    /// Audio: times this voice's FIFO ran dry while playing (a gap heard until it had prebuffered again).
    public var underruns: Int
    /// Audio: how much of this voice was cut to keep its delay down (a burst, a sender clock running fast);
    /// lip-sync's cuts, made in pauses, are not counted.
    public var trimmedMs: Int
    /// Video: pictures the decoder could not reuse because someone still held them (a slow snapshot, an old
    /// canvas), so a new picture buffer was made. Stays 0 in steady state.
    public var pictureBuffersReplaced: Int
    /// Audio: how early the latest packet of the last second reached the mixer before it was needed (its margin
    /// against a late packet, lip-sync's hold included); absent until a second of reads was timed.
    public var voiceMarginMs: Int?
    /// Video: frames refused because the sender's pictures are larger than the room's `maxVideoSize`.
    public var framesTooLarge = 0
    /// Video: frames skipped to keep the sender within its decode budget (and the interframes after them).
    public var framesOverBudget = 0
    /// Video: frames dropped because the decoder was `VideoReceiver.queueCapacity` frames (or `queueBytes`) behind
    /// the sender.
    public var framesQueueFull = 0
    /// Video: times the sender exceeded its decode budget (each holds it to keyframes for a while).
    public var decodeBudgetExceeded = 0
    /// Video: decoder CPU time spent on this stream in the last whole second.
    public var decodeCpuMs = 0
}

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
