import Foundation
import Dispatch
import Media
import Synchronization
import Clocks

/// When a room's work runs: its audio and video schedules on the shared `MixClock`, the relays that carry each
/// tick onto the room's queue, and parking (an idle room's schedules suspended in the clock, so it wakes no
/// thread until a join or an output).
///
/// Tokens and the parked state are guarded by `lock`; the video tick's pending flag is atomic (the clock thread
/// sets it, the room's queue clears it). Lock order: the roster's lock, then this one, then
/// the clock's (a join wakes the room, and a tick parks it, under the roster's lock).
final class TickSchedule: @unchecked Sendable {
    private let lock = NSLock()
    private let queue: DispatchQueue
    private var clock: MixClock?
    private var tokens: [MixClock.Token] = []
    private var videoToken: MixClock.Token?
    /// Kept for the room's lifetime (a relay that goes away cancels its pending ticks).
    private var relays: [TickRelay] = []
    /// A canvas is being made: the next video tick is skipped (lower fps, no backlog).
    private let videoTickPending = Atomic<Bool>(false)
    private var parked = false

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Registers the audio schedule (every 20 ms) and, with `videoFps`, the video one, both counting from one
    /// instant so that tick × interval means the same time for both. Handlers run on the room's queue.
    func start(clock: MixClock, videoFps: Int?, audio: @escaping (Int64) -> Void, video: @escaping (Int64) -> Void) {
        // Ticks reach the queue through relays, not `queue.async` (hot path: no allocation per tick).
        let audioRelay = TickRelay(queue: queue, handler: audio)
        let audioInterval = UInt64(AudioFormat.blockMilliseconds) * 1_000_000
        let start = MixClock.nextAlignedInstant(interval: audioInterval)
        let audioToken = clock.schedule(intervalNanoseconds: audioInterval, start: start) { tick in
            audioRelay.post(tick)
        }
        var videoRelay: TickRelay?
        var videoToken: MixClock.Token?
        if let videoFps {
            let relay = TickRelay(queue: queue) { [weak self] tick in
                video(tick)
                self?.videoTickPending.store(false, ordering: .releasing)
            }
            videoRelay = relay
            videoToken = clock.schedule(intervalNanoseconds: 1_000_000_000 / UInt64(videoFps), start: start) {
                [weak self] tick in
                // Skipped when the previous canvas is still being made.
                guard let self, !self.videoTickPending.exchange(true, ordering: .acquiringAndReleasing) else { return }
                relay.post(tick)
            }
        }
        lock.withLock {
            self.clock = clock
            relays = [audioRelay] + (videoRelay.map { [$0] } ?? [])
            tokens = [audioToken] + (videoToken.map { [$0] } ?? [])
            self.videoToken = videoToken
        }
    }

    /// Whether the clock has stopped posting ticks to this idle room.
    var isParked: Bool { lock.withLock { parked } }

    /// Parks the schedules unless they already are; true when this call parked them.
    func park() -> Bool {
        lock.withLock {
            guard !parked else { return false }
            parked = true
            clock?.park(tokens)
            return true
        }
    }

    /// Unparks the schedules if they were parked.
    func wake() {
        lock.withLock {
            guard parked else { return }
            parked = false
            clock?.unpark(tokens)
        }
    }

    /// Moves the video schedule later by `ms` (the canvas phase).
    func shiftVideo(byMs ms: Int64) {
        lock.withLock {
            guard let clock, let videoToken else { return }
            clock.shift(videoToken, byNanoseconds: ms * 1_000_000)
        }
    }

    /// Cancels every schedule. A tick already posted still runs.
    func cancel() {
        let (clock, cancelled) = lock.withLock { () -> (MixClock?, [MixClock.Token]) in
            defer {
                tokens.removeAll()
                videoToken = nil
            }
            return (self.clock, tokens)
        }
        for token in cancelled { clock?.cancel(token) }
    }
}
