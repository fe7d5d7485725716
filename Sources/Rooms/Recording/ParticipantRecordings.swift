import CohostAPI
import Clocks
import Foundation
import Logging
import Publishing

/// A room's recordings of participants' own tracks, as received (`TrackRecorder`): started and stopped by the API,
/// stopped when the participant leaves or the room closes, each announced by `recording_started` and
/// `recording_stopped`. A receiver feeds one recording at a time.
///
/// `@unchecked Sendable`: `entries` and `next` are guarded by `lock`; recorders report from their own threads.
final class ParticipantRecordings: @unchecked Sendable {
    private struct Entry {
        var info: RecordingInfo
        let recorder: TrackRecorder
        let audio: AudioReceiver?
        let video: VideoReceiver?
        /// Why it is stopping; nil while it records.
        var reason: String?
    }

    private let room: String
    private let directory: RecordingsDirectory?
    private let events: EventHub
    private let logger: Logger
    private let lock = NSLock()
    private var entries: [(id: String, entry: Entry)] = []
    private var next = 1

    init(room: String, directory: RecordingsDirectory?, events: EventHub, logger: Logger) {
        self.room = room
        self.directory = directory
        self.events = events
        self.logger = logger
    }

    var infos: [RecordingInfo] {
        lock.withLock {
            entries.map { id, entry in
                var info = entry.info
                let counters = entry.recorder.counters
                info.videoFrames = counters.videoFrames
                info.audioFrames = counters.audioFrames
                info.droppedFrames = counters.droppedFrames
                return info
            }
        }
    }

    /// Starts recording `participant`'s `source` ("camera": microphone and camera; "screen").
    func start(_ participant: Participant, source: String) throws(RoomError) -> RecordingInfo {
        guard let directory else {
            throw .conflict("recordings_disabled", "this server has no recordings directory")
        }
        let audio: AudioReceiver?
        let layered: LayeredVideo?
        switch source {
        case "camera":
            audio = participant.audio
            layered = participant.video
        case "screen":
            audio = nil
            layered = participant.screen
        default:
            throw .badRequest("invalid_source", "source is \"camera\" or \"screen\", not \"\(source.prefix(32))\"")
        }
        // Of a simulcast camera, the layer whose last keyframe was the largest (the first offered before any came).
        let layers = layered?.layers ?? []
        let video =
            layers.filter { $0.layerStatus.width > 0 }.max { $0.layerStatus.width < $1.layerStatus.width }
            ?? layers.first
        guard audio != nil || video != nil else {
            throw .conflict("nothing_to_record", "'\(participant.userId)' sends no \(source) this server receives")
        }
        let id: String = lock.withLock {
            defer { next += 1 }
            return "r\(next)"
        }
        let codec = video?.codecForRecording
        let file =
            "\(room)-\(participant.userId)-\(source)-\(OutputTable.stamp())-\(id).\(TrackRecorder.fileExtension(video: codec))"
        let started = Date()
        let info = RecordingInfo(
            id: id, userId: participant.userId, source: source, file: file, videoCodec: codec?.rawValue,
            audio: audio != nil, startedAt: Self.rfc3339(started))
        let recorder: TrackRecorder
        do {
            recorder = try TrackRecorder(
                path: directory.path + "/" + file, video: codec, audio: audio != nil, startMs: MonotonicClock.nowMs(),
                quota: directory.quota, logger: logger
            ) { [weak self] summary in
                self?.finished(id, summary)
            }
        } catch {
            throw .conflict("recording_failed", error.message)
        }
        let attached = (audio?.record(into: recorder) ?? true, video?.record(into: recorder) ?? true)
        guard attached.0 && attached.1 else {
            if attached.0 { _ = audio?.record(into: nil) }
            if attached.1 { _ = video?.record(into: nil) }
            recorder.stop()
            try? FileManager.default.removeItem(atPath: directory.path + "/" + file)
            throw .conflict("already_recording", "'\(participant.userId)''s \(source) is being recorded already")
        }
        lock.withLock {
            entries.append((id, Entry(info: info, recorder: recorder, audio: audio, video: video)))
        }
        events.publish(.recordingStarted(recording: id, userId: participant.userId, source: source, file: file))
        logger.info(
            "recording started", metadata: ["room": "\(room)", "user": "\(participant.userId)", "file": "\(file)"])
        return info
    }

    /// Stops a recording (`reason` goes into its `recording_stopped`); waits for its file to be closed when `wait`.
    @discardableResult
    func stop(id: String, reason: String, wait: Bool = true) -> Bool {
        guard let recorder = detach(reason: reason, where: { $0 == id }).first else { return false }
        if wait { recorder.stop() } else { DispatchQueue.global().async { recorder.stop() } }
        return true
    }

    /// Stops `userId`'s recordings without waiting (the participant left).
    func stop(userId: String, reason: String) {
        let ids = lock.withLock { entries.filter { $0.entry.info.userId == userId }.map(\.id) }
        for id in ids { stop(id: id, reason: reason, wait: false) }
    }

    /// Stops every recording and waits for their files (the room closes).
    func stopAll(reason: String) {
        for recorder in detach(reason: reason, where: { _ in true }) { recorder.stop() }
    }

    /// Marks the matching recordings as stopping and takes their receivers' taps away.
    private func detach(reason: String, where matches: (String) -> Bool) -> [TrackRecorder] {
        let taken: [Entry] = lock.withLock {
            var out: [Entry] = []
            for i in entries.indices where matches(entries[i].id) && entries[i].entry.reason == nil {
                entries[i].entry.reason = reason
                out.append(entries[i].entry)
            }
            return out
        }
        for entry in taken {
            _ = entry.audio?.record(into: nil)
            _ = entry.video?.record(into: nil)
        }
        return taken.map(\.recorder)
    }

    /// A recorder's worker ended: stopped, or failed on its own.
    private func finished(_ id: String, _ summary: TrackRecorder.Summary) {
        let entry: Entry? = lock.withLock {
            guard let index = entries.firstIndex(where: { $0.id == id }) else { return nil }
            return entries.remove(at: index).entry
        }
        guard let entry else { return }
        _ = entry.audio?.record(into: nil)
        _ = entry.video?.record(into: nil)
        let reason = summary.error != nil ? "error" : entry.reason ?? "error"
        events.publish(
            .recordingStopped(
                recording: id, userId: entry.info.userId, source: entry.info.source, file: entry.info.file,
                reason: reason, bytes: summary.bytes, durationMs: Int(summary.durationMs), error: summary.error))
        logger.info(
            "recording stopped",
            metadata: [
                "room": "\(room)", "file": "\(entry.info.file)", "reason": "\(reason)", "bytes": "\(summary.bytes)",
            ])
    }

    static func rfc3339(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
