/// How long before the mixer needed it a voice's audio reached its FIFO: the *slack* of each read (the read's time
/// minus the arrival of the packet holding its last sample), and the smallest slack of each second of reads, the
/// margin the voice has against a late packet (`voiceMarginMs` in `GET /v1/rooms/{room}`). Measured only, not acted
/// on: docs/architecture.md, "The audio path". Arrivals are kept in a fixed ring (hot path: nothing allocated).
public struct VoiceMargin {
    public static let windowReads = 50

    /// End (exclusive, in stream frames) and arrival time of each recent write, oldest first.
    private var ends: [Int]
    private var arrivals: [Int64]
    private var head = 0
    private var count = 0
    public private(set) var writtenFrames = 0
    public private(set) var consumedFrames = 0
    /// `consumedFrames` at the last measured read.
    private var measuredUpTo = 0
    private var windowMin = Int.max
    private var windowCount = 0
    /// The smallest slack of the last complete window (ms); nil until a window had a timed read.
    public private(set) var lastWindowMinMs: Int?

    public init(capacity: Int = 128) {
        ends = [Int](repeating: 0, count: capacity)
        arrivals = [Int64](repeating: 0, count: capacity)
    }

    /// Records `frames` of the stream that arrived at `arrivedMs`. When the ring is full the oldest write is
    /// forgotten: a read it covered then measures nothing.
    public mutating func wrote(frames: Int, arrivedMs: Int64) {
        guard frames > 0 else { return }
        writtenFrames += frames
        if count == ends.count {
            head = (head + 1) % ends.count
            count -= 1
        }
        let slot = (head + count) % ends.count
        ends[slot] = writtenFrames
        arrivals[slot] = arrivedMs
        count += 1
    }

    /// `frames` of the stream were read or dropped.
    public mutating func consumed(frames: Int) {
        consumedFrames = min(writtenFrames, consumedFrames + frames)
    }

    /// The read that just ended at `consumedFrames` happened at `nowMs`.
    public mutating func read(nowMs: Int64) {
        if consumedFrames > measuredUpTo, let arrived = arrivalOfLastConsumed() {
            measuredUpTo = consumedFrames
            windowMin = min(windowMin, Int(clamping: nowMs - arrived))
        }
        windowCount += 1
        guard windowCount >= Self.windowReads else { return }
        if windowMin != .max { lastWindowMinMs = windowMin }
        windowMin = .max
        windowCount = 0
    }

    /// Arrival of the write holding the last frame consumed; writes wholly before it are forgotten.
    private mutating func arrivalOfLastConsumed() -> Int64? {
        guard consumedFrames > 0 else { return nil }
        while count > 0 && ends[head] < consumedFrames {
            head = (head + 1) % ends.count
            count -= 1
        }
        return count > 0 ? arrivals[head] : nil
    }
}
