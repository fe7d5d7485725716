import CAVFormat
import Foundation
import RTP

/// The programme's own H.264 and AAC, as every output gets them (FLV tags), written by one of libavformat's muxers:
/// fragmented MP4 or MPEG-TS, into a file descriptor or an SRT connection. Nothing is encoded again: each tag's
/// payload becomes a packet as it is (the muxer adds what its container wants, such as Annex B start codes and ADTS
/// headers for MPEG-TS). Blocking calls run under a deadline, and `cancel()` ends one from another thread.
/// Confined to its output's worker thread (but `cancel`).
final class ProgrammeMuxer: @unchecked Sendable {
    enum Container: Sendable, Equatable {
        /// A fragment at each keyframe and every half second between, each written whole as it closes: a file cut
        /// anywhere plays to within a second of the cut (half a second of fragment, and what the queue held).
        case fragmentedMP4
        case mpegTS
        /// CMAF fragments cut by the caller (`flushFragment`), for HLS: a header with an empty moov (the init
        /// segment), then one moof+mdat per flush.
        case cmaf

        var formatName: String { self == .mpegTS ? "mpegts" : "mp4" }
    }

    private var context: UnsafeMutablePointer<AVFormatContext>?
    /// Where it writes; kept as long as the muxer.
    let io: MuxerIO
    private let packet: UnsafeMutablePointer<AVPacket>
    private var video: (index: Int32, timeBase: AVRational)?
    private var audio: (index: Int32, timeBase: AVRational)?
    private let writeTimeoutMs: Int64
    /// A packet's duration is what the muxer gives the last sample of a fragment (without one it would last nothing,
    /// and the next fragment start after a gap). It must not reach past the next packet, which the muxer would
    /// then move and strip of its pts: video takes the shortest of its last steps (a millisecond's gap at most, from
    /// the tags' rounding); audio, whose frames are 1024 samples, is stamped sample-exact from frame to frame.
    private var lastVideoDtsMs: Int64?
    private var videoSteps: [Int64] = []
    private var nextAudioDts: Int64?

    /// Writes the container's header into `io` for the streams the header tags describe (the AVC and AAC sequence
    /// headers; a stream without one is left out).
    init(io: MuxerIO, container: Container, headers: [FLVTag], writeTimeoutMs: Int64 = 5000) throws(OutputIOError) {
        self.io = io
        self.writeTimeoutMs = writeTimeoutMs
        guard let packet = av_packet_alloc() else { throw OutputIOError(description: "out of memory", isFinal: true) }
        self.packet = packet
        var made: UnsafeMutablePointer<AVFormatContext>?
        let status = avformat_alloc_output_context2(&made, nil, container.formatName, nil)
        guard status >= 0, let made else {
            throw MuxerIO.error(status, "cannot make the \(container.formatName) muxer")
        }
        context = made
        cohost_set_interrupt(made, io.deadline)
        made.pointee.pb = io.context
        made.pointee.flags |= AVFMT_FLAG_FLUSH_PACKETS
        made.pointee.flush_packets = 1
        try addStreams(headers, to: made)
        var options: OpaquePointer?
        switch container {
        case .fragmentedMP4:
            av_dict_set(&options, "movflags", "+empty_moov+default_base_moof+frag_keyframe", 0)
            av_dict_set(&options, "frag_duration", "500000", 0)
        case .cmaf:
            av_dict_set(&options, "movflags", "+frag_custom+empty_moov+default_base_moof+cmaf+skip_trailer", 0)
        case .mpegTS:
            // Each audio frame in a PES of its own, written at once (the muxer would gather ~3 KB first).
            av_dict_set(&options, "pes_payload_size", "0", 0)
        }
        defer { av_dict_free(&options) }
        io.set(writeTimeoutMs)
        let written = avformat_write_header(made, &options)
        if written >= 0 { avio_flush(io.context) }
        io.set(0)
        guard written >= 0 else { throw io.error(written, "cannot write the \(container.formatName) header") }
        if let v = video { video = (v.index, made.pointee.streams[Int(v.index)]!.pointee.time_base) }
        if let a = audio { audio = (a.index, made.pointee.streams[Int(a.index)]!.pointee.time_base) }
    }

    /// Frees the muxer (a failed init too: the object was whole, so `deinit` runs); `io` goes with its last owner.
    deinit {
        if let context {
            context.pointee.pb = nil
            avformat_free_context(context)
        }
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
    }

    /// Writes one media tag (sequence headers and data tags are not media: skipped).
    func write(_ tag: FLVTag) throws(OutputIOError) {
        guard let context, !tag.isSequenceHeader, tag.body.count > 2 else { return }
        let body = tag.body
        let dtsMs = Int64(tag.timestampMs)
        var ptsMs = dtsMs
        let stream: (index: Int32, timeBase: AVRational)
        let payload: Range<Int>
        switch tag.kind {
        case .video:
            // [frame type | codec] [AVC packet type] [composition time, 24-bit signed] AVCC…
            guard let video, body.count > 5, body[1] == 1 else { return }
            let cts = Int32(bitPattern: UInt32(body[2]) << 24 | UInt32(body[3]) << 16 | UInt32(body[4]) << 8) >> 8
            ptsMs += Int64(cts)
            stream = video
            payload = 5..<body.count
            if let last = lastVideoDtsMs, dtsMs > last, dtsMs - last < 1000 {
                if videoSteps.count == 4 { videoSteps.removeFirst() }
                videoSteps.append(dtsMs - last)
            }
            lastVideoDtsMs = dtsMs
        case .audio:
            // [sound format…] [AAC packet type] raw AAC
            guard let audio, body[1] == 1 else { return }
            stream = audio
            payload = 2..<body.count
        case .script:
            return
        }
        let millis = AVRational(num: 1, den: 1000)
        let status = body.withUnsafeBufferPointer { bytes -> Int32 in
            av_packet_unref(packet)
            // The tag's own bytes, not copied: a packet that is not reference counted is only read by the muxer,
            // which makes its own reference (or copy) before keeping or filtering it.
            packet.pointee.data = UnsafeMutablePointer(mutating: bytes.baseAddress! + payload.lowerBound)
            packet.pointee.size = Int32(payload.count)
            packet.pointee.stream_index = stream.index
            packet.pointee.dts = av_rescale_q(dtsMs, millis, stream.timeBase)
            packet.pointee.pts = av_rescale_q(ptsMs, millis, stream.timeBase)
            if tag.kind == .audio {
                // The audio time base is the sample rate: the ms stamp is within a sample count of 48 of the
                // frame's true start, which follows the last frame's unless there was a gap.
                if let next = nextAudioDts, abs(packet.pointee.dts - next) < 512 {
                    packet.pointee.dts = next
                    packet.pointee.pts = next
                }
                packet.pointee.duration = 1024
                nextAudioDts = packet.pointee.dts + 1024
            } else {
                packet.pointee.duration = av_rescale_q(videoSteps.min() ?? 33, millis, stream.timeBase)
            }
            if tag.isKeyframe { packet.pointee.flags |= AV_PKT_FLAG_KEY }
            io.set(writeTimeoutMs)
            defer { io.set(0) }
            // Not reference counted: the muxer copies the bytes it keeps. av_write_frame: the tags come
            // interleaved already, and nothing is held back.
            let written = av_write_frame(context, packet)
            packet.pointee.data = nil
            packet.pointee.size = 0
            return written
        }
        guard status >= 0 else { throw io.error(status, "cannot write") }
    }

    /// Closes the fragment written since the last one (`.cmaf`) and hands its bytes to the IO at once.
    func flushFragment() throws(OutputIOError) {
        guard let context else { return }
        io.set(writeTimeoutMs)
        defer { io.set(0) }
        let status = av_write_frame(context, nil)
        guard status >= 0 else { throw io.error(status, "cannot close a fragment") }
        avio_flush(io.context)
    }

    /// Writes the trailer (the MP4 muxer's last fragment) and flushes.
    func finish() throws(OutputIOError) {
        guard let context else { return }
        io.set(writeTimeoutMs)
        defer { io.set(0) }
        let status = av_write_trailer(context)
        guard status >= 0 else { throw io.error(status, "cannot finish") }
    }

    private func addStreams(
        _ headers: [FLVTag], to context: UnsafeMutablePointer<AVFormatContext>
    )
        throws(OutputIOError)
    {
        for tag in headers where tag.isSequenceHeader {
            switch tag.kind {
            case .video:
                // [0x17] [0: sequence header] [0, 0, 0] AVCDecoderConfigurationRecord
                guard video == nil, tag.body.count > 5 else { continue }
                let record = Array(tag.body[5...])
                let size = Self.pictureSize(record)
                let stream = try newStream(context, extradata: record)
                let p = stream.pointee.codecpar!
                p.pointee.codec_type = AVMEDIA_TYPE_VIDEO
                p.pointee.codec_id = AV_CODEC_ID_H264
                p.pointee.width = Int32(size?.width ?? 0)
                p.pointee.height = Int32(size?.height ?? 0)
                stream.pointee.time_base = AVRational(num: 1, den: 90_000)
                video = (stream.pointee.index, stream.pointee.time_base)
            case .audio:
                // [0xAF] [0: sequence header] AudioSpecificConfig
                guard audio == nil, tag.body.count >= 4 else { continue }
                let config = Array(tag.body[2...])
                let rates = [
                    96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000,
                ]
                let rateIndex = Int((config[0] & 0x07) << 1 | config[1] >> 7)
                let channels = Int((config[1] >> 3) & 0x0F)
                let stream = try newStream(context, extradata: config)
                let p = stream.pointee.codecpar!
                p.pointee.codec_type = AVMEDIA_TYPE_AUDIO
                p.pointee.codec_id = AV_CODEC_ID_AAC
                p.pointee.sample_rate = Int32(rateIndex < rates.count ? rates[rateIndex] : 48_000)
                av_channel_layout_default(&p.pointee.ch_layout, Int32(max(1, channels)))
                p.pointee.frame_size = 1024
                stream.pointee.time_base = AVRational(num: 1, den: p.pointee.sample_rate)
                audio = (stream.pointee.index, stream.pointee.time_base)
            case .script:
                continue
            }
        }
        guard video != nil || audio != nil else {
            throw OutputIOError(description: "the programme has no sequence header to start from", isFinal: true)
        }
    }

    private func newStream(
        _ context: UnsafeMutablePointer<AVFormatContext>, extradata: [UInt8]
    )
        throws(OutputIOError) -> UnsafeMutablePointer<AVStream>
    {
        guard let stream = avformat_new_stream(context, nil), let p = stream.pointee.codecpar,
            let bytes = av_mallocz(extradata.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))
        else { throw OutputIOError(description: "out of memory", isFinal: true) }
        extradata.withUnsafeBytes { bytes.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        p.pointee.extradata = bytes.assumingMemoryBound(to: UInt8.self)
        p.pointee.extradata_size = Int32(extradata.count)
        return stream
    }

    /// The picture size the record's first sequence parameter set declares.
    static func pictureSize(_ record: [UInt8]) -> (width: Int, height: Int)? {
        guard record.count > 8, record[5] & 0x1F > 0 else { return nil }
        let length = Int(record[6]) << 8 | Int(record[7])
        guard 8 + length <= record.count else { return nil }
        return KeyframeSize.h264([0, 0, 0, 1] + record[8..<(8 + length)])
    }
}

/// What a `ProgrammeMuxer` writes into: an AVIOContext writing to a file descriptor the caller opened (with its own
/// flags: O_EXCL, O_NOFOLLOW; not closed here), or one of libavformat's protocols connected to a URL (`srt://…`).
/// Every blocking call runs under `deadline`, which `cancel()` ends from another thread.
final class MuxerIO: @unchecked Sendable {
    let context: UnsafeMutablePointer<AVIOContext>
    let deadline: UnsafeMutablePointer<cohost_io_deadline>
    private let ownsConnection: Bool
    /// What the callback writes into, kept alive as long as the context that points at it.
    private let sink: ByteSink?

    private init(
        context: UnsafeMutablePointer<AVIOContext>, deadline: UnsafeMutablePointer<cohost_io_deadline>,
        ownsConnection: Bool, sink: ByteSink? = nil
    ) {
        self.context = context
        self.deadline = deadline
        self.ownsConnection = ownsConnection
        self.sink = sink
    }

    /// Buffers of 64 KiB appended to `sink` as they fill, and at every flush.
    static func memory(_ sink: ByteSink) throws(OutputIOError) -> MuxerIO {
        _ = quietLogs
        let write: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, Int32) -> Int32 = {
            opaque, buffer, size in
            guard let opaque, let buffer, size > 0 else { return size }
            Unmanaged<ByteSink>.fromOpaque(opaque).takeUnretainedValue().append(buffer, Int(size))
            return size
        }
        guard let io = cohost_callback_write_io(Unmanaged.passUnretained(sink).toOpaque(), write, 64 * 1024) else {
            throw OutputIOError(description: "out of memory", isFinal: true)
        }
        return MuxerIO(context: io, deadline: newDeadline(), ownsConnection: false, sink: sink)
    }

    /// Buffers of 64 KiB written to `fd` as they fill, and at every flush.
    static func descriptor(_ fd: Int32) throws(OutputIOError) -> MuxerIO {
        _ = quietLogs
        guard let io = cohost_fd_write_io(fd, 64 * 1024) else {
            throw OutputIOError(description: "out of memory", isFinal: true)
        }
        return MuxerIO(context: io, deadline: newDeadline(), ownsConnection: false)
    }

    /// Connects to `url` with `options` (the protocol's own), within `timeoutMs`.
    static func connect(_ url: String, options: [String: String], timeoutMs: Int64) throws(OutputIOError) -> MuxerIO {
        _ = quietLogs
        let deadline = newDeadline()
        var dictionary: OpaquePointer?
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        var io: UnsafeMutablePointer<AVIOContext>?
        deadline.pointee.deadline_us = av_gettime_relative() + timeoutMs * 1000
        let opened = cohost_avio_open_write(&io, url, deadline, &dictionary)
        deadline.pointee.deadline_us = 0
        guard opened >= 0, let io else {
            let error = errorFor(opened, "cannot connect", deadline)
            deadline.deallocate()
            throw error
        }
        return MuxerIO(context: io, deadline: deadline, ownsConnection: true)
    }

    private static func newDeadline() -> UnsafeMutablePointer<cohost_io_deadline> {
        let d = UnsafeMutablePointer<cohost_io_deadline>.allocate(capacity: 1)
        d.pointee = cohost_io_deadline(deadline_us: 0, cancelled: 0)
        return d
    }

    deinit {
        if ownsConnection {
            var io: UnsafeMutablePointer<AVIOContext>? = context
            avio_closep(&io)
        } else {
            avio_flush(context)
            cohost_free_custom_io(context)
        }
        deadline.deallocate()
    }

    /// The next blocking call gives up `timeoutMs` from now (0: no deadline; `cancel` still ends it).
    func set(_ timeoutMs: Int64) {
        deadline.pointee.deadline_us = timeoutMs > 0 ? av_gettime_relative() + timeoutMs * 1000 : 0
    }

    /// Ends a blocked call (and every later one) from another thread.
    func cancel() { cohost_io_cancel(deadline) }

    func error(_ code: Int32, _ what: String) -> OutputIOError { Self.errorFor(code, what, deadline) }

    static func error(_ code: Int32, _ what: String) -> OutputIOError { errorFor(code, what, nil) }

    private static func errorFor(
        _ code: Int32, _ what: String, _ deadline: UnsafeMutablePointer<cohost_io_deadline>?
    ) -> OutputIOError {
        if let d = deadline?.pointee,
            code == cohost_avformat_exit() || d.cancelled != 0
                || (d.deadline_us > 0 && av_gettime_relative() > d.deadline_us)
        {
            return OutputIOError(description: "\(what): timed out or cancelled", isFinal: false)
        }
        var buffer = [CChar](repeating: 0, count: 128)
        buffer.withUnsafeMutableBufferPointer { cohost_avformat_error_string(code, $0.baseAddress, $0.count) }
        let text = buffer.withUnsafeBufferPointer { $0.baseAddress.map { String(cString: $0) } ?? "error \(code)" }
        return OutputIOError(description: "\(what): \(text)", isFinal: false)
    }

    /// libavformat logs to stderr at INFO by default; its lines go through the filter that hides credentials.
    private static let quietLogs: Void = {
        av_log_set_level(AV_LOG_WARNING)
        cohost_install_redacting_log()
    }()
}

/// Bytes a muxer wrote into memory, taken by its owner after each flush. Confined to the muxer's thread.
final class ByteSink {
    private(set) var bytes: [UInt8] = []

    init(reserving capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    func append(_ pointer: UnsafePointer<UInt8>, _ count: Int) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: pointer, count: count))
    }

    /// What was written since the last call; the storage keeps its capacity.
    func take(into destination: inout [UInt8]) {
        destination.append(contentsOf: bytes)
        bytes.removeAll(keepingCapacity: true)
    }
}
