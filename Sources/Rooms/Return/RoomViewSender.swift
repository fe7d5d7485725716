import Codecs
import Logging
import Media
import RTP

/// Sends the room view, the canvas scaled to the room's `returnVideo` size, to every participant who receives video:
/// encoded once per codec in use (VP8, H.264), packetized once, and sent to each receiver on its own SSRC with
/// sequence numbers that follow the shared packet index. Answers NACKs from a send history, keyframe requests at
/// most once per 500 ms, and keeps each encoder's bitrate within what its receivers report (docs/return-path.md).
/// Confined to the room's queue; nothing runs while nobody receives video.
final class RoomViewSender {
    typealias Transport = MixMinusSender.Transport

    /// The least a view is squeezed to by loss or REMB, kbit/s.
    static let floorKbps = 150
    static let keyframeIntervalMs: Int64 = 500
    /// Packets resent a second at most per receiver: about twice what a 500 kbit/s view sends.
    static let retransmissionsPerSecond = 200

    private let settings: RoomConfig.ReturnVideo
    private let canvasFps: Int
    private let transport: Transport
    private let logger: Logger
    private var scaler = BilinearScaler()
    private var frame: VideoFrame
    /// Where the canvas lands in `frame` (letterboxed when the aspects differ).
    private var placement: Rect?
    private var streams: [ViewStream?] = [nil, nil]
    private var lastFrameSlot: Int64?
    private var receivers: [Participant] = []
    private var nacks: [UInt16] = []
    private(set) var framesEncoded = [0, 0]

    /// One codec's encoder, packetizer and history.
    final class ViewStream {
        enum Encoder {
            case vp8(VP8Encoder)
            case h264(H264Encoder)
        }
        let encoder: Encoder
        var vp8Packetizer = VP8Packetizer()
        let h264Packetizer = H264Packetizer()
        var history = SendHistory()
        var lastKeyframeMs: Int64?
        var keyframeWanted = true
        var targetKbps: Int
        var frames: Int64 = 0

        init(_ codec: RoomViewCodec, settings: RoomConfig.ReturnVideo) throws(CodecError) {
            switch codec {
            case .vp8:
                encoder = .vp8(
                    try VP8Encoder(
                        width: settings.width, height: settings.height, fps: settings.fps,
                        bitrateKbps: settings.bitrate))
            case .h264:
                encoder = .h264(
                    try H264Encoder(
                        config: H264EncoderConfig(
                            width: settings.width, height: settings.height, fps: settings.fps,
                            bitrateKbps: settings.bitrate, keyintFrames: settings.fps * 10, profile: .baseline)))
            }
            targetKbps = settings.bitrate
        }

        func setBitrate(_ kbps: Int) throws(CodecError) {
            switch encoder {
            case .vp8(let e): try e.setBitrate(kbps: kbps)
            case .h264(let e): try e.reconfigure(bitrateKbps: kbps)
            }
            targetKbps = kbps
        }
    }

    init(settings: RoomConfig.ReturnVideo, canvasFps: Int, transport: @escaping Transport, logger: Logger) {
        self.settings = settings
        self.canvasFps = canvasFps
        self.transport = transport
        self.logger = logger
        frame = VideoFrame(width: settings.width, height: settings.height)
    }

    /// The canvas of video tick `index`: NACKs and keyframe requests are answered, and when the view's rate has a
    /// frame due, it is scaled, encoded per codec in use and sent. `reportDue` (once a second): sender reports, and
    /// the bitrate follows the receivers' reports.
    func tick(canvas: VideoFrame, index: Int64, present: [Participant], nowMs: Int64, reportDue: Bool) {
        receivers.removeAll(keepingCapacity: true)
        for p in present where p.returnVideo.map({ !$0.carriesProgramme }) == true { receivers.append(p) }
        for codec in RoomViewCodec.allCases where streams[codec.rawValue] != nil {
            if !receivers.contains(where: { $0.returnVideo?.codec == codec }) { streams[codec.rawValue] = nil }
        }
        guard !receivers.isEmpty else { return }
        answerRequests(nowMs: nowMs)
        let timestamp = UInt32(truncatingIfNeeded: index &* 90_000 / Int64(max(1, canvasFps)))
        if reportDue { followReceivers(nowMs: nowMs, timestamp: timestamp) }
        let slot = index * Int64(settings.fps) / Int64(max(1, canvasFps))
        guard slot != lastFrameSlot else { return }
        lastFrameSlot = slot
        scale(canvas)
        for codec in RoomViewCodec.allCases where receivers.contains(where: { $0.returnVideo?.codec == codec }) {
            do { try encode(codec, timestamp: timestamp, nowMs: nowMs) } catch {
                logger.error("room view encode failed", metadata: ["codec": "\(codec.name)", "error": "\(error)"])
            }
        }
    }

    /// Frames encoded for `codec` so far.
    func frames(_ codec: RoomViewCodec) -> Int { framesEncoded[codec.rawValue] }
    /// The bitrate `codec`'s encoder is set to now, kbit/s (nil while nobody receives it).
    func targetKbps(_ codec: RoomViewCodec) -> Int? { streams[codec.rawValue]?.targetKbps }

    /// The canvas changed size: the view is letterboxed anew, on black (the old bars would show the old picture).
    func canvasResized() {
        placement = nil
        frame = VideoFrame(width: settings.width, height: settings.height)
    }

    private func scale(_ canvas: VideoFrame) {
        if placement == nil {
            // Contain: the whole canvas, centred, black bars where the aspects differ.
            let w = settings.width, h = settings.height
            var fitW = w, fitH = canvas.height * w / max(1, canvas.width)
            if fitH > h {
                fitH = h
                fitW = canvas.width * h / max(1, canvas.height)
            }
            fitW = max(2, fitW / 2 * 2)
            fitH = max(2, fitH / 2 * 2)
            placement = Rect(x: (w - fitW) / 4 * 2, y: (h - fitH) / 4 * 2, width: fitW, height: fitH)
        }
        guard let placement else { return }
        scaler.scale(
            canvas, crop: Rect(x: 0, y: 0, width: canvas.width, height: canvas.height), into: &frame, at: placement)
    }

    private func encode(_ codec: RoomViewCodec, timestamp: UInt32, nowMs: Int64) throws(CodecError) {
        let stream: ViewStream
        if let existing = streams[codec.rawValue] {
            stream = existing
        } else {
            stream = try ViewStream(codec, settings: settings)
            streams[codec.rawValue] = stream
        }
        // A receiver that has not started waits for a keyframe; requests are answered at most every 500 ms.
        if receivers.contains(where: { $0.returnVideo?.codec == codec && $0.returnVideo?.first == nil }) {
            stream.keyframeWanted = true
        }
        let force =
            stream.keyframeWanted
            && stream.lastKeyframeMs.map { nowMs - $0 >= Self.keyframeIntervalMs } ?? true
        let firstIndex = stream.history.nextIndex
        var keyframe = false
        switch stream.encoder {
        case .vp8(let encoder):
            try encoder.encode(frame, pts: stream.frames, forceKeyframe: force) { data, isKey, _ in
                keyframe = isKey
                stream.vp8Packetizer.packetize(data) { d, piece, last in
                    stream.history.record(timestamp: timestamp, marker: last) { out in
                        out.append(d.0)
                        out.append(d.1)
                        out.append(d.2)
                        out.append(d.3)
                        out.append(contentsOf: piece)
                    }
                }
            }
        case .h264(let encoder):
            _ = try encoder.encode(frame, pts: stream.frames, forceKeyframe: force) { avcc, isKey, _, _ in
                keyframe = isKey
                stream.h264Packetizer.packetize(avcc: avcc, parameterSets: isKey ? encoder.parameterSets : nil) {
                    prefix, count, rest, last in
                    stream.history.record(timestamp: timestamp, marker: last) { out in
                        if count > 0 { out.append(prefix.0) }
                        if count > 1 { out.append(prefix.1) }
                        out.append(contentsOf: rest)
                    }
                }
            }
        }
        stream.frames += 1
        framesEncoded[codec.rawValue] += 1
        if keyframe {
            stream.lastKeyframeMs = nowMs
            stream.keyframeWanted = false
        }
        let end = stream.history.nextIndex
        guard end > firstIndex else { return }
        for p in receivers {
            guard let back = p.returnVideo, back.codec == codec else { continue }
            back.send(firstIndex..<end, from: stream.history, startsAtKeyframe: keyframe) { transport(p, .video, $0) }
        }
    }

    /// NACKed packets go again from the history; keyframe requests mark the receiver's codec.
    private func answerRequests(nowMs: Int64) {
        for p in receivers {
            guard let back = p.returnVideo else { continue }
            nacks.removeAll(keepingCapacity: true)
            let wantsKeyframe = back.takeRequests(nacks: &nacks)
            guard let stream = streams[back.codec.rawValue] else { continue }
            if wantsKeyframe { stream.keyframeWanted = true }
            back.retransmit(nacks, from: stream.history) { transport(p, .video, $0) }
        }
    }

    /// Once a second: sender reports, and each encoder's bitrate within its receivers' REMB and loss. Loss above
    /// 10 % cuts the rate by half the loss; under 2 % it grows by 8 % a second back to the ceiling.
    private func followReceivers(nowMs: Int64, timestamp: UInt32) {
        let ntp = NTPTime.now()
        for p in receivers {
            guard let back = p.returnVideo else { continue }
            back.retransmissionBudget = Self.retransmissionsPerSecond
            back.rtp.sendReport(ntp: ntp, rtpTimestamp: timestamp) { transport(p, .video, $0) }
        }
        for codec in RoomViewCodec.allCases {
            guard let stream = streams[codec.rawValue] else { continue }
            var ceiling = settings.bitrate
            var loss = 0
            for p in receivers {
                guard let back = p.returnVideo, back.codec == codec else { continue }
                let heard = back.feedback.snapshot
                if let remb = heard.estimatedBitrate { ceiling = min(ceiling, remb / 1000) }
                if let last = heard.lastReportMs, nowMs - last <= 5_000 { loss = max(loss, heard.lossPercent) }
            }
            let floor = min(Self.floorKbps, settings.bitrate)
            var target = stream.targetKbps
            if loss > 10 {
                target = target * (200 - loss) / 200
            } else if loss < 2 {
                target = target * 108 / 100 + 1
            }
            target = max(floor, min(target, ceiling))
            guard target != stream.targetKbps else { continue }
            do { try stream.setBitrate(target) } catch {
                logger.debug("room view bitrate refused", metadata: ["kbps": "\(target)", "error": "\(error)"])
            }
        }
    }
}
