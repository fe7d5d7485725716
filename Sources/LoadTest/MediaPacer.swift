import Foundation
import RTP

/// Sends every participant's media in real time from one thread: an Opus packet each 20 ms and a VP8 frame each
/// 1/fps s, replayed from the clip with running sequence numbers and timestamps. Each participant's video starts at
/// its own phase within the frame interval, so N senders do not burst in the same millisecond. Participants are
/// added while the pacer runs (as they join); the hand-off is the only state shared with other threads.
final class MediaPacer: @unchecked Sendable {
    private let clip: SyntheticClip
    private let handoff = ParticipantHandoff()

    /// Per participant, owned by the pacer's thread.
    private struct Stream {
        let participant: LoadParticipant
        var nextAudioNs: UInt64
        var nextVideoNs: UInt64
        var audioIndex = 0
        var videoIndex = 0
        var audioSequence = UInt16.random(in: 0...UInt16.max)
        var videoSequence = UInt16.random(in: 0...UInt16.max)
        var audioTimestamp = UInt32.random(in: 0...UInt32.max)
        var videoTimestamp = UInt32.random(in: 0...UInt32.max)
        var packetizer = VP8Packetizer()
    }

    static let tickNs: UInt64 = 2_000_000

    init(clip: SyntheticClip) {
        self.clip = clip
        let thread = Thread { [self] in loop() }
        thread.name = "load-test pacer"
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    func add(_ participant: LoadParticipant) { handoff.add(participant) }

    /// Stops sending and waits for the thread to end (the participants' `sent` counters are final after).
    func stop() {
        handoff.stop()
    }

    private func loop() {
        var streams: [Stream] = []
        var packet: [UInt8] = []
        packet.reserveCapacity(1500)
        var payload: [UInt8] = []
        payload.reserveCapacity(1500)
        let audioNs: UInt64 = 20_000_000
        let videoNs: UInt64 = clip.fps > 0 ? 1_000_000_000 / UInt64(clip.fps) : 0
        let videoTicks = UInt32(90_000 / max(clip.fps, 1))
        var deadline = MonotonicNanos.now()
        while true {
            guard let joined = handoff.take() else { break }
            let now = MonotonicNanos.now()
            for participant in joined {
                let phase = videoNs == 0 ? 0 : UInt64(streams.count * 7) % 16 * (videoNs / 16)
                streams.append(Stream(participant: participant, nextAudioNs: now, nextVideoNs: now + phase))
            }
            for i in streams.indices {
                while streams[i].nextAudioNs <= now {
                    let opus = clip.audio[streams[i].audioIndex]
                    RTPPacket.write(
                        payloadType: 111, marker: false, sequenceNumber: streams[i].audioSequence,
                        timestamp: streams[i].audioTimestamp, ssrc: streams[i].participant.audioSSRC,
                        payload: opus, into: &packet)
                    streams[i].participant.send(packet)
                    streams[i].participant.sent.audioPackets += 1
                    streams[i].audioSequence &+= 1
                    streams[i].audioTimestamp &+= 960
                    streams[i].audioIndex = (streams[i].audioIndex + 1) % clip.audio.count
                    streams[i].nextAudioNs += audioNs
                }
                guard streams[i].participant.sendsVideo, videoNs > 0 else { continue }
                while streams[i].nextVideoNs <= now {
                    sendFrame(&streams[i], packet: &packet, payload: &payload)
                    streams[i].videoTimestamp &+= videoTicks
                    streams[i].videoIndex = (streams[i].videoIndex + 1) % clip.video.count
                    streams[i].nextVideoNs += videoNs
                }
            }
            deadline += Self.tickNs
            if deadline < now { deadline = now }
            MonotonicNanos.sleep(until: deadline)
        }
        handoff.workerEnded()
    }

    private func sendFrame(_ stream: inout Stream, packet: inout [UInt8], payload: inout [UInt8]) {
        let frame = clip.video[stream.videoIndex]
        let participant = stream.participant
        var sequence = stream.videoSequence
        let timestamp = stream.videoTimestamp
        frame.withUnsafeBytes { bytes in
            stream.packetizer.packetize(bytes) { descriptor, piece, last in
                payload.removeAll(keepingCapacity: true)
                payload.append(descriptor.0)
                payload.append(descriptor.1)
                payload.append(descriptor.2)
                payload.append(descriptor.3)
                payload.append(contentsOf: piece)
                RTPPacket.write(
                    payloadType: 96, marker: last, sequenceNumber: sequence, timestamp: timestamp,
                    ssrc: participant.videoSSRC, payload: payload, into: &packet)
                participant.send(packet)
                participant.sent.videoPackets += 1
                sequence &+= 1
            }
        }
        stream.videoSequence = sequence
        participant.sent.videoFrames += 1
    }
}

/// CLOCK_MONOTONIC in nanoseconds, and sleeping to an absolute point on it (no drift from the loop's own work).
enum MonotonicNanos {
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    static func sleep(until ns: UInt64) {
        var ts = timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}
