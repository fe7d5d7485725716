import Foundation
import Media
import Codecs
import Publishing
import Logging

/// A room's encoded output: one H.264 and one AAC encoder feeding every output of the room.
///
/// Confined to the room's serial queue. Timestamps come from the mixer's tick counts (never from
/// a participant's clock), so audio and video share one timeline starting at 0.
final class Programme {
    private let config: RoomConfig
    private let video: H264Encoder?
    private let audio: AACEncoder
    private var interleaver: TagInterleaver
    private var outputs: [String: any Output] = [:]
    private var outputOrder: [String] = []
    private var ready: [FLVTag] = []
    private var nextOutputNumber = 1
    private let logger: Logger
    private let onOutputState: @Sendable (String, String, OutputState, String?) -> Void
    let headers: [FLVTag]
    private(set) var videoFramesEncoded = 0
    private(set) var audioFramesEncoded = 0

    init(config: RoomConfig, logger: Logger,
         onOutputState: @escaping @Sendable (String, String, OutputState, String?) -> Void) throws {
        self.config = config
        self.logger = logger
        self.onOutputState = onOutputState
        video = config.audioOnly ? nil : try H264Encoder(config: config.h264Config)
        audio = try AACEncoder(channels: config.audio.channels, bitrate: config.audio.bitrateKbps * 1000)
        interleaver = TagInterleaver(hasVideo: !config.audioOnly)
        let info = FLVStreamInfo(
            width: config.canvas.width, height: config.canvas.height, fps: config.canvas.fps,
            videoBitrateKbps: config.audioOnly ? nil : config.video.bitrateKbps,
            audioSampleRate: AudioFormat.sampleRate, audioChannels: config.audio.channels,
            audioBitrateKbps: config.audio.bitrateKbps, encoder: "Cohost")
        var headers = [FLVMuxer.metadataTag(info)]
        if let video { headers.append(FLVMuxer.avcSequenceHeader(video.decoderConfigurationRecord)) }
        headers.append(FLVMuxer.aacSequenceHeader(audio.audioSpecificConfig))
        self.headers = headers
    }

    // MARK: outputs

    @discardableResult
    func addOutput(url: String) throws(RoomError) -> RoomInfo.OutputInfo {
        guard outputs.count < RoomLimits.maxOutputs else {
            throw .badRequest("limit_exceeded", "at most \(RoomLimits.maxOutputs) outputs per room")
        }
        let id = "o\(nextOutputNumber)"
        let report = onOutputState
        let output: any Output
        do {
            output = try makeOutput(id: id, url: url, logger: logger) { state, error in report(id, url, state, error) }
        } catch {
            throw .badRequest("invalid_output", "\(error)")
        }
        nextOutputNumber += 1
        outputs[id] = output
        outputOrder.append(id)
        output.start(headers: headers)
        return info(output)
    }

    func removeOutput(id: String) -> Bool {
        guard let output = outputs.removeValue(forKey: id) else { return false }
        outputOrder.removeAll { $0 == id }
        output.stop()
        return true
    }

    var outputInfos: [RoomInfo.OutputInfo] { outputOrder.compactMap { outputs[$0] }.map(info) }

    private func info(_ o: any Output) -> RoomInfo.OutputInfo {
        let s = o.stats
        return RoomInfo.OutputInfo(id: o.id, url: o.url, state: o.state.rawValue, sentBytes: s.sentBytes,
                          droppedVideoTags: s.droppedVideoTags, droppedAudioTags: s.droppedAudioTags)
    }

    // MARK: encoding

    /// Encodes canvas number `index` (its time is index / fps).
    func encodeVideo(_ canvas: VideoFrame, index: Int64) {
        guard let video else { return }
        do {
            guard let encoded = try video.encode(canvas, pts: index, forceKeyframe: false) else { return }
            videoFramesEncoded += 1
            let fps = Int64(config.canvas.fps)
            // Video is stamped later by the AAC priming, as ffmpeg does (avoid_negative_ts): a player that
            // does not trim the priming then hears each sample when it sees the picture taken with it.
            let primingMs = Int64(audio.primingSamples) * 1000 / Int64(AudioFormat.sampleRate)
            let dtsMs = encoded.dts * 1000 / fps + primingMs
            let ptsMs = encoded.pts * 1000 / fps + primingMs
            let tag = FLVMuxer.videoTag(avcc: encoded.data, isKeyframe: encoded.isKeyframe,
                                        timestampMs: UInt32(clamping: max(0, dtsMs)),
                                        compositionTimeMs: Int32(clamping: ptsMs - dtsMs))
            interleaver.push(tag, into: &ready)
            deliver()
        } catch {
            logger.error("H.264 encode failed", metadata: ["room": "\(config.name)", "error": "\(error)"])
        }
    }

    /// Encodes one 20 ms mixed block.
    func encodeAudio(_ block: [Float]) {
        do {
            for frame in try audio.encode(block) {
                audioFramesEncoded += 1
                let ms = frame.pts * 1000 / Int64(AudioFormat.sampleRate)
                interleaver.push(FLVMuxer.audioTag(aac: frame.data, timestampMs: UInt32(clamping: max(0, ms))), into: &ready)
            }
            deliver()
        } catch {
            logger.error("AAC encode failed", metadata: ["room": "\(config.name)", "error": "\(error)"])
        }
    }

    private func deliver() {
        guard !ready.isEmpty else { return }
        for id in outputOrder {
            guard let output = outputs[id] else { continue }
            for tag in ready { output.send(tag) }
        }
        ready.removeAll(keepingCapacity: true)
    }

    /// Sends what is buffered and stops every output cleanly.
    func stop() {
        interleaver.flush(into: &ready)
        deliver()
        for id in outputOrder { outputs[id]?.stop() }
        outputs.removeAll()
        outputOrder.removeAll()
    }
}
