import CAVFormat
import Foundation
import Logging
import RTP

/// One participant's tracks written as they were received, without transcoding: VP8 or H.264 video and Opus audio
/// into WebM (VP8, or audio only) or Matroska (H.264), by libavformat's Matroska muxer, on a thread of its own.
///
/// The packet path hands frames over (`video`, `audio`) without waiting: they go into a bounded queue (2 s of frames;
/// beyond it the newest are dropped and counted). Each track is stamped from its RTP timestamps, anchored at the
/// arrival of its first frame, so the tracks line up as they arrived. Video starts at a keyframe, and the header waits
/// for it (its picture size; an H.264 track's parameter sets become the file's codec private data), audio with it.
/// Clusters are at most a second long and each goes to the kernel as it closes: a file cut by a crash plays to
/// within a second of the cut.
///
/// `@unchecked Sendable`: the queue and counters are guarded by `condition`; the muxer belongs to the worker.
public final class TrackRecorder: @unchecked Sendable {
    public enum VideoCodec: String, Sendable { case vp8, h264 }

    /// What happened to a recording, reported once when its worker ends.
    public struct Summary: Sendable, Equatable {
        public var videoFrames = 0
        public var audioFrames = 0
        public var bytes = 0
        public var droppedFrames = 0
        public var durationMs: Int64 = 0
        /// Why it ended early, nil when it was stopped.
        public var error: String?
    }

    public let path: String
    public let video: VideoCodec?
    public let hasAudio: Bool
    /// `.mkv` for H.264, `.webm` otherwise.
    public static func fileExtension(video: VideoCodec?) -> String { video == .h264 ? "mkv" : "webm" }

    private struct Frame {
        var isVideo: Bool
        var data: [UInt8]
        var rtpTimestamp: UInt32
        var isKeyframe: Bool
        var arrivalMs: Int64
    }

    private let condition = NSCondition()
    private var queue: [Frame] = []
    private var stopping = false
    private var finished = false
    private var summary = Summary()
    private let startMs: Int64
    private let logger: Logger
    private let onFinish: @Sendable (Summary) -> Void
    private let maxQueued: Int

    /// Creates the file (never an existing one) and starts the worker. `startMs`: the arrival clock's now;
    /// `maxQueued`: frames waiting for the worker (200: 2 s of 30 fps video and 20 ms audio frames, more than a
    /// jitter buffer releases at once).
    public init(
        path: String, video: VideoCodec?, audio: Bool, startMs: Int64, maxQueued: Int = 200,
        quota: RecordingQuota? = nil, logger: Logger,
        onFinish: @escaping @Sendable (Summary) -> Void
    ) throws(RecordingError) {
        guard video != nil || audio else { throw RecordingError(message: "nothing to record: no audio and no video") }
        self.path = path
        self.video = video
        hasAudio = audio
        self.startMs = startMs
        self.logger = logger
        self.onFinish = onFinish
        self.maxQueued = maxQueued
        let file: RecordingFile
        do { file = try RecordingFile(path: path, quota: quota) } catch {
            throw RecordingError(message: error.description)
        }
        OutputCore.startWorker(named: "rec-track") { [self] in run(file) }
    }

    /// A complete video frame, as the depacketizer made it (H.264 in Annex B).
    public func video(_ data: [UInt8], rtpTimestamp: UInt32, isKeyframe: Bool, arrivalMs: Int64) {
        push(Frame(isVideo: true, data: data, rtpTimestamp: rtpTimestamp, isKeyframe: isKeyframe, arrivalMs: arrivalMs))
    }

    /// One Opus packet.
    public func audio(_ data: [UInt8], rtpTimestamp: UInt32, arrivalMs: Int64) {
        push(Frame(isVideo: false, data: data, rtpTimestamp: rtpTimestamp, isKeyframe: true, arrivalMs: arrivalMs))
    }

    /// Writes what is queued, closes the file and waits (at most about 5 s) for the worker to end.
    public func stop() {
        condition.withLock {
            stopping = true
            condition.broadcast()
        }
        let deadline = Date().addingTimeInterval(5)
        condition.withLock {
            while !finished { if !condition.wait(until: deadline) { break } }
        }
    }

    public var counters: Summary { condition.withLock { summary } }

    private func push(_ frame: Frame) {
        condition.withLock {
            guard !stopping else { return }
            guard queue.count < maxQueued else {
                summary.droppedFrames += 1
                return
            }
            queue.append(frame)
            condition.signal()
        }
    }

    /// The next frames, oldest first; empty once stopping with nothing left.
    private func take(into batch: inout [Frame]) {
        condition.withLock {
            while queue.isEmpty && !stopping { condition.wait() }
            swap(&batch, &queue)
            queue.removeAll(keepingCapacity: true)
        }
    }

    private func run(_ file: RecordingFile) {
        var writer = TrackWriter(video: video, audio: hasAudio, startMs: startMs)
        var error: String?
        var batch: [Frame] = []
        batch.reserveCapacity(maxQueued)
        do {
            let io = try MuxerIO.descriptor(file.fileDescriptor)
            while true {
                take(into: &batch)
                if batch.isEmpty { break }
                for frame in batch {
                    try writer.write(
                        isVideo: frame.isVideo, data: frame.data, rtpTimestamp: frame.rtpTimestamp,
                        isKeyframe: frame.isKeyframe, arrivalMs: frame.arrivalMs, io: io)
                    try file.countMuxedBytes()
                }
                batch.removeAll(keepingCapacity: true)
                condition.withLock {
                    summary.videoFrames = writer.videoFrames
                    summary.audioFrames = writer.audioFrames
                }
            }
            try writer.finish()
            withExtendedLifetime(io) {}
            try file.close()
        } catch let failure {
            error = failure.description
            logger.warning("track recording failed", metadata: ["file": "\(path)", "error": "\(failure)"])
        }
        let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
        let result: Summary = condition.withLock {
            summary.videoFrames = writer.videoFrames
            summary.audioFrames = writer.audioFrames
            summary.bytes = size
            summary.durationMs = writer.durationMs
            summary.error = error
            stopping = true
            queue.removeAll()
            return summary
        }
        // Reported before `stop` returns.
        onFinish(result)
        condition.withLock {
            finished = true
            condition.broadcast()
        }
    }
}

/// The Matroska muxer of a `TrackRecorder` and the timestamps of its tracks. Confined to the recorder's worker.
struct TrackWriter {
    let video: TrackRecorder.VideoCodec?
    let audio: Bool
    let startMs: Int64
    private var muxer: TrackMuxer?
    private var videoClock = TrackClock(rate: 90_000)
    private var audioClock = TrackClock(rate: 48_000)
    /// Audio that came before the header could be written (an H.264 track waits for its parameter sets).
    private var early: [(data: [UInt8], ms: Int64)] = []
    private(set) var durationMs: Int64 = 0
    private(set) var videoFrames = 0
    private(set) var audioFrames = 0
    private var firstMs: Int64?

    init(video: TrackRecorder.VideoCodec?, audio: Bool, startMs: Int64) {
        self.video = video
        self.audio = audio
        self.startMs = startMs
    }

    /// Writes one frame (video before its first keyframe is skipped; audio may wait for the header).
    mutating func write(
        isVideo: Bool, data: [UInt8], rtpTimestamp: UInt32, isKeyframe: Bool, arrivalMs: Int64, io: MuxerIO
    ) throws(OutputIOError) {
        if isVideo {
            guard let video, videoClock.started || isKeyframe else { return }
            let ms = videoClock.ms(rtpTimestamp, arrivalMs: arrivalMs - startMs)
            if muxer == nil {
                let extradata = video == .h264 ? H264ParameterSets.annexB(in: data) : []
                guard video != .h264 || !extradata.isEmpty else { return }
                let size = video == .h264 ? KeyframeSize.h264(extradata) : KeyframeSize.vp8(data)
                try open(io: io, extradata: extradata, size: size)
            }
            try muxer?.write(stream: .video, data: data, ms: ms, isKeyframe: isKeyframe)
            videoFrames += 1
            note(ms)
            return
        }
        guard audio else { return }
        let ms = audioClock.ms(rtpTimestamp, arrivalMs: arrivalMs - startMs)
        if muxer == nil {
            // Two seconds of audio wait for the video's first keyframe (its size, an H.264 track's parameter sets).
            // A VP8 camera that sends none by then is recorded without knowing its size; H.264 cannot be.
            if video == nil || (video == .vp8 && early.count >= 100) {
                try open(io: io, extradata: [], size: nil)
            } else {
                if early.count >= 100 { early.removeFirst() }
                early.append((data, ms))
                return
            }
        }
        try muxer?.write(stream: .audio, data: data, ms: ms, isKeyframe: true)
        audioFrames += 1
        note(ms)
    }

    mutating func finish() throws(OutputIOError) {
        try muxer?.finish()
        muxer = nil
    }

    private mutating func note(_ ms: Int64) {
        firstMs = min(firstMs ?? ms, ms)
        durationMs = max(durationMs, ms - (firstMs ?? ms))
    }

    private mutating func open(
        io: MuxerIO, extradata: [UInt8], size: (width: Int, height: Int)?
    ) throws(OutputIOError) {
        let made = try TrackMuxer(io: io, video: video, videoExtradata: extradata, size: size, audio: audio)
        muxer = made
        for (data, ms) in early {
            try made.write(stream: .audio, data: data, ms: ms, isKeyframe: true)
            audioFrames += 1
            note(ms)
        }
        early.removeAll()
    }
}

/// A track's RTP timestamps as milliseconds since the recording started: unwrapped, anchored at the arrival of its
/// first frame, never going back.
struct TrackClock {
    let rate: Int64
    private var first: (rtp: Int64, ms: Int64)?
    private var last: (wrapped: UInt32, unwrapped: Int64)?
    private var lastMs: Int64 = -1

    init(rate: Int64) { self.rate = rate }

    var started: Bool { first != nil }

    mutating func ms(_ rtp: UInt32, arrivalMs: Int64) -> Int64 {
        let unwrapped = last.map { $0.unwrapped + Int64(Int32(bitPattern: rtp &- $0.wrapped)) } ?? Int64(rtp)
        last = (rtp, unwrapped)
        let anchor = first ?? (unwrapped, max(0, arrivalMs))
        first = anchor
        let ms = max(lastMs + (lastMs < 0 ? 1 : 0), anchor.ms + (unwrapped - anchor.rtp) * 1000 / rate)
        lastMs = ms
        return ms
    }
}

/// The SPS and PPS of an H.264 access unit in Annex B, as Annex B (Matroska's muxer turns them into its codec
/// private data); empty when the unit has neither.
enum H264ParameterSets {
    static func annexB(in unit: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var sps = false
        var pps = false
        var i = 0
        var starts: [Int] = []
        while i + 3 <= unit.count {
            if unit[i] == 0, unit[i + 1] == 0, unit[i + 2] == 1 {
                starts.append(i + 3)
                i += 3
            } else {
                i += 1
            }
        }
        for (n, start) in starts.enumerated() where start < unit.count {
            var end = n + 1 < starts.count ? starts[n + 1] - 3 : unit.count
            while end > start, unit[end - 1] == 0 { end -= 1 }
            let type = unit[start] & 0x1F
            guard type == 7 || type == 8 else { continue }
            if type == 7 { sps = true } else { pps = true }
            out += [0, 0, 0, 1] + unit[start..<end]
        }
        return sps && pps ? out : []
    }
}

/// Why a track recording could not start.
public struct RecordingError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// libavformat's Matroska (or WebM) muxer for a `TrackWriter`.
final class TrackMuxer {
    enum Stream { case video, audio }

    private var context: UnsafeMutablePointer<AVFormatContext>?
    private let io: MuxerIO
    private let packet: UnsafeMutablePointer<AVPacket>
    private var videoIndex: Int32 = -1
    private var audioIndex: Int32 = -1
    private var timeBases: [Int32: AVRational] = [:]

    init(
        io: MuxerIO, video: TrackRecorder.VideoCodec?, videoExtradata: [UInt8], size: (width: Int, height: Int)?,
        audio: Bool
    ) throws(OutputIOError) {
        self.io = io
        guard let packet = av_packet_alloc() else { throw OutputIOError(description: "out of memory", isFinal: true) }
        self.packet = packet
        let format = video == .h264 ? "matroska" : "webm"
        var made: UnsafeMutablePointer<AVFormatContext>?
        let status = avformat_alloc_output_context2(&made, nil, format, nil)
        guard status >= 0, let made else { throw MuxerIO.error(status, "cannot make the \(format) muxer") }
        context = made
        cohost_set_interrupt(made, io.deadline)
        made.pointee.pb = io.context
        made.pointee.flags |= AVFMT_FLAG_FLUSH_PACKETS
        made.pointee.flush_packets = 1
        if let video {
            guard let stream = avformat_new_stream(made, nil), let p = stream.pointee.codecpar else {
                throw OutputIOError(description: "out of memory", isFinal: true)
            }
            p.pointee.codec_type = AVMEDIA_TYPE_VIDEO
            p.pointee.codec_id = video == .h264 ? AV_CODEC_ID_H264 : AV_CODEC_ID_VP8
            if !videoExtradata.isEmpty { try Self.setExtradata(videoExtradata, p) }
            // The Matroska header wants a size: the first keyframe's (each keyframe carries its own).
            p.pointee.width = Int32(size?.width ?? 640)
            p.pointee.height = Int32(size?.height ?? 480)
            stream.pointee.time_base = AVRational(num: 1, den: 1000)
            videoIndex = stream.pointee.index
        }
        if audio {
            guard let stream = avformat_new_stream(made, nil), let p = stream.pointee.codecpar else {
                throw OutputIOError(description: "out of memory", isFinal: true)
            }
            p.pointee.codec_type = AVMEDIA_TYPE_AUDIO
            p.pointee.codec_id = AV_CODEC_ID_OPUS
            p.pointee.sample_rate = 48_000
            av_channel_layout_default(&p.pointee.ch_layout, 2)
            // RFC 7845 §5.1 OpusHead: version 1, 2 channels, 312 samples of pre-skip, 48 kHz, gain 0, family 0.
            try Self.setExtradata(Array("OpusHead".utf8) + [1, 2, 0x38, 0x01, 0x80, 0xBB, 0, 0, 0, 0, 0], p)
            p.pointee.initial_padding = 312
            stream.pointee.time_base = AVRational(num: 1, den: 1000)
            audioIndex = stream.pointee.index
        }
        var options: OpaquePointer?
        // Clusters of at most a second, each written as it closes.
        av_dict_set(&options, "cluster_time_limit", "1000", 0)
        defer { av_dict_free(&options) }
        io.set(5000)
        let written = avformat_write_header(made, &options)
        io.set(0)
        guard written >= 0 else { throw io.error(written, "cannot write the \(format) header") }
        for index in [videoIndex, audioIndex] where index >= 0 {
            timeBases[index] = made.pointee.streams[Int(index)]!.pointee.time_base
        }
    }

    deinit {
        if let context {
            context.pointee.pb = nil
            avformat_free_context(context)
        }
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
    }

    private static func setExtradata(
        _ bytes: [UInt8], _ p: UnsafeMutablePointer<AVCodecParameters>
    ) throws(OutputIOError) {
        guard let buffer = av_mallocz(bytes.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
            throw OutputIOError(description: "out of memory", isFinal: true)
        }
        bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        p.pointee.extradata = buffer.assumingMemoryBound(to: UInt8.self)
        p.pointee.extradata_size = Int32(bytes.count)
    }

    func write(stream: Stream, data: [UInt8], ms: Int64, isKeyframe: Bool) throws(OutputIOError) {
        let index = stream == .video ? videoIndex : audioIndex
        guard let context, index >= 0, !data.isEmpty, let timeBase = timeBases[index] else { return }
        let status = data.withUnsafeBufferPointer { bytes -> Int32 in
            av_packet_unref(packet)
            // Not reference counted: the muxer copies what it keeps.
            packet.pointee.data = UnsafeMutablePointer(mutating: bytes.baseAddress!)
            packet.pointee.size = Int32(bytes.count)
            packet.pointee.stream_index = index
            let ts = av_rescale_q(ms, AVRational(num: 1, den: 1000), timeBase)
            packet.pointee.dts = ts
            packet.pointee.pts = ts
            if isKeyframe { packet.pointee.flags |= AV_PKT_FLAG_KEY }
            io.set(5000)
            defer { io.set(0) }
            // Interleaved by the muxer: the two tracks arrive each in its own order.
            let written = av_interleaved_write_frame(context, packet)
            packet.pointee.data = nil
            packet.pointee.size = 0
            return written
        }
        guard status >= 0 else { throw io.error(status, "cannot write") }
    }

    func finish() throws(OutputIOError) {
        guard let context else { return }
        io.set(5000)
        defer { io.set(0) }
        let status = av_write_trailer(context)
        guard status >= 0 else { throw io.error(status, "cannot finish") }
    }
}
