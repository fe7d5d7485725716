/// Per-stream counters of a participant's inbound stream, as `GET /v1/rooms/{room}` shows them.
public struct StreamReport: Sendable, Codable, Equatable {
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
    public var framesTooLarge: Int
    /// Video: frames skipped to keep the sender within its decode budget (and the interframes after them).
    public var framesOverBudget: Int
    /// Video: frames dropped because the decoder was too many frames or bytes behind the sender.
    public var framesQueueFull: Int
    /// Video: times the sender exceeded its decode budget (each holds it to keyframes for a while).
    public var decodeBudgetExceeded: Int
    /// Video: decoder CPU time spent on this stream in the last whole second.
    public var decodeCpuMs: Int
    /// Video: `camera`, or `screen` for a screen share; absent for audio.
    public var source: String?
    /// A simulcast layer: its RID, the picture size its last keyframe declared, `live` (packets arriving),
    /// `paused` (Cohost asked the sender to stop it: nobody needs it) or `stopped` (the sender stopped it), and
    /// whether the mixer decodes it now. Absent for a single stream.
    public var rid: String?
    public var width: Int?
    public var height: Int?
    public var state: String?
    public var mixed: Bool?

    public init(
        kind: String, codec: String, ssrc: UInt32, packets: Int, bytes: Int, lost: Int, framesDecoded: Int,
        decodeErrors: Int, fps: Int, kbps: Int, jitterMs: Double, nacksSent: Int, keyframeRequests: Int,
        concealedMs: Int, retransmissions: Int, roundTripMs: Int?, lipSyncDelayMs: Int, underruns: Int, trimmedMs: Int,
        pictureBuffersReplaced: Int, voiceMarginMs: Int?, framesTooLarge: Int = 0, framesOverBudget: Int = 0,
        framesQueueFull: Int = 0, decodeBudgetExceeded: Int = 0, decodeCpuMs: Int = 0, source: String? = nil,
        rid: String? = nil
    ) {
        self.source = source
        self.rid = rid
        self.kind = kind
        self.codec = codec
        self.ssrc = ssrc
        self.packets = packets
        self.bytes = bytes
        self.lost = lost
        self.framesDecoded = framesDecoded
        self.decodeErrors = decodeErrors
        self.fps = fps
        self.kbps = kbps
        self.jitterMs = jitterMs
        self.nacksSent = nacksSent
        self.keyframeRequests = keyframeRequests
        self.concealedMs = concealedMs
        self.retransmissions = retransmissions
        self.roundTripMs = roundTripMs
        self.lipSyncDelayMs = lipSyncDelayMs
        self.underruns = underruns
        self.trimmedMs = trimmedMs
        self.pictureBuffersReplaced = pictureBuffersReplaced
        self.voiceMarginMs = voiceMarginMs
        self.framesTooLarge = framesTooLarge
        self.framesOverBudget = framesOverBudget
        self.framesQueueFull = framesQueueFull
        self.decodeBudgetExceeded = decodeBudgetExceeded
        self.decodeCpuMs = decodeCpuMs
    }
}
