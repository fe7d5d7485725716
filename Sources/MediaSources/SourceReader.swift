import Foundation
import Media
import Clocks
import CAVFormat
import Codecs

/// A source's life as its reader sees it (protocol/events.schema.json, `source_state`).
public enum SourceState: String, Sendable, Equatable, Codable {
    case connecting, live, retrying, failed, ended
}

/// What one source reads and how.
public struct SourceInput: Sendable, Equatable {
    /// What libavformat opens: the network URL, or the file's path in the media directory.
    public var location: String
    public var isFile: Bool
    /// An encoder pushes it (`deliver`): the reader waits for its connections instead of opening `location`.
    public var pushed: Bool
    public var loop: Bool
    public var latencyMs: Int
    /// libavformat options (transport, protocol and format allow-lists, timeouts).
    public var options: [String: String]
    /// Whether pictures are decoded at all (not in an audio-only room).
    public var wantsVideo: Bool
    public var maxWidth: Int
    public var maxHeight: Int
    /// How far ahead of the wall clock a file is decoded: its latency, the audio buffered so that the reader thread
    /// may be held up that long without the mix running dry. A live input is never ahead (it comes as it comes).
    public var readAheadMs: Int { isFile ? latencyMs : 0 }

    public init(
        location: String, isFile: Bool, loop: Bool, latencyMs: Int, options: [String: String], wantsVideo: Bool,
        maxWidth: Int, maxHeight: Int, pushed: Bool = false
    ) {
        self.location = location
        self.isFile = isFile
        self.pushed = pushed
        self.loop = loop
        self.latencyMs = latencyMs
        self.options = options
        self.wantsVideo = wantsVideo
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
    }
}

/// Reads one source on a thread of its own: opens it with libavformat, decodes its first audio and video streams
/// into a `SourceFeed` paced by the input's timestamps, stitches loops and timestamp jumps into one timeline, and
/// retries a lost network input with backoff. Every blocking call has a deadline and `stop()` cancels it, so a dead
/// camera never holds the room, the API or shutdown.
public final class SourceReader: @unchecked Sendable {
    public typealias StateHandler = @Sendable (SourceState, _ attempt: Int, _ error: String?) -> Void
    /// The input opened with these streams; returns the feed to fill (the same one on every reconnect), or nil to
    /// give up (the room is gone). `forward` is the H.264 its pictures can reach receivers' slots as.
    public typealias OpenHandler =
        @Sendable (_ hasAudio: Bool, _ hasVideo: Bool, _ forward: SourceVideoFormat?) -> SourceFeed?

    private let input: SourceInput
    private let destinations: (any SourceDestinations)?
    private let onState: StateHandler
    private let onOpen: OpenHandler
    private let lock = NSCondition()
    private var stopped = false
    private var current: MediaInput?
    /// A pushed source's next connection, waiting for the reader.
    private var pending: (any PushedConnection)?
    private var thread: Thread?

    /// Reads give up after this long without a packet: the camera is gone.
    static let readTimeoutMs: Int64 = 3000
    static let openTimeoutMs: Int64 = 5000
    /// Retries wait 250 ms, 500 ms, 1 s, then 2 s: a camera that comes back is live again within about 3 s.
    static func retryDelayMs(attempt: Int) -> Int { min(2000, 250 << min(max(attempt - 1, 0), 4)) }
    /// A timestamp this far from where the wall clock says the input is was a jump (a camera restarting its
    /// clock, a stream's discontinuity): the timeline is stitched there instead of waiting or rushing.
    static let jumpSeconds = 3.0

    /// `destinations` checks a network source's host before every connect; nil: any host (files, pushes, tests).
    public init(
        _ input: SourceInput, destinations: (any SourceDestinations)? = nil, onState: @escaping StateHandler,
        onOpen: @escaping OpenHandler
    ) {
        self.input = input
        self.destinations = destinations
        self.onState = onState
        self.onOpen = onOpen
    }

    public func start() {
        let thread = Thread { [self] in run() }
        thread.name = "cohost.source"
        thread.stackSize = 1 << 20
        self.thread = thread
        thread.start()
    }

    /// Ends the reader: any blocking call is cancelled and the thread leaves soon after (it is not waited for).
    public func stop() {
        lock.lock()
        stopped = true
        let input = current
        let waiting = pending
        pending = nil
        lock.broadcast()
        lock.unlock()
        input?.cancel()
        waiting?.close()
    }

    /// A pushed source's encoder connected: the reader reads it, ending the connection it read until now (an
    /// encoder that reconnects replaces its old connection at once, without waiting for it to time out).
    public func deliver(_ connection: any PushedConnection) {
        lock.lock()
        guard !stopped else {
            lock.unlock()
            connection.close()
            return
        }
        let replaced = pending
        pending = connection
        let reading = current
        lock.broadcast()
        lock.unlock()
        replaced?.close()
        reading?.cancel()
    }

    /// Waits for a pushed source's next connection; nil once stopped.
    private func nextConnection() -> (any PushedConnection)? {
        lock.lock()
        defer { lock.unlock() }
        while !stopped {
            if let connection = pending {
                pending = nil
                return connection
            }
            lock.wait()
        }
        return nil
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    /// Waits `ms` unless stopped first; false when stopped.
    private func pause(ms: Int) -> Bool {
        let until = Date().addingTimeInterval(Double(ms) / 1000)
        lock.lock()
        defer { lock.unlock() }
        while !stopped { if !lock.wait(until: until) { break } }
        return !stopped
    }

    private func run() {
        var attempt = 0
        var feed: SourceFeed?
        onState(.connecting, 0, nil)
        while !isStopped {
            let outcome = readOnce(feed: &feed, attempt: &attempt)
            switch outcome {
            case .stopped: return
            case .ended:
                onState(.ended, attempt, nil)
                return
            case .failed(let message):
                onState(.failed, attempt, message)
                return
            case .lost(let message):
                // A file that cannot be read now will not be readable later: only network inputs retry.
                if input.isFile {
                    onState(.failed, attempt, message)
                    return
                }
                attempt += 1
                onState(.retrying, attempt, message)
                // A pushed source waits for its encoder's next connection instead.
                if input.pushed { continue }
                guard pause(ms: Self.retryDelayMs(attempt: attempt)) else { return }
            }
        }
    }

    private enum Target {
        /// What to open, the host its nested URLs must name, and the message that replaces a failure's own.
        case open(url: String, options: [String: String], pinnedHost: String?, vague: String?)
        case refused(String)
    }

    /// A network input's host checked now, at this connect: the URL aimed at the checked address (libavformat then
    /// looks nothing up; over TLS the name stays), and a failure told as it is only for a host the operator listed,
    /// so that a source's state maps no network for whoever chose its URL.
    private func connectTarget() -> Target {
        guard !input.isFile, let destinations else {
            return .open(url: input.location, options: input.options, pinnedHost: nil, vague: nil)
        }
        // A URL whose host cannot be told apart is not opened: nothing unchecked is dialled.
        guard let location = SourceLocation(input.location) else { return .refused("cannot connect to the source") }
        let vague = "cannot connect to \(location.hostHeader)"
        guard let address = destinations.address(for: location.host) else { return .refused(vague) }
        let told = destinations.tellsFailures(of: location.host) ? nil : vague
        if location.isTLS {
            return .open(url: input.location, options: input.options, pinnedHost: location.host, vague: told)
        }
        var options = input.options
        if location.scheme == "http" {
            // The server still hears the name (virtual hosts); nested requests inherit the header.
            options["headers"] = "Host: \(location.hostHeader)\r\n"
        }
        return .open(url: location.aimed(at: address), options: options, pinnedHost: address, vague: told)
    }

    private enum Outcome {
        case stopped, ended
        case failed(String)
        case lost(String)
    }

    /// One connection: open, then read until the input ends or fails.
    private func readOnce(feed: inout SourceFeed?, attempt: inout Int) -> Outcome {
        let media: MediaInput
        do {
            if input.pushed {
                guard let connection = nextConnection() else { return .stopped }
                media = try MediaInput(connection: connection, timeoutMs: Self.openTimeoutMs)
            } else {
                switch connectTarget() {
                case .refused(let message): return isStopped ? .stopped : .lost(message)
                case .open(let url, let options, let pinnedHost, let vague):
                    do {
                        media = try MediaInput(
                            url: url, options: options, timeoutMs: Self.openTimeoutMs, pinnedHost: pinnedHost)
                    } catch {
                        return isStopped ? .stopped : .lost(vague ?? error.message)
                    }
                }
            }
        } catch {
            return isStopped ? .stopped : .lost(error.message)
        }
        lock.lock()
        if stopped {
            lock.unlock()
            return .stopped
        }
        current = media
        lock.unlock()
        defer { lock.withLock { current = nil } }

        let audioStream = media.streams.first { $0.kind == .audio }
        let videoStream = input.wantsVideo ? media.streams.first { $0.kind == .video } : nil
        var audio: AudioStreamDecoder?
        var video: VideoStreamDecoder?
        do {
            if let s = audioStream, let p = media.parameters(of: s.index) {
                audio = try AudioStreamDecoder(p, channels: 2)
            }
            if let s = videoStream, let p = media.parameters(of: s.index) {
                video = try VideoStreamDecoder(p, maxWidth: input.maxWidth, maxHeight: input.maxHeight)
            }
        } catch {
            return .failed(error.message)
        }
        guard audio != nil || video != nil else {
            return .failed("the input has no audio or video stream this server can decode")
        }
        // Its own H.264 goes to slots as it is when it can; anything else is encoded once for them.
        var units = videoStream.flatMap { s in media.parameters(of: s.index).flatMap { Self.asIs(s, $0) } }
        if feed == nil {
            let format =
                video == nil
                ? nil
                : units?.format
                    ?? .encoded(levelIDC: SourceEncoder.level(maxWidth: input.maxWidth, maxHeight: input.maxHeight))
            guard let made = onOpen(audio != nil, video != nil, format) else { return .stopped }
            feed = made
        }
        guard let feed else { return .stopped }
        feed.reset()
        // A reconnect that brought another profile is encoded in the one the slots were told.
        if let have = units?.format, let told = feed.forwardFormat, !have.sameProfile(as: told) { units = nil }
        var encoder = units == nil ? feed.forwardFormat.map(SourceEncoder.init(format:)) : nil
        var timeline = Timeline()
        var announced = false
        // Pictures not shown are not decoded; decoding starts again at a keyframe.
        var videoWaitsForKeyframe = false
        let live = !input.isFile
        func decodeAudio(_ packet: UnsafeMutablePointer<AVPacket>?, _ audio: AudioStreamDecoder) throws(MediaInputError)
        {
            try audio.decode(packet, timeBase: audioStream?.timeBase ?? 0) { frames, pts in
                let now = MonotonicClock.nowMs()
                let start = timeline.place(pts, feed: feed, nowMs: now, audioEnd: feed.audioEnd, live: live)
                let end = start + Double(frames) / Double(AudioFormat.sampleRate)
                timeline.noteEnd(end)
                // Written once all of it is due within the read-ahead: the FIFO then holds at most the latency, and
                // its trimming of a surplus never cuts a file's sound.
                pace(until: end, feed: feed)
                feed.writeAudio(
                    audio.samples, frames: frames, channels: 2, endingAt: end, nowMs: MonotonicClock.nowMs())
            }
        }
        func decodeVideo(_ packet: UnsafeMutablePointer<AVPacket>?, _ video: VideoStreamDecoder) throws(MediaInputError)
        {
            var encodeFailure: String?
            try video.decode(packet, timeBase: videoStream?.timeBase ?? 0, take: feed.takePicture) { picture, pts in
                let time = timeline.place(pts, feed: feed, nowMs: MonotonicClock.nowMs(), audioEnd: nil, live: live)
                timeline.noteVideo(time)
                pace(until: time, feed: feed)
                if let encoder, feed.isForwarded {
                    let force = feed.takeKeyframeRequest()
                    do throws(CodecError) {
                        try encoder.encode(picture, forceKeyframe: force) { avcc, keyframe, sets in
                            feed.queueUnit(avcc, keyframe: keyframe, parameterSets: sets, at: time, encoded: true)
                        }
                    } catch {
                        encodeFailure = error.description
                    }
                }
                if feed.isShown { feed.queuePicture(picture, at: time) } else { feed.returnPicture(picture) }
            }
            if let encodeFailure { throw MediaInputError(encodeFailure) }
        }
        /// A packet of pictures not decoded. A file is still read at its own pace, not as fast as the disk goes.
        func skip(_ info: MediaInput.PacketInfo) {
            feed.skippedPicture()
            guard input.isFile, let pts = info.pts ?? info.dts else { return }
            let time = timeline.place(pts, feed: feed, nowMs: MonotonicClock.nowMs(), audioEnd: nil, live: live)
            timeline.noteVideo(time)
            pace(until: time, feed: feed)
        }
        /// From here on the pictures are encoded for the slots: the stream turned out not to fit them as it is.
        func encodeFromHere() {
            units = nil
            encoder = feed.forwardFormat.map(SourceEncoder.init(format:))
        }
        /// One packet of the source's own H.264, rewritten for the slots (when one shows the source).
        func forward(_ info: MediaInput.PacketInfo, _ packet: UnsafeMutablePointer<AVPacket>) {
            guard units != nil else { return }
            // A picture out of order: B-frames the stream information did not tell of.
            if let pts = info.pts, let dts = info.dts, abs(pts - dts) > 1e-6 { return encodeFromHere() }
            guard feed.isForwarded, var rewriter = units else { return }
            // Taken out while it is written, so that its buffer is not copied.
            units = nil
            let bytes = UnsafeRawBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size))
            let (keyframe, carries) = rewriter.rewrite(bytes)
            // New parameter sets of another profile than the slots were told (a camera reconfigured, streams
            // joined end to end).
            if carries, let have = rewriter.format, let told = feed.forwardFormat, !have.sameProfile(as: told) {
                return encodeFromHere()
            }
            units = rewriter
            guard !rewriter.avcc.isEmpty else { return }
            let time = timeline.place(
                info.pts ?? info.dts, feed: feed, nowMs: MonotonicClock.nowMs(), audioEnd: nil, live: live)
            timeline.noteVideo(time)
            pace(until: time, feed: feed)
            let sets: (sps: [UInt8], pps: [UInt8])? =
                carries || rewriter.sps.isEmpty || rewriter.pps.isEmpty ? nil : (rewriter.sps, rewriter.pps)
            rewriter.avcc.withUnsafeBytes {
                feed.queueUnit($0, keyframe: keyframe, parameterSets: sets, at: time, encoded: false)
            }
        }
        /// What the decoders still hold at the end of the input (B-frames, codec delay).
        func drain() {
            if let audio { try? decodeAudio(nil, audio) }
            if let video { try? decodeVideo(nil, video) }
            audio?.flush()
            video?.flush()
        }
        while true {
            if isStopped { return .stopped }
            var failure: String?
            let more: Bool
            do throws(MediaInputError) {
                more = try media.readPacket(timeoutMs: Self.readTimeoutMs) { info, packet in
                    do throws(MediaInputError) {
                        if let audio, info.streamIndex == audioStream?.index {
                            try decodeAudio(packet, audio)
                        } else if let video, info.streamIndex == videoStream?.index {
                            forward(info, packet)
                            // Decoded for a region, or to be encoded for the slots.
                            if !feed.isShown && !(encoder != nil && feed.isForwarded) {
                                videoWaitsForKeyframe = true
                                skip(info)
                            } else if videoWaitsForKeyframe && !info.isKeyframe {
                                skip(info)
                            } else {
                                if videoWaitsForKeyframe {
                                    videoWaitsForKeyframe = false
                                    video.flush()
                                }
                                try decodeVideo(packet, video)
                            }
                        }
                    } catch {
                        // One bad packet is not the end of the input: the next is read.
                        failure = error.message
                    }
                }
            } catch {
                return isStopped ? .stopped : .lost(error.message)
            }
            if failure == nil, !announced, timeline.started {
                announced = true
                attempt = 0
                onState(.live, 0, nil)
            }
            if !more {
                guard input.isFile else { return .lost("the input ended") }
                drain()
                guard input.loop, media.rewind() else { return .ended }
                timeline.rewound()
            }
        }
    }

    /// The stream's H.264 as slots can take it, when they can: a profile browsers decode and no B-frames.
    private static func asIs(_ stream: MediaInput.Stream, _ parameters: UnsafePointer<AVCodecParameters>) -> H264Units?
    {
        let p = parameters.pointee
        guard stream.codec == "h264", p.video_delay == 0 else { return nil }
        let extradata = UnsafeRawBufferPointer(
            start: p.extradata, count: p.extradata == nil ? 0 : Int(p.extradata_size))
        guard let units = H264Units(extradata: extradata), let format = units.format, format.forwardableAsIs else {
            return nil
        }
        return units
    }

    /// Holds the reader of a file until `time` is due within the read-ahead, so it plays in real time. A live input
    /// is never held: it comes at its own pace, and a reader asleep on it would let its sockets overflow.
    private func pace(until time: Double, feed: SourceFeed) {
        guard input.isFile else { return }
        while let readable = feed.readableUntil(nowMs: MonotonicClock.nowMs(), aheadMs: input.readAheadMs),
            time > readable
        {
            let waitMs = Int(((time - readable) * 1000).rounded(.up))
            if !pause(ms: min(max(waitMs, 1), 100)) { return }
        }
    }
}

/// The container's timestamps made into the feed's one continuous timeline: the first unit starts it, a loop
/// continues it where the last round ended, a jump is stitched to where the wall clock says the input is.
struct Timeline {
    private var offset = 0.0
    private(set) var started = false
    /// The next unit continues from `end` (after a rewind), whatever its own timestamp.
    private var anchorNext = false
    private var end = 0.0
    private var lastVideo: Double?
    private var videoStep = 1.0 / 30

    /// The feed time of a unit stamped `pts` seconds (nil: right after what came before). A `live` input's newest
    /// unit is "now": the clock follows it, so the burst libavformat delivers after probing (a second of buffered
    /// packets) does not become a second of extra delay.
    mutating func place(_ pts: Double?, feed: SourceFeed, nowMs: Int64, audioEnd: Double?, live: Bool) -> Double {
        guard let pts else { return audioEnd ?? end }
        if !started {
            started = true
            offset = -pts
            feed.start(at: 0, nowMs: nowMs)
            return 0
        }
        if anchorNext {
            anchorNext = false
            offset = end - pts
            return end
        }
        let time = pts + offset
        guard let wall = feed.wallTime(nowMs: nowMs) else { return time }
        if abs(time - wall) > SourceReader.jumpSeconds {
            offset = wall - pts
            return wall
        }
        if live && time > wall { feed.restartClock(at: time, nowMs: nowMs) }
        return time
    }

    mutating func noteEnd(_ time: Double) { end = max(end, time) }

    mutating func noteVideo(_ time: Double) {
        if let last = lastVideo, time > last { videoStep = min(time - last, 0.5) }
        lastVideo = time
        end = max(end, time + videoStep)
    }

    /// The input went back to its start: the next unit continues the timeline.
    mutating func rewound() { anchorNext = true }
}
