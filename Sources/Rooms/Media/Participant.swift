import Foundation
import Media
import RTP
import Ingest
import Codecs
import Logging

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
}

/// One user's media inside a room: the inbound streams, their decoders, the latest picture and
/// the decoded audio waiting for the mixer.
///
/// Packets arrive on the UDP thread and the mixer reads on the room's queue, so every entry point
/// takes `lock`. Decoding happens inline on the packet path: it is bounded (one frame per
/// complete packet group) and keeps the mixer's tick free of codec work.
public final class Participant: @unchecked Sendable {
    public let userId: String
    public let sessionID: Int
    public let joinedAt: Date
    let audioSSRC: UInt32?
    let videoSSRC: UInt32?

    private let lock = NSLock()
    private var audio: AudioPath?
    private var video: VideoPath?
    private(set) var lastPacketMs: Int64
    public private(set) var muted = false
    public private(set) var gain: Float = 1
    private let logger: Logger

    struct AudioPath {
        let stream: InboundStream
        let codec: String
        let decoder: OpusDecoder
        var fifo = AudioFIFO()
        var scratch = [Float](repeating: 0, count: AudioFormat.blockFrames * 2 * 6)
        var framesDecoded = 0
        var decodeErrors = 0
    }

    struct VideoPath {
        let stream: InboundStream
        let codec: String
        let decoder: VP8Decoder
        var frame: VideoFrame?
        var lastFrameMs: Int64 = 0
        var waitingForKeyframe = true
        var framesDecoded = 0
        var decodeErrors = 0
    }

    /// Something the room should announce after a packet was handled.
    enum Signal { case firstVideoFrame(width: Int, height: Int) }

    init(userId: String, sessionID: Int, audio: NegotiatedStream?, video: NegotiatedStream?, nowMs: Int64, logger: Logger) throws {
        self.userId = userId
        self.sessionID = sessionID
        self.joinedAt = Date()
        self.logger = logger
        lastPacketMs = nowMs
        audioSSRC = audio?.ssrc
        videoSSRC = video?.ssrc
        if let audio {
            let stream = InboundStream(ssrc: audio.ssrc, payloadType: audio.payloadType, clockRate: audio.clockRate,
                                       depacketizer: OpusDepacketizer(), maxDelayMs: 40)
            self.audio = AudioPath(stream: stream, codec: audio.codec, decoder: try OpusDecoder())
        }
        if let video {
            let stream = InboundStream(ssrc: video.ssrc, payloadType: video.payloadType, clockRate: video.clockRate,
                                       depacketizer: VP8Depacketizer(), maxDelayMs: 80)
            self.video = VideoPath(stream: stream, codec: video.codec, decoder: try VP8Decoder())
        }
    }

    var hasVideo: Bool { videoSSRC != nil }

    func setMix(muted: Bool?, gain: Float?) {
        lock.withLock {
            if let muted { self.muted = muted }
            if let gain { self.gain = gain }
        }
    }

    /// Handles one parsed RTP packet of this participant.
    func receive(_ packet: RTPPacket, bytes: Int, nowMs: Int64) -> Signal? {
        lock.lock()
        defer { lock.unlock() }
        lastPacketMs = nowMs
        if packet.ssrc == audioSSRC, var path = audio {
            for frame in path.stream.receive(packet, bytes: bytes, nowMs: nowMs) { decodeAudio(frame, path: &path) }
            audio = path
            return nil
        }
        if packet.ssrc == videoSSRC, var path = video {
            var signal: Signal?
            for frame in path.stream.receive(packet, bytes: bytes, nowMs: nowMs) {
                signal = decodeVideo(frame, path: &path, nowMs: nowMs) ?? signal
            }
            video = path
            return signal
        }
        return nil
    }

    /// Releases packets whose reordering wait expired; called by the room every tick.
    func drain(nowMs: Int64) -> Signal? {
        lock.lock()
        defer { lock.unlock() }
        if var path = audio {
            for frame in path.stream.drain(nowMs: nowMs) { decodeAudio(frame, path: &path) }
            audio = path
        }
        var signal: Signal?
        if var path = video {
            for frame in path.stream.drain(nowMs: nowMs) {
                signal = decodeVideo(frame, path: &path, nowMs: nowMs) ?? signal
            }
            video = path
        }
        return signal
    }

    private func decodeAudio(_ frame: EncodedFrame, path: inout AudioPath) {
        do {
            let frames = try path.decoder.decode(frame.data, into: &path.scratch)
            path.fifo.write(path.scratch, frames: frames)
            path.framesDecoded += 1
        } catch {
            path.decodeErrors += 1
            logger.debug("opus decode failed", metadata: ["user": "\(userId)", "error": "\(error)"])
        }
    }

    private func decodeVideo(_ frame: EncodedFrame, path: inout VideoPath, nowMs: Int64) -> Signal? {
        // A delta frame before a keyframe would decode into garbage: wait for the keyframe.
        if path.waitingForKeyframe && !frame.isKeyframe { return nil }
        var picture = path.frame ?? VideoFrame(width: 2, height: 2)
        do {
            guard try path.decoder.decode(frame.data, into: &picture) else { return nil }
        } catch {
            path.decodeErrors += 1
            path.waitingForKeyframe = true
            logger.debug("vp8 decode failed", metadata: ["user": "\(userId)", "error": "\(error)"])
            return nil
        }
        let first = path.frame == nil
        path.frame = picture
        path.waitingForKeyframe = false
        path.lastFrameMs = nowMs
        path.framesDecoded += 1
        return first ? .firstVideoFrame(width: picture.width, height: picture.height) : nil
    }

    /// Copies the next 20 ms block into `output`, scaled by the mix gain; false when there is none.
    func pullAudio(into output: inout [Float]) -> (ok: Bool, gain: Float) {
        lock.lock()
        defer { lock.unlock() }
        guard var path = audio else { return (false, 0) }
        let ok = path.fifo.read(into: &output, frames: AudioFormat.blockFrames)
        audio = path
        return (ok && !muted, gain)
    }

    /// The picture to show now: the latest decoded frame, or nil (placeholder) when there is none
    /// or it is older than `holdMs`.
    func currentFrame(nowMs: Int64, holdMs: Int64) -> VideoFrame? {
        lock.lock()
        defer { lock.unlock() }
        guard let path = video, let frame = path.frame, nowMs - path.lastFrameMs <= holdMs else { return nil }
        return frame
    }

    func reports() -> [StreamReport] {
        lock.lock()
        defer { lock.unlock() }
        var out: [StreamReport] = []
        if let a = audio {
            let s = a.stream.stats
            out.append(StreamReport(kind: "audio", codec: a.codec, ssrc: a.stream.ssrc, packets: s.packets, bytes: s.bytes,
                                    lost: s.lost, framesDecoded: a.framesDecoded, decodeErrors: a.decodeErrors))
        }
        if let v = video {
            let s = v.stream.stats
            out.append(StreamReport(kind: "video", codec: v.codec, ssrc: v.stream.ssrc, packets: s.packets, bytes: s.bytes,
                                    lost: s.lost, framesDecoded: v.framesDecoded, decodeErrors: v.decodeErrors))
        }
        return out
    }

    func idleMilliseconds(nowMs: Int64) -> Int64 { lock.withLock { nowMs - lastPacketMs } }
}
