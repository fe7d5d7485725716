import CohostAPI
import Foundation
import Layout
import Publishing

extension RoomInfo {
    /// The room as `GET /v1/rooms/{room}` shows it now.
    public init(_ room: Room) {
        let c = room.config
        let canvas = room.currentCanvas
        let (anchor, images) = room.appearance
        let voice = room.voiceReport
        self.init(
            name: c.name, audioOnly: c.audioOnly, maxParticipants: c.maxParticipants,
            canvas: CanvasInfo(
                width: canvas.width, height: canvas.height, fps: canvas.fps, background: canvas.background,
                placeholder: canvas.placeholder, holdMs: canvas.holdMs,
                backgroundImage: images.background?.info, placeholderImage: images.placeholder?.info),
            video: !c.hasPicture
                ? nil
                : VideoInfo(
                    bitrate: c.video.bitrateKbps, keyint: c.video.keyintSeconds, profile: c.video.profile.rawValue,
                    adaptiveBitrate: c.video.adaptiveBitrate, minBitrate: c.video.minBitrateKbps,
                    dynamicFps: c.video.dynamicFps),
            audio: AudioInfo(bitrate: c.audio.bitrateKbps, channels: c.audio.channels),
            layout: room.currentLayout, anchor: anchor, pipAnchor: room.effectiveAnchor,
            activeSpeaker: voice.activeSpeaker,
            watermark: images.watermark.map { w in
                WatermarkInfo(
                    image: w.image.info, x: w.rect.x, y: w.rect.y, width: w.rect.width, height: w.rect.height,
                    opacity: w.opacity)
            },
            participants: room.participants.map { p in
                ParticipantInfo(
                    userId: p.userId, joinedAt: Date.ISO8601FormatStyle().format(p.joinedAt), muted: p.muted,
                    gain: p.gain, admin: p.isAdmin, level: voice.levels[p.userId] ?? 0, streams: p.reports(),
                    returns: p.returnReports(), camera: p.cameraOn, microphone: p.microphoneOn,
                    sources: p.sources.map(\.rawValue),
                    slots: p.slots.map(SlotInfo.init),
                    unforwardable: p.unforwardableStreams.map {
                        StreamRef(userId: $0.userId, source: $0.source.rawValue)
                    }, name: p.displayName)
            },
            outputs: room.outputs, statusIntervalMs: c.statusIntervalMs, maxIngestBitrate: c.maxIngestBitrate,
            maxVideoSize: Size(width: c.maxVideoSize.width, height: c.maxVideoSize.height),
            returnVideo: ReturnVideoInfo(c.returnVideo))
        let pulled = room.sources.all
        sources = pulled.isEmpty ? nil : pulled.map(\.info)
        viewers = room.viewerCount
    }
}

extension RoomInfo.ReturnVideoInfo {
    /// The room view's settings as the API and the stored definition show them; nil: "none".
    init(_ settings: RoomConfig.ReturnVideo?) {
        guard let v = settings else {
            self = .none
            return
        }
        self = .view(.init(width: v.width, height: v.height, fps: v.fps, bitrate: v.bitrate))
    }
}

extension OutputInfo {
    /// An output's state, its counters since it started, and the last status interval's rates.
    init(_ output: any Output, status: OutputStatus, bitrateKbps: Int) {
        let change = output.stateChange
        let stats = output.stats
        self.init(
            id: output.id, url: output.url, state: change.state.rawValue,
            interleave: output.options.interleave.rawValue, queueLimitMs: output.options.queueLimitMs,
            maxRetries: output.options.maxRetries)
        attempt = change.attempt
        error = change.message
        sentBytes = stats.sentBytes
        droppedVideoTags = stats.droppedVideoTags
        droppedAudioTags = stats.droppedAudioTags
        reconnects = stats.reconnects
        skippedVideoTags = stats.skippedVideoTags
        skippedAudioTags = stats.skippedAudioTags
        videoFps = status.videoFps
        audioFps = status.audioFps
        kbps = status.kbps
        droppedVideoFrames = status.droppedVideoFrames
        droppedAudioFrames = status.droppedAudioFrames
        // The queue as it is now, not as it was at the last interval.
        queueMs = stats.queueMs
        bitrate = bitrateKbps
    }
}

extension SlotInfo {
    /// A slot as the room's JSON shows it: what it shows, what it sent, what its receiver reports.
    init(_ slot: ForwardSlot) {
        let r = slot.report
        let heard = slot.feedback.snapshot
        self.init(
            mid: r.mid, userId: r.shown?.userId, source: r.shown?.source.rawValue,
            codecs: slot.offer.formats.map(\.codec.key), paused: r.paused, packets: r.packets, bytes: r.bytes,
            bitrate: r.bitrateBps, retransmitted: r.retransmitted, nacksReceived: r.nacksReceived,
            keyframeRequests: r.keyframeRequests, switches: r.switches, roundTripMs: heard.roundTripMs,
            lossPercent: heard.lossPercent, estimatedBitrate: heard.estimatedBitrate)
        rid = r.paused ? nil : slot.source?.rid
        nextRid = slot.nextLayer?.rid
    }
}
