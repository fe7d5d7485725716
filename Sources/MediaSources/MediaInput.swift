import CAVFormat
import CRTMP
import CSRT

/// One media input read with libavformat: a file, or a URL of any protocol the library was built with (rtsp, rtmp,
/// srt, http for HLS), read packet by packet. libavformat's network calls block; each one here runs under a
/// deadline that libavformat's interrupt callback checks, and `cancel()` ends any of them at once from another
/// thread, so a dead camera never holds its reader. Everything but `cancel` is confined to the reading thread.
public final class MediaInput: @unchecked Sendable {
    /// One elementary stream of the input.
    public struct Stream: Sendable, Equatable {
        public enum Kind: Sendable, Equatable { case video, audio, other }
        public var index: Int
        public var kind: Kind
        /// libavcodec's name of the codec: `h264`, `hevc`, `mjpeg`, `aac`, `pcm_mulaw`, `opus`, `mp3`, …
        public var codec: String
        public var width: Int
        public var height: Int
        public var sampleRate: Int
        public var channels: Int
        /// Seconds per timestamp tick.
        public var timeBase: Double
    }

    /// What a packet is, besides its bytes.
    public struct PacketInfo: Sendable, Equatable {
        public var streamIndex: Int
        /// Presentation and decoding time in seconds on the input's clock, when the container says.
        public var pts: Double?
        public var dts: Double?
        public var isKeyframe: Bool
    }

    public let streams: [Stream]
    /// The container or protocol libavformat recognised (`mov,mp4,m4a,3gp,3g2,mj2`, `rtsp`, `flv`, `wav`, …).
    public let formatName: String

    private var context: UnsafeMutablePointer<AVFormatContext>?
    private let deadline: UnsafeMutablePointer<cohost_io_deadline>
    private let packet: UnsafeMutablePointer<AVPacket>
    /// The input's bytes when they come from a socket of Cohost's own (an SRT connection), freed after the context.
    private var customIO: UnsafeMutablePointer<AVIOContext>?
    /// What `customIO` reads from, kept open as long as the input.
    private let connection: (any PushedConnection)?

    /// The host every URL opened through the context must name (`cohost_io_pin`), owned as long as the input.
    private let pin: IOPin?

    /// Opens `url` with libavformat `options` (`rtsp_transport`, `timeout`, …) and reads its stream information,
    /// each within `timeoutMs`. With `pinnedHost`, whatever the demuxer opens besides (an HLS playlist's segments)
    /// must be on that host.
    public convenience init(
        url: String, options: [String: String] = [:], timeoutMs: Int64 = 5000, pinnedHost: String? = nil
    ) throws(MediaInputError) {
        try self.init(url: url, connection: nil, options: options, timeoutMs: timeoutMs, pinnedHost: pinnedHost)
    }

    /// Reads what an encoder pushes on an accepted connection: MPEG-TS over SRT, FLV over RTMP. The connection's
    /// receive timeout bounds each read; closing it ends a blocked one.
    convenience init(connection: any PushedConnection, timeoutMs: Int64 = 5000) throws(MediaInputError) {
        let format = connection is RTMPConnection ? "flv" : "mpegts"
        try self.init(url: "", connection: connection, options: ["format_whitelist": format], timeoutMs: timeoutMs)
    }

    private init(
        url: String, connection: (any PushedConnection)?, options: [String: String], timeoutMs: Int64,
        pinnedHost: String? = nil
    ) throws(MediaInputError) {
        _ = Self.quietLogs
        self.connection = connection
        pin = pinnedHost.map { IOPin(host: $0) }
        deadline = .allocate(capacity: 1)
        deadline.pointee = cohost_io_deadline(deadline_us: 0, cancelled: 0)
        guard let allocated = av_packet_alloc() else {
            deadline.deallocate()
            throw MediaInputError("out of memory")
        }
        packet = allocated
        guard let made = avformat_alloc_context() else {
            var p: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&p)
            deadline.deallocate()
            throw MediaInputError("out of memory")
        }
        cohost_set_interrupt(made, deadline)
        if let pin { cohost_pin_io(made, pin.pointer) }
        if let connection {
            var io: UnsafeMutablePointer<AVIOContext>?
            if let srt = connection as? SRTConnection {
                io = cohost_custom_io(made, cohost_srt_avio_read, srt.socket, 32 * 1316)
                // Every read asks for at least one whole SRT message.
                io?.pointee.max_packet_size = 1316
            } else if let rtmp = connection as? RTMPConnection {
                io = cohost_custom_io(made, cohost_rtmp_avio_read, UnsafeMutableRawPointer(rtmp.session), 65536)
            }
            guard let io else {
                avformat_free_context(made)
                var p: UnsafeMutablePointer<AVPacket>? = packet
                av_packet_free(&p)
                deadline.deallocate()
                throw MediaInputError("out of memory")
            }
            customIO = io
        }
        var dictionary: OpaquePointer?
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        var input: UnsafeMutablePointer<AVFormatContext>? = made
        Self.set(deadline, timeoutMs)
        // On failure avformat_open_input frees the context itself.
        let status = avformat_open_input(&input, url, nil, &dictionary)
        guard status >= 0, let opened = input else {
            var p: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&p)
            cohost_free_custom_io(customIO)
            let error = Self.error(status, "cannot open the input", deadline)
            deadline.deallocate()
            throw error
        }
        // A redirect to another host (RTSP's, followed inside the open) was not checked: nothing from there is read.
        if let pin, cohost_url_is_pinned(opened.pointee.url, pin.pointer) == 0 {
            avformat_close_input(&input)
            var p: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&p)
            cohost_free_custom_io(customIO)
            deadline.deallocate()
            throw MediaInputError("cannot open the input: it redirected to another host")
        }
        Self.set(deadline, timeoutMs)
        let found = avformat_find_stream_info(opened, nil)
        guard found >= 0 else {
            let error = Self.error(found, "cannot read the input's streams", deadline)
            avformat_close_input(&input)
            var p: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&p)
            cohost_free_custom_io(customIO)
            deadline.deallocate()
            throw error
        }
        Self.set(deadline, 0)
        formatName = opened.pointee.iformat.map { String(cString: $0.pointee.name) } ?? "unknown"
        var streams: [Stream] = []
        for i in 0..<Int(opened.pointee.nb_streams) {
            guard let stream = opened.pointee.streams[i], let parameters = stream.pointee.codecpar else { continue }
            let p = parameters.pointee
            let kind: Stream.Kind =
                p.codec_type == AVMEDIA_TYPE_VIDEO ? .video : p.codec_type == AVMEDIA_TYPE_AUDIO ? .audio : .other
            let base = stream.pointee.time_base
            streams.append(
                Stream(
                    index: i, kind: kind, codec: String(cString: avcodec_get_name(p.codec_id)),
                    width: Int(p.width), height: Int(p.height), sampleRate: Int(p.sample_rate),
                    channels: Int(p.ch_layout.nb_channels),
                    timeBase: base.den == 0 ? 0 : Double(base.num) / Double(base.den)))
        }
        self.streams = streams
        context = opened
    }

    deinit {
        avformat_close_input(&context)
        cohost_free_custom_io(customIO)
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
        deadline.deallocate()
    }

    /// Reads the next packet within `timeoutMs` and hands it to `body` (its bytes valid only during the call: no
    /// copy is made). Returns false at the end of the input.
    public func read(
        timeoutMs: Int64 = 5000, _ body: (PacketInfo, UnsafeRawBufferPointer) -> Void
    ) throws(MediaInputError) -> Bool {
        try readPacket(timeoutMs: timeoutMs) { info, packet in
            body(
                info,
                UnsafeRawBufferPointer(start: UnsafeRawPointer(packet.pointee.data), count: Int(packet.pointee.size)))
        }
    }

    /// A stream's codec parameters, for a decoder of this module to open from (nil for an unknown index).
    func parameters(of index: Int) -> UnsafePointer<AVCodecParameters>? {
        guard let context, index >= 0, index < Int(context.pointee.nb_streams),
            let stream = context.pointee.streams[index]
        else { return nil }
        return UnsafePointer(stream.pointee.codecpar)
    }

    /// Goes back to the start of the input (a looping file); false when the input cannot seek.
    func rewind() -> Bool {
        guard let context else { return false }
        Self.set(deadline, 5000)
        defer { Self.set(deadline, 0) }
        return avformat_seek_file(context, -1, Int64.min, 0, 0, 0) >= 0
    }

    /// `read`, handing the packet itself to this module's decoders.
    func readPacket(
        timeoutMs: Int64, _ body: (PacketInfo, UnsafeMutablePointer<AVPacket>) -> Void
    ) throws(MediaInputError) -> Bool {
        guard let context else { throw MediaInputError("the input is closed") }
        Self.set(deadline, timeoutMs)
        defer { Self.set(deadline, 0) }
        let status = av_read_frame(context, packet)
        if status == cohost_avformat_eof() { return false }
        guard status >= 0 else { throw Self.error(status, "cannot read from the input", deadline) }
        defer { av_packet_unref(packet) }
        let p = packet.pointee
        let index = Int(p.stream_index)
        let base = index < streams.count ? streams[index].timeBase : 0
        let none = cohost_av_nopts_value()
        let info = PacketInfo(
            streamIndex: index, pts: p.pts == none ? nil : Double(p.pts) * base,
            dts: p.dts == none ? nil : Double(p.dts) * base, isKeyframe: p.flags & AV_PKT_FLAG_KEY != 0)
        body(info, packet)
        return true
    }

    /// Ends whatever call is blocked now and every later one (from any thread); a pushed input's connection closes.
    public func cancel() {
        cohost_io_cancel(deadline)
        connection?.close()
    }

    /// The next blocking call gives up `timeoutMs` from now (0: no deadline; `cancel` still ends it).
    private static func set(_ deadline: UnsafeMutablePointer<cohost_io_deadline>, _ timeoutMs: Int64) {
        deadline.pointee.deadline_us = timeoutMs > 0 ? av_gettime_relative() + timeoutMs * 1000 : 0
    }

    /// The library's message, or "timed out or cancelled" when the interrupt ended the call: a demuxer may report
    /// that as invalid data (RTSP does) rather than as the interrupt's own code.
    private static func error(
        _ code: Int32, _ what: String, _ deadline: UnsafeMutablePointer<cohost_io_deadline>
    ) -> MediaInputError {
        let d = deadline.pointee
        if code == cohost_avformat_exit() || d.cancelled != 0
            || (d.deadline_us > 0 && av_gettime_relative() > d.deadline_us)
        {
            return MediaInputError("\(what): timed out or cancelled")
        }
        var buffer = [CChar](repeating: 0, count: 128)
        buffer.withUnsafeMutableBufferPointer { cohost_avformat_error_string(code, $0.baseAddress, $0.count) }
        let text = buffer.withUnsafeBufferPointer { $0.baseAddress.map { String(cString: $0) } ?? "error \(code)" }
        return MediaInputError("\(what): \(text)")
    }

    /// libavformat logs to stderr at INFO by default; warnings and errors are enough for a server.
    /// Its lines go through a filter that hides the credentials of any URL they quote.
    private static let quietLogs: Void = {
        av_log_set_level(AV_LOG_WARNING)
        cohost_install_redacting_log()
    }()
}

/// The C struct `cohost_pin_io` points the context at: the allowed host and libavformat's own `io_open`.
private final class IOPin {
    let pointer: UnsafeMutablePointer<cohost_io_pin>

    init(host: String) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: cohost_io_pin())
        withUnsafeMutableBytes(of: &pointer.pointee.host) { raw in
            let bytes = Array(host.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
    }

    deinit { pointer.deallocate() }
}
