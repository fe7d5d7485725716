import Clocks
import Publishing
import RTP
import Synchronization

/// A receiver's frames, as released by its jitter buffer, handed to the `TrackRecorder` recording them (nobody's
/// most of the time). Called on the packet path: a lock held for a pointer check, and the recorder's own queue.
final class RecordingTap: Sendable {
    private let recorder = Mutex<TrackRecorder?>(nil)

    /// Sets (or, with nil, clears) the recorder; false when another one has the tap.
    func attach(_ new: TrackRecorder?) -> Bool {
        recorder.withLock { current in
            guard new == nil || current == nil else { return false }
            current = new
            return true
        }
    }

    func video(_ frame: EncodedFrame) {
        guard let to = recorder.withLock({ $0 }) else { return }
        to.video(
            frame.data, rtpTimestamp: frame.rtpTimestamp, isKeyframe: frame.isKeyframe,
            arrivalMs: MonotonicClock.nowMs())
    }

    func audio(_ frame: EncodedFrame, arrivalMs: Int64) {
        recorder.withLock({ $0 })?.audio(frame.data, rtpTimestamp: frame.rtpTimestamp, arrivalMs: arrivalMs)
    }
}
