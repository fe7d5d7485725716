import Foundation
import Media
import RTP
import Playout
import Logging
import Synchronization
import CohostAPI
import Clocks
import Layout
import Forwarding
import MediaSources

/// The largest picture a receiver wants in one slot (`maxWidth`/`maxHeight` of its subscription).
public struct SlotSize: Sendable, Equatable {
    public var width: Int?
    public var height: Int?
}

/// One user in a room: who they are (user id, session, admin), how the mix takes their voice (mute, gain), and
/// their media: an `AudioReceiver` and a `VideoReceiver`, each behind its own lock, so the video path never holds
/// up the mixer's pull of the voice.
public final class Participant: @unchecked Sendable {
    public let userId: String
    /// The name shown on the programme (labels, cards) and in lists: the token's `name`, else the one given at
    /// join; nil: the user id.
    public let displayName: String?
    /// What a label or card with no text of its own shows.
    public var shownName: String { displayName ?? userId }
    public let sessionID: Int
    public let joinedAt: Date
    /// Joined with an admin token.
    public let isAdmin: Bool
    /// A hidden receiver (an admin's `?monitor=true` join, the console's previews): in no layout, mix, list or event;
    /// only its slots are filled, with every participant's camera.
    public let isMonitor: Bool
    /// A WHEP viewer: a hidden receiver of the programme (its mix and its own H.264), never a member.
    public let isViewer: Bool
    let audio: AudioReceiver?
    /// The camera: one stream, or simulcast layers.
    let video: LayeredVideo?
    /// The screen share (`a=content:slides`), decoded only while a region shows it.
    let screen: LayeredVideo?
    /// What Cohost sends back: the room's mix-minus (nil when the offer's audio is `sendonly`).
    let returnAudio: ReturnAudio?
    /// The room view (nil when the offer's video is `sendonly`, or the room sends none).
    let returnVideo: ReturnVideo?
    /// Receive slots: other participants' videos, forwarded (Sources/Rooms/Forwarding), in the offer's order.
    let slots: [ForwardSlot]
    /// The streams others' slots can show: the camera and the screen share, when their codec can be forwarded.
    var forwardable: [LayeredVideo] {
        [video, screen, sourceVideo?.stream].compactMap { $0 }.filter { !$0.forwarders.isEmpty }
    }
    var sources: [StreamSource] { forwardable.map(\.source) }
    /// The participant's own choices for its slots, by mid (`PUT …/subscriptions`).
    private let choices = Mutex<[String: StreamKey]>([:])
    private let sizes = Mutex<[String: SlotSize]>([:])
    /// Others' streams no slot of this participant can carry, as of the last allocation.
    private let unforwardable = Mutex<[StreamKey]>([])
    /// Camera and microphone as the participant says they are (`PATCH`): off shows the placeholder and stops the
    /// slots showing it, or takes the voice out of the mix.
    private let devices = Mutex<(camera: Bool, microphone: Bool)>((true, true))
    /// The ICE and DTLS transport of a WebRTC participant; nil for plain RTP and SDES-SRTP.
    let webRTC: WebRTCTransport?
    /// A pulled source's decoded media (a camera, a stream, a file), instead of RTP streams.
    let feed: SourceFeed?
    /// A source's pictures as slots take them (its H.264 as it is, or encoded once).
    let sourceVideo: SourceVideo?
    /// The REMB sent to a WebRTC sender (feedback thread only).
    private var senderLimit: SenderBitrateLimit?
    private let mix = Mutex<(muted: Bool, gain: Float)>((false, 1))
    /// When the last packet came (monotonic ms): the room's once-a-second sweep reads it.
    private let lastPacketMs: Atomic<Int64>

    /// Something the room should announce at its tick.
    enum Signal: Equatable { case firstVideoFrame(width: Int, height: Int) }

    /// `decodeChannels`: 1 when the room's programme is mono, so voices are decoded to mono (cheaper) and
    /// stereo senders are downmixed by the decoder; 2 otherwise. Video is decoded on `decodePool`'s threads within
    /// `videoLimits`; without a pool, on the thread that delivers its packets.
    init(
        userId: String, sessionID: Int, isAdmin: Bool = false, isMonitor: Bool = false, audio: NegotiatedStream?,
        video: NegotiatedStream?,
        screen: NegotiatedStream? = nil,
        decodeChannels: Int = 2, videoLimits: VideoLimits = VideoLimits(), decodePool: DecodePool? = nil,
        returnAudio: ReturnOffer? = nil, returnVideo: ReturnOffer? = nil, slots: [SlotOffer] = [],
        webRTC: WebRTCTransport? = nil, feed: SourceFeed? = nil, viewer: Bool = false,
        maxIngestKbps: Int = 2500, displayName: String? = nil, nowMs: Int64, logger: Logger
    ) throws {
        self.displayName = displayName
        isViewer = viewer
        self.webRTC = webRTC
        self.feed = feed
        sourceVideo = try feed.flatMap { feed in
            try feed.forwardFormat.map { try SourceVideo(feed: feed, format: $0, userId: userId, logger: logger) }
        }
        if webRTC != nil && (audio != nil || video != nil) { senderLimit = SenderBitrateLimit(capKbps: maxIngestKbps) }
        self.userId = userId
        self.isAdmin = isAdmin
        self.isMonitor = isMonitor
        self.sessionID = sessionID
        self.joinedAt = Date()
        lastPacketMs = Atomic(nowMs)
        self.audio = try audio.map {
            try AudioReceiver($0, decodeChannels: decodeChannels, userId: userId, logger: logger)
        }
        func layered(_ stream: NegotiatedStream, source: StreamSource) throws -> LayeredVideo {
            // A simulcast stream is a receiver per layer, each on its own stand-in SSRCs.
            var streams: [(NegotiatedStream, rid: String?)] = [(stream, nil)]
            if !stream.layers.isEmpty {
                streams = stream.layers.map { layer in
                    var one = stream
                    one.ssrc = layer.ssrc
                    one.retransmission = layer.repairSSRC.flatMap { ssrc in
                        stream.retransmission.map { (ssrc, $0.payloadType) }
                    }
                    return (one, layer.rid)
                }
            }
            let receivers = try streams.map { one, rid in
                let forwarder = ForwardCodec(name: one.codec, fmtp: one.fmtp).map { codec in
                    VideoForwarder(
                        key: StreamKey(userId: userId, source: source), ssrc: one.ssrc, codec: codec, rid: rid)
                }
                return try VideoReceiver(
                    one, userId: userId, limits: videoLimits, pool: decodePool, forwarder: forwarder, source: source,
                    rid: rid, decodes: rid == nil && source == .camera, logger: logger)
            }
            return LayeredVideo(layers: receivers, source: source)
        }
        self.video = try video.map { try layered($0, source: .camera) }
        self.screen = try screen.map { try layered($0, source: .screen) }
        self.slots = try slots.map { try ForwardSlot($0, cname: "cohost-\(sessionID)", lateKeys: webRTC?.keys) }
        self.returnAudio = try returnAudio.map {
            try ReturnAudio($0, cname: "cohost-\(sessionID)", lateKeys: webRTC?.keys)
        }
        if let offer = returnVideo, let codec = RoomViewCodec(name: offer.codec) {
            self.returnVideo = try ReturnVideo(
                offer, codec: codec, cname: "cohost-\(sessionID)", lateKeys: webRTC?.keys, carriesProgramme: viewer)
        } else {
            self.returnVideo = nil
        }
        for slot in self.slots { slot.owner = self }
    }

    var audioSSRC: UInt32? { audio?.ssrc }
    /// The camera's SSRC (a simulcast camera's first layer).
    var videoSSRC: UInt32? { video?.primary.ssrc }
    /// Every video receiver: the camera's layers, then the screen share's.
    var videoReceivers: [VideoReceiver] { (video?.layers ?? []) + (screen?.layers ?? []) }
    /// The SSRCs the participant's media carries on the wire (a stand-in's learnt one; else the same as above).
    var wireSSRCs: [UInt32] { [audio?.wireSSRC].compactMap { $0 } + videoReceivers.map(\.wireSSRC) }
    /// The video's SSRCs as registered (media and retransmissions of every layer).
    var videoSSRCs: [UInt32] { videoReceivers.flatMap { [$0.ssrc, $0.retransmission?.ssrc].compactMap { $0 } } }

    /// A stand-in SSRC's real one, learnt from the MID or RID of the first packet of its line or layer.
    func learn(standIn: UInt32, wireSSRC real: UInt32) {
        if let audio, audio.ssrc == standIn { audio.learn(wireSSRC: real) }
        for receiver in videoReceivers where receiver.ssrc == standIn { receiver.learn(wireSSRC: real) }
    }
    var hasVideo: Bool { video != nil || feed?.hasVideo == true }
    /// Whether layouts place this participant: everyone but a source with no pictures (music, a jingle), which
    /// only plays into the mix.
    var showsOnCanvas: Bool { feed.map(\.hasVideo) ?? true }
    /// SSRCs of lines the participant only receives on: its RTCP about what Cohost sends comes from them.
    var receiverSSRCs: [UInt32] {
        [returnAudio?.receiverSSRC, returnVideo?.receiverSSRC].compactMap { $0 }
            + slots.compactMap(\.offer.receiverSSRC)
    }

    // MARK: forwarding

    /// The participant's own choices for its slots, by mid.
    var subscriptions: [String: StreamKey] { choices.withLock { $0 } }

    /// The largest picture the participant wants in each slot, by mid.
    var slotSizes: [String: SlotSize] { sizes.withLock { $0 } }

    /// Replaces the choices: the slots named show what they name, the others are filled automatically; `sizes`
    /// bound the layer each slot is sent.
    func choose(_ chosen: [String: StreamKey], sizes: [String: SlotSize] = [:]) {
        choices.withLock { $0 = chosen }
        self.sizes.withLock { $0 = sizes }
    }

    var unforwardableStreams: [StreamKey] {
        get { unforwardable.withLock { $0 } }
        set { unforwardable.withLock { $0 = newValue } }
    }

    public var cameraOn: Bool { devices.withLock { $0.camera } }
    public var microphoneOn: Bool { devices.withLock { $0.microphone } }

    /// Says whether anything changed.
    func setDevices(camera: Bool?, microphone: Bool?) -> Bool {
        devices.withLock {
            let before = $0
            if let camera { $0.camera = camera }
            if let microphone { $0.microphone = microphone }
            return before != $0
        }
    }

    /// Stops every slot of this participant (it leaves): nothing more is forwarded to it.
    func detachSlots() {
        for slot in slots {
            let transport: @Sendable (Participant, [UInt8]) -> Void = { _, _ in }
            slot.show(nil, from: nil, transport: transport)?.detach(slot)
        }
    }

    public var muted: Bool { mix.withLock { $0.muted } }
    public var gain: Float { mix.withLock { $0.gain } }

    func setMix(muted: Bool?, gain: Float?) {
        mix.withLock {
            if let muted { $0.muted = muted }
            if let gain { $0.gain = gain }
        }
    }

    /// Keeps the participant from timing out (RTCP of a participant that only listens).
    func touch(nowMs: Int64) { lastPacketMs.store(nowMs, ordering: .relaxed) }

    /// Report blocks of the participant's RTCP: those about a stream Cohost sends it go to that stream's feedback.
    func noteReceptionReports(_ blocks: [ReceptionReport], nowMs: Int64, ntpNow: UInt64) {
        for block in blocks {
            if let back = returnAudio, block.ssrc == back.rtp.ssrc {
                back.feedback.note(block, nowMs: nowMs, ntpNow: ntpNow)
            } else if let view = returnVideo, block.ssrc == view.rtp.ssrc {
                view.feedback.note(block, nowMs: nowMs, ntpNow: ntpNow)
            } else if let slot = slots.first(where: { $0.ssrc == block.ssrc }) {
                slot.feedback.note(block, nowMs: nowMs, ntpNow: ntpNow)
            }
        }
    }

    /// Feedback about the room view this participant receives (the UDP thread): keyframe requests, NACKs, REMB.
    func noteViewFeedback(_ packet: RTCPPacket) {
        if !slots.isEmpty { noteSlotFeedback(packet) }
        guard let view = returnVideo else { return }
        switch packet {
        case .pli(let pli) where pli.mediaSSRC == view.rtp.ssrc: view.requestKeyframe()
        case .fir(let fir) where fir.entries.contains(where: { $0.ssrc == view.rtp.ssrc }): view.requestKeyframe()
        case .nack(let nack) where nack.mediaSSRC == view.rtp.ssrc: view.noteNack(nack)
        case .remb(let remb) where remb.ssrcs.contains(view.rtp.ssrc):
            view.feedback.note(estimatedBitrate: Int(clamping: remb.bitrate))
        default: break
        }
    }

    /// Feedback about the slots (the UDP thread): keyframe requests and NACKs to the stream shown, REMB.
    private func noteSlotFeedback(_ packet: RTCPPacket) {
        switch packet {
        case .pli(let pli):
            slots.first { $0.ssrc == pli.mediaSSRC }?.requestKeyframe()
        case .fir(let fir):
            for slot in slots where fir.entries.contains(where: { $0.ssrc == slot.ssrc }) { slot.requestKeyframe() }
        case .nack(let nack):
            slots.first { $0.ssrc == nack.mediaSSRC }?.noteNack(nack)
        case .remb(let remb):
            for slot in slots where remb.ssrcs.contains(slot.ssrc) {
                slot.feedback.note(estimatedBitrate: Int(clamping: remb.bitrate))
            }
        default: break
        }
    }

    /// What this participant's receiver was sent and reports, per return stream.
    func returnReports() -> [ReturnReport] {
        var reports: [ReturnReport] = []
        if let back = returnAudio {
            reports.append(ReturnReport(kind: "audio", codec: "opus", stream: back.rtp, feedback: back.feedback))
        }
        if let view = returnVideo {
            var report = ReturnReport(kind: "video", codec: view.codec.name, stream: view.rtp, feedback: view.feedback)
            let (nacks, keyframes) = view.requestCounts
            report.nacksReceived = nacks
            report.keyframeRequests = keyframes
            report.retransmitted = view.retransmissions.answered
            report.estimatedBitrate = view.feedback.snapshot.estimatedBitrate
            reports.append(report)
        }
        return reports
    }

    /// Handles one parsed RTP packet of this participant (the UDP thread).
    func receive(_ packet: RTPPacket, bytes: Int, nowMs: Int64) {
        lastPacketMs.store(nowMs, ordering: .relaxed)
        if let audio, packet.ssrc == audio.ssrc {
            return audio.receive(packet, bytes: bytes, nowMs: nowMs)
        }
        if let screen, let layer = screen.layer(owning: packet.ssrc) {
            return layer.receive(packet, bytes: bytes, nowMs: nowMs)
        }
        video?.receive(packet, bytes: bytes, nowMs: nowMs)
    }

    /// Releases packets whose reordering wait expired, and says when the first picture was decoded; called by the
    /// room every tick.
    func drain(nowMs: Int64) -> Signal? {
        if let feed {
            sourceVideo?.tick(nowMs: nowMs)
            _ = sourceVideo?.stream.drain(nowMs: nowMs)
            return feed.takeFirstPicture().map { .firstVideoFrame(width: $0.width, height: $0.height) }
        }
        audio?.drain(nowMs: nowMs)
        _ = screen?.drain(nowMs: nowMs)
        return video?.drain(nowMs: nowMs)
    }

    /// Copies the next 20 ms block into `output`; `ok` false when there is none or the participant is muted, and
    /// the gain the mix applies.
    func pullAudio(into output: inout [Float], nowMs: Int64, catchingUp: Bool = false) -> (ok: Bool, gain: Float) {
        let ok: Bool
        if let feed {
            // A source is alive while its reader runs (it leaves when the reader ends): never idle.
            lastPacketMs.store(nowMs, ordering: .relaxed)
            guard feed.hasAudio else { return (false, 0) }
            ok = feed.pull(into: &output, nowMs: nowMs, catchingUp: catchingUp)
        } else {
            guard let audio else { return (false, 0) }
            ok = audio.pull(into: &output, nowMs: nowMs, catchingUp: catchingUp)
        }
        let (muted, gain) = mix.withLock { ($0.muted, $0.gain) }
        return (ok && !muted && microphoneOn, gain)
    }

    /// The picture to show now (see `VideoReceiver.currentFrame`), lip-synced with this participant's voice:
    /// a new voice delay the lip-sync controller asks for goes to the voice's FIFO.
    func currentFrame(nowMs: Int64, holdMs: Int64, leadMs: Int64 = 0, timing: inout PictureTiming) -> Picture? {
        if let feed {
            // Its sound and pictures share the input's clock: the feed keeps them in step itself.
            timing = PictureTiming()
            return cameraOn ? feed.picture(nowMs: nowMs, holdMs: holdMs) : nil
        }
        guard let video else {
            timing = PictureTiming()
            return nil
        }
        let (playout, pending) = audio?.playout(nowMs: nowMs) ?? (nil, false)
        let (picture, delay) = video.mixerLayer(nowMs: nowMs).currentFrame(
            nowMs: nowMs, holdMs: holdMs, leadMs: leadMs, playout: playout,
            syncChangePending: pending, timing: &timing)
        if let delay { audio?.setSyncDelay(frames: delay) }
        // A camera said to be off shows the placeholder, not its last picture.
        return cameraOn ? picture : nil
    }

    func reports(nowMs: Int64 = MonotonicClock.nowMs()) -> [StreamReport] {
        [audio?.report()].compactMap { $0 } + (video?.reports(nowMs: nowMs) ?? [])
            + (screen?.reports(nowMs: nowMs) ?? []) + (sourceVideo?.stream.reports(nowMs: nowMs) ?? [])
    }

    /// Tells a simulcast camera and screen share the size of the largest tile each is painted into (the layer the
    /// mixer decodes follows it).
    func placeTiles(_ placements: [Placement]) {
        // A source's pictures are decoded only while a region shows them.
        feed?.setShown(placements.contains { $0.userId == userId && $0.source == .camera })
        for stream in [video, screen] {
            guard let stream, stream.isSimulcast else { continue }
            let source: RegionSource = stream.source == .screen ? .screen : .camera
            var largest: Placement?
            for placement in placements where placement.userId == userId && placement.source == source {
                if largest.map({ $0.rect.width * $0.rect.height < placement.rect.width * placement.rect.height })
                    ?? true
                {
                    largest = placement
                }
            }
            if let largest {
                stream.setTile(width: largest.rect.width, height: largest.rect.height, fit: largest.fit)
            } else {
                stream.clearTile()
            }
        }
    }

    /// Decodes the screen share only while a region shows it.
    func setScreenShown(_ shown: Bool) {
        guard let screen else { return }
        if screen.isSimulcast {
            if !shown { screen.stopDecoding() }
        } else {
            screen.primary.setDecoding(shown)
        }
    }

    /// The screen share's picture now (no lip-sync: a screen has no voice of its own), nil when there is none or it
    /// stalled for `holdMs`.
    func currentScreenFrame(nowMs: Int64, holdMs: Int64) -> Picture? {
        guard let screen else { return nil }
        var timing = PictureTiming()
        return screen.mixerLayer(nowMs: nowMs).currentFrame(
            nowMs: nowMs, holdMs: holdMs, leadMs: 0, playout: nil, syncChangePending: false, timing: &timing
        ).picture
    }

    /// The RTCP this participant's sources should get now, appended to `out` as one compound datagram: a keyframe
    /// request, NACKs, and receiver reports when `reportDue`; nothing when there is nothing to say. `blocks` is the
    /// caller's reused storage for the report blocks (hot path: a steady stream allocates nothing here).
    func feedback(
        nowMs: Int64, serverSSRC: UInt32, reportDue: Bool, blocks: inout [ReceptionReport],
        into out: inout [UInt8]
    ) {
        blocks.removeAll(keepingCapacity: true)
        if reportDue {
            if let audio { blocks.append(audio.receptionReport(nowMs: nowMs)) }
            // Layer by layer, not through `videoReceivers`: this runs for every feedback round.
            for receiver in video?.layers ?? [] { blocks.append(receiver.receptionReport(nowMs: nowMs)) }
            for receiver in screen?.layers ?? [] { blocks.append(receiver.receptionReport(nowMs: nowMs)) }
        }
        let start = out.count
        // A compound RTCP packet starts with a report (RFC 3550 §6.1), empty when none is due.
        ReceiverReport(ssrc: serverSSRC, reports: blocks).append(to: &out)
        let reportEnd = out.count
        if let video { Self.appendRequests(of: video.layers, nowMs: nowMs, serverSSRC: serverSSRC, to: &out) }
        if let screen { Self.appendRequests(of: screen.layers, nowMs: nowMs, serverSSRC: serverSSRC, to: &out) }
        guard reportDue || out.count > reportEnd else {
            out.removeSubrange(start...)
            return
        }
        if reportDue, var limit = senderLimit {
            let loss = blocks.first { $0.ssrc == video?.primary.wireSSRC }?.fractionLost ?? 0
            let received = reports().reduce(0) { $0 + $1.kbps * 1000 }
            limit.update(fractionLost: loss, receivedBps: received)
            senderLimit = limit
            ReceiverEstimatedMaximumBitrate(
                senderSSRC: serverSSRC, bitrate: UInt64(limit.current),
                ssrcs: [video?.primary.wireSSRC, audio?.wireSSRC].compactMap { $0 }
            ).append(to: &out)
        }
    }

    /// Each stream's keyframe request and NACK, appended to a compound.
    private static func appendRequests(
        of receivers: [VideoReceiver], nowMs: Int64, serverSSRC: UInt32, to out: inout [UInt8]
    ) {
        for receiver in receivers {
            let (request, nack) = receiver.requests(nowMs: nowMs, serverSSRC: serverSSRC)
            request?.append(to: &out)
            nack?.append(to: &out)
        }
    }

    /// A sender report from one of this participant's sources: for LSR/DLSR and the media clock.
    func noteSenderReport(_ sr: SenderReport, nowMs: Int64) {
        if let audio, sr.ssrc == audio.ssrc { audio.noteSenderReport(sr, nowMs: nowMs) }
        for receiver in video?.layers ?? [] where sr.ssrc == receiver.ssrc {
            receiver.noteSenderReport(sr, nowMs: nowMs)
        }
        for receiver in screen?.layers ?? [] where sr.ssrc == receiver.ssrc {
            receiver.noteSenderReport(sr, nowMs: nowMs)
        }
    }

    func idleMilliseconds(nowMs: Int64) -> Int64 { nowMs - lastPacketMs.load(ordering: .relaxed) }
}
