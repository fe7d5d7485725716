import Foundation
import Media
import Codecs
import Publishing
import Logging
import Playout
import Synchronization
import CohostAPI

/// A room's programme: one H.264 and one AAC encoder, the voice levels carried in the stream, and the adaptive
/// controllers, feeding every output of the room through an `OutputFanout`.
///
/// Confined to the room's serial queue. Timestamps come from the mixer's tick counts (never from
/// a participant's clock), so audio and video share one timeline starting at 0; a canvas that is not
/// encoded (dynamic frame rate, a late tick) leaves a gap rather than shifting later frames.
/// Outputs ask for a keyframe when they (re)connect; the next encoded canvas is then an IDR.
/// With no output nothing is encoded at all (an idle room costs nothing): the timeline goes on, and the
/// AAC encoder is started afresh at its time when an output comes (no stale frames, no stale overlap).
final class ProgrammeFeed {
    private let config: RoomConfig
    private var video: H264Encoder?
    /// The AVC sequence header of an encoder made for a new canvas size, written in front of its first picture.
    private var pendingSequenceHeader: FLVTag?
    private var audio: AACEncoder
    /// Blocks went by with no output to encode them for, or unmixed (`restartAudioTimeline`): the next encoded
    /// block needs a new AAC encoder.
    private var audioSkipped = false
    private let outputs: OutputFanout
    private let logger: Logger
    private let onOutputState: @Sendable (String, String, OutputStateChange) -> Void
    /// Set from output threads, taken by the next video encode.
    private let keyframeRequest = KeyframeRequest()
    private var adaptation: StreamAdaptation
    private var lastKeyframeIndex: Int64?
    /// The newest AAC tag's timestamp, and a voice-levels message waiting until audio has reached its time
    /// (the AAC encoder hands frames out a little late; the audio lane of the interleaver must stay in order).
    private var lastAudioMs: Int64 = -1
    private var pendingLevels: FLVTag?
    /// The same levels as an SEI NAL for the next video frame (see `VoiceLevelsSEI`), while `seiPending`.
    /// Both buffers are rebuilt in place every 200 ms (the video tag copies the NAL, so nothing else holds them).
    private var seiNAL: [UInt8] = []
    private var seiPayload: [UInt8] = []
    private var seiPending = false
    /// Bodies of the `onVoiceLevels` tags (every 200 ms; see `FLVBodyRing`).
    private var levelBodies = FLVBodyRing(slots: 8, reserve: 256)
    private var audioBlocksIn: Int64 = 0
    /// Tag bodies reused once every output has written them (hot path: one per AAC frame and per canvas; see
    /// `FLVBodyRing`). More slots than tags normally in flight: the strict interleaver holds up to its
    /// `maxWaitMs` (400 ms) of one kind, an output's queue what it has not written yet; a ring too small only
    /// costs allocations again, never a tag.
    private var audioBodies = FLVBodyRing(slots: 32, reserve: 2 + 768 * 2)  // AAC-LC: at most 6144 bits per channel
    private var videoBodies: FLVBodyRing
    private(set) var headers: [FLVTag]
    private(set) var videoFramesEncoded = 0
    private(set) var audioFramesEncoded = 0
    /// When the last output status and control tick ran (monotonic ms; driven from the audio ticks,
    /// which are never skipped, by elapsed time because tick indices jump when the clock falls behind).
    private var lastStatusMs: Int64?
    private var lastControlMs: Int64?
    /// Control ticks of the adaptive controllers come this often.
    static let controlIntervalMs: Int64 = 500

    init(
        config: RoomConfig, logger: Logger, outputRules: OutputRules = OutputRules(),
        onOutputState: @escaping @Sendable (String, String, OutputStateChange) -> Void
    ) throws {
        self.config = config
        self.logger = logger
        self.onOutputState = onOutputState
        video = config.hasPicture ? try H264Encoder(config: config.h264Config) : nil
        audio = try AACEncoder(channels: config.audio.channels, bitrate: config.audio.bitrateKbps * 1000)
        outputs = OutputFanout(room: config.name, hasVideo: config.hasPicture, rules: outputRules)
        adaptation = config.adaptation
        headers = Self.headers(
            config: config, width: config.canvas.width, height: config.canvas.height, video: video, audio: audio)
        // Room for an average frame and a half; keyframes grow a slot once and it keeps that size.
        videoBodies = FLVBodyRing(
            slots: max(8, config.canvas.fps * 3 / 5 + 4),
            reserve: 5 + config.video.bitrateKbps * 1000 / 8 / max(1, config.canvas.fps) * 3 / 2)
    }

    /// The header tags an output starts (and restarts) with: metadata, the AVC and AAC sequence headers.
    private static func headers(
        config: RoomConfig, width: Int, height: Int, video: H264Encoder?, audio: AACEncoder
    ) -> [FLVTag] {
        let info = FLVStreamInfo(
            width: width, height: height, fps: config.canvas.fps,
            videoBitrateKbps: config.hasPicture ? config.video.bitrateKbps : nil,
            audioSampleRate: AudioFormat.sampleRate, audioChannels: config.audio.channels,
            audioBitrateKbps: config.audio.bitrateKbps, encoder: "Cohost")
        var headers = [FLVMuxer.metadataTag(info)]
        if let video { headers.append(FLVMuxer.avcSequenceHeader(video.decoderConfigurationRecord)) }
        headers.append(FLVMuxer.aacSequenceHeader(audio.audioSpecificConfig))
        return headers
    }

    /// The canvas is `width`×`height` from the next picture on: a new encoder (x264 cannot change its size), whose
    /// first picture is a keyframe behind a new AVC sequence header in the stream; outputs that reconnect later start
    /// with the new headers. The bitrate stays what adaptation made it.
    func resize(width: Int, height: Int) {
        guard video != nil else { return }
        var h264 = config.h264Config
        h264.width = width
        h264.height = height
        do {
            let encoder = try H264Encoder(config: h264)
            if let kbps = adaptation.bitrate?.currentKbps { try encoder.reconfigure(bitrateKbps: kbps) }
            video = encoder
        } catch {
            logger.error(
                "could not make the encoder for the new canvas",
                metadata: ["room": "\(config.name)", "error": "\(error)"])
            return
        }
        headers = Self.headers(config: config, width: width, height: height, video: video, audio: audio)
        outputs.replaceHeaders(headers)
        pendingSequenceHeader = headers.first { $0.kind == .video && $0.isSequenceHeader }
        lastKeyframeIndex = nil
    }

    /// The encoder's current target: the video bitrate (lowered by adaptive bitrate), or the audio
    /// bitrate in an audio-only room.
    var currentBitrateKbps: Int {
        guard config.hasPicture else { return config.audio.bitrateKbps }
        return adaptation.bitrate?.currentKbps ?? config.video.bitrateKbps
    }

    /// The rate canvases are encoded at now (below the canvas rate under dynamic frame rate).
    var currentFps: Int { adaptation.frameRate?.currentFps ?? config.canvas.fps }

    // MARK: outputs

    @discardableResult
    func addOutput(_ spec: OutputSpec, nowMs: Int64) throws(RoomError) -> OutputInfo {
        let request = keyframeRequest
        return try outputs.add(
            spec, headers: headers, bitrateKbps: currentBitrateKbps, logger: logger, nowMs: nowMs,
            onKeyframeNeeded: { request.set() }, onStateChange: onOutputState)
    }

    /// Stops and forgets an output; false when there is none with that id.
    func removeOutput(id: String) -> Bool {
        guard outputs.remove(id: id) else { return false }
        if outputs.isEmpty {
            // Levels of people who may be gone by the time an output comes: the next ones are fresh.
            pendingLevels = nil
            seiPending = false
        }
        return true
    }

    /// Whether anything is sent anywhere: without an output the room mixes and encodes nothing.
    var hasOutputs: Bool { !outputs.isEmpty }

    var outputInfos: [OutputInfo] { outputs.infos(bitrateKbps: currentBitrateKbps) }
    var outputSpecs: [OutputSpec] { outputs.specs }

    /// Whether viewers (WHEP) watch: the pictures are encoded for them without an output.
    var watched = false
    /// The picture the last canvas was encoded into (nil when it was not), valid until the next canvas: what the
    /// viewers get.
    private(set) var lastVideoTag: FLVTag?
    var parameterSets: (sps: [UInt8], pps: [UInt8])? { video?.parameterSets }
    /// The programme's H.264 as a profile-level-id ("640028"), nil without video.
    var profileLevelId: String? {
        guard let record = video?.decoderConfigurationRecord, record.count > 3 else { return nil }
        return record[1...3].map { String(format: "%02x", $0) }.joined()
    }
    /// The next picture is a keyframe.
    func requestKeyframe() { keyframeRequest.set() }
    var hlsStream: HLSStream? { outputs.hlsStream }

    /// Called every audio tick: runs the adaptive controllers every `controlIntervalMs`, and every
    /// `statusIntervalMs` returns the outputs' statuses for the room's `output_status` events (empty in
    /// between; the first comes one interval after the room starts).
    func outputTick(nowMs now: Int64) -> [(output: any Output, status: OutputStatus)] {
        if now - (lastControlMs ?? now - Self.controlIntervalMs) >= Self.controlIntervalMs {
            lastControlMs = now
            adapt(nowMs: now)
        }
        let lastStatus = lastStatusMs ?? now
        lastStatusMs = lastStatus
        guard now - lastStatus >= Int64(config.statusIntervalMs) else { return [] }
        lastStatusMs = now
        return outputs.sampleStatuses(nowMs: now, bitrateKbps: currentBitrateKbps)
    }

    // MARK: adaptation

    /// One control tick of the adaptive controllers (when the room enabled any): reads the connected
    /// outputs' queues and applies a new bitrate or frame rate.
    private func adapt(nowMs: Int64) {
        guard adaptation.isEnabled else { return }
        let change = adaptation.update(queueMs: outputs.connectedPressureMs(), nowMs: nowMs)
        if let kbps = change.bitrateKbps, let video {
            do {
                try video.reconfigure(bitrateKbps: kbps)
                logger.info("video bitrate now \(kbps) kbps", metadata: ["room": "\(config.name)"])
            } catch {
                logger.error("could not change the bitrate", metadata: ["room": "\(config.name)", "error": "\(error)"])
            }
        }
        if let fps = change.fps {
            logger.info("video frame rate now \(fps) fps", metadata: ["room": "\(config.name)"])
        }
    }

    /// Whether canvas `index` should be composed and encoded at the current frame rate.
    func wantsCanvas(index: Int64) -> Bool { adaptation.shouldEncode(canvasIndex: index) }

    // MARK: encoding

    /// Encodes canvas number `index`. Its time is index / canvas fps, plus `phaseMs` (how much later than that
    /// it was composed: see `CanvasPhase`) and `leadMs` (how far ahead of its sound it is stamped: see `VideoLead`).
    func encodeVideo(_ canvas: VideoFrame, index: Int64, leadMs: Int64 = 0, phaseMs: Int64 = 0) {
        lastVideoTag = nil
        // No output and no viewer: the canvas's time is left empty, as a skipped canvas's is (an output asks for an
        // IDR).
        guard let video, !outputs.isEmpty || watched else { return }
        do {
            let fps = Int64(config.canvas.fps)
            // Video is stamped later by the AAC priming, as ffmpeg does (avoid_negative_ts): a player that
            // does not trim the priming then hears each sample when it sees the picture taken with it.
            let primingMs = Int64(audio.primingSamples) * 1000 / Int64(AudioFormat.sampleRate)
            // The tag body is built straight from x264's buffer into a reused body (hot path: no allocation).
            let tag = try video.encode(canvas, pts: index, forceKeyframe: keyframeDue(index: index)) {
                avcc, isKeyframe, pts, dts in
                let dtsMs = dts * 1000 / fps + primingMs + phaseMs + leadMs
                let ptsMs = pts * 1000 / fps + primingMs + phaseMs + leadMs
                if isKeyframe { lastKeyframeIndex = pts }
                let sei = seiPending ? seiNAL : nil
                seiPending = false
                if var header = pendingSequenceHeader {
                    // In the stream at this picture's time, ahead of it: players switch to the new size here.
                    pendingSequenceHeader = nil
                    header.timestampMs = UInt32(clamping: max(0, dtsMs))
                    outputs.push(header)
                }
                var tag = FLVMuxer.videoTag(
                    avcc: avcc, sei: sei, isKeyframe: isKeyframe,
                    timestampMs: UInt32(clamping: max(0, dtsMs)),
                    compositionTimeMs: Int32(clamping: ptsMs - dtsMs), bodies: &videoBodies)
                // Output queues measure backlog without the lead; the phase is real time, like the index.
                tag.leadMs = UInt32(clamping: max(0, leadMs))
                return tag
            }
            guard let tag else { return }
            lastVideoTag = tag
            videoFramesEncoded += 1
            outputs.push(tag)
            outputs.deliver()
        } catch {
            logger.error("H.264 encode failed", metadata: ["room": "\(config.name)", "error": "\(error)"])
        }
    }

    /// An IDR when an output asked for one, or when frames are being skipped and the keyframe interval
    /// (counted in canvases, i.e. in time) has passed: x264 counts its interval in encoded frames.
    private func keyframeDue(index: Int64) -> Bool {
        if keyframeRequest.take() { return true }
        guard currentFps < config.canvas.fps, let last = lastKeyframeIndex else { return false }
        return index - last >= Int64(config.h264Config.keyintFrames)
    }

    /// The next block's tick is not the one after the last: its sound restarts there (a new encoder, stamped from
    /// that tick), leaving a gap, so that it stays at its pictures' time.
    func restartAudioTimeline() {
        audioSkipped = true
    }

    /// Encodes one 20 ms mixed block, the one of audio tick `tick` (its time is tick × 20 ms).
    func encodeAudio(_ block: [Float], tick: Int64) {
        audioBlocksIn += 1
        guard !outputs.isEmpty else {
            audioSkipped = true
            return
        }
        do {
            if audioSkipped {
                // On the clock's timeline: a parked room got no ticks at all while it was idle, and a long stall
                // skipped more than the room would make up.
                audioSkipped = false
                audioBlocksIn = tick + 1
                audio = try AACEncoder(
                    channels: config.audio.channels, bitrate: config.audio.bitrateKbps * 1000,
                    startSample: tick * Int64(AudioFormat.blockFrames))
            }
            // Each AAC frame goes from libavcodec's packet straight into a reused tag body (hot path: no allocation).
            try audio.encode(block) { data, pts in
                audioFramesEncoded += 1
                let ms = pts * 1000 / Int64(AudioFormat.sampleRate)
                lastAudioMs = ms
                outputs.push(
                    FLVMuxer.audioTag(aac: data, timestampMs: UInt32(clamping: max(0, ms)), bodies: &audioBodies))
            }
            if var tag = pendingLevels, Int64(tag.timestampMs) <= lastAudioMs {
                pendingLevels = nil
                // Stamped with the newest audio tag: the audio lane must never go backwards (a few ms late
                // at most; the message's own `time` keeps the exact block time).
                tag.timestampMs = UInt32(clamping: lastAudioMs)
                outputs.push(tag)
            }
            outputs.deliver()
        } catch {
            logger.error("AAC encode failed", metadata: ["room": "\(config.name)", "error": "\(error)"])
        }
    }

    /// Carries the voice levels of the block just encoded in the programme (`onVoiceLevels`, see
    /// protocol/flv-voice-levels.md), stamped with that block's time. A message still waiting is replaced.
    func sendVoiceLevels(_ levels: [(userId: String, level: Int)], activeSpeaker: String?) {
        // On the programme's clock, where the AAC priming shifts every sound (and so every picture) later.
        let primingMs = Int64(audio.primingSamples) * 1000 / Int64(AudioFormat.sampleRate)
        let ms = max(0, (audioBlocksIn - 1) * Int64(AudioFormat.blockMilliseconds)) + primingMs
        pendingLevels = FLVMuxer.voiceLevelsTag(
            levels: levels, activeSpeaker: activeSpeaker,
            timestampMs: UInt32(clamping: ms), bodies: &levelBodies)
        if video != nil {
            seiPayload.removeAll(keepingCapacity: true)
            VoiceLevelsSEI.appendJSON(
                levels: levels, activeSpeaker: activeSpeaker, timeMs: UInt32(clamping: ms), to: &seiPayload)
            seiNAL.removeAll(keepingCapacity: true)
            VoiceLevelsSEI.appendNAL(payload: seiPayload, to: &seiNAL)
            seiPending = true
        }
    }

    /// Sends what is buffered and stops every output cleanly (each flushes its queue, bounded).
    func stop() { outputs.stop() }
}

/// An output's request for a keyframe, set from its thread and taken by the next video encode.
private final class KeyframeRequest: Sendable {
    private let requested = Atomic<Bool>(false)
    func set() { requested.store(true, ordering: .releasing) }
    /// Clears the request and says whether there was one.
    func take() -> Bool { requested.exchange(false, ordering: .acquiringAndReleasing) }
}

extension FLVTag: InterleavedTag {
    public var isVideo: Bool { kind == .video }
}
