import Media

/// How long before the mixer needed it a voice's audio reached its FIFO (the *slack*), and how much margin
/// to add or cut so that the latest packet of the last seconds is at least `targetMs` early.
///
/// A FIFO that only prebuffers a fixed fill keeps whatever margin its first packets gave it: a burst at the
/// start spends it for good (a late packet is then a gap), a slow start leaves the voice — and with lip-sync
/// every picture of its sender — late for as long as the stream lasts. Measured at every read, the slack is
/// what actually protects against jitter, so the margin follows it.
///
/// Changes are whole blocks (`stepMs`, the mixer's read): the mixer reads a block per tick, so a packet is
/// needed at the first tick whose block reaches it, and moving the voice by less than a block moves no packet
/// to another tick (its slack stays `tick − arrival`); a block moves each one by exactly one tick. A window of
/// reads (1 s) whose smallest slack is under the target adds blocks (silence put in at a pause); when the
/// smallest slack of the last `historyWindows` windows is two blocks or more over it, blocks are cut (a quiet
/// stretch dropped). Either lands the slack in [target + ½ block, target + 1½ blocks), [20, 40) ms, half a block
/// from both edges: the room's canvas clock (`CanvasPhase`), which the voice's 20 ms reads follow, wanders by
/// ≈10 ms, and a narrower band was measured to change the voice every 5–15 s. Each change moves the voice by a
/// block and, through lip-sync, its pictures with it, so changes should be rare.
/// Every underrun that is not the end of a DTX talk spurt raises the target by `underrunStepMs` (up to
/// `maxExtraMs`), and each window without one lowers it by 1 ms again: a network with spikes rarer than the
/// history keeps a margin for them.
///
/// Positions are counted in frames of the sender's stream as written (silence put in by the FIFO is not
/// part of it). Arrivals are kept in a fixed ring, so recording them allocates nothing (hot path: per packet
/// and per 20 ms read).
struct VoiceMargin {
    static let targetMs = 10
    static let stepMs = AudioFormat.blockFrames * 1000 / AudioFormat.sampleRate
    static let windowReads = 50
    static let historyWindows = 5
    static let underrunStepMs = 10
    static let maxExtraMs = 60

    /// End (exclusive, in stream frames) and arrival time of each recent write, oldest first.
    private var ends: [Int]
    private var arrivals: [Int64]
    private var head = 0
    private var count = 0
    private(set) var writtenFrames = 0
    private(set) var consumedFrames = 0
    /// `consumedFrames` at the last measured read: a read of silence the FIFO put in measures nothing.
    private var measuredUpTo = 0

    private var windowMin = Int.max
    private var windowCount = 0
    /// The smallest slack of each of the last windows (ms), newest last.
    private var history: [Int]
    private var historyCount = 0
    private var underranInWindow = false
    /// Margin added to the target after underruns (ms).
    private(set) var extraMs = 0
    /// The smallest slack of the last complete window (ms), for reports and tests.
    private(set) var lastWindowMinMs: Int?

    init(capacity: Int = 128) {
        ends = [Int](repeating: 0, count: capacity)
        arrivals = [Int64](repeating: 0, count: capacity)
        history = [Int](repeating: 0, count: Self.historyWindows)
    }

    var targetMs: Int { Self.targetMs + extraMs }

    /// Records `frames` of the stream that arrived at `arrivedMs`. When the ring is full the oldest write is
    /// forgotten: a read it covered then measures nothing.
    mutating func wrote(frames: Int, arrivedMs: Int64) {
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
    mutating func consumed(frames: Int) {
        consumedFrames = min(writtenFrames, consumedFrames + frames)
    }

    /// The read that just ended at `consumedFrames` happened at `nowMs`; `heldMs` of the voice's delay is
    /// lip-sync's, not margin. Returns the margin change to make (ms; positive: add) when this read closed a
    /// window and the margin is off target, 0 when it closed one on target, nil otherwise.
    mutating func read(nowMs: Int64, heldMs: Int) -> Int? {
        if consumedFrames > measuredUpTo, let arrived = arrivalOfLastConsumed() {
            measuredUpTo = consumedFrames
            let slack = Int(clamping: nowMs - arrived) - heldMs
            windowMin = min(windowMin, slack)
        }
        windowCount += 1
        guard windowCount >= Self.windowReads else { return nil }
        return closeWindow()
    }

    /// A read found the FIFO short of a block while the sender was talking: packets came later than the margin.
    mutating func underran() {
        underranInWindow = true
        extraMs = min(Self.maxExtraMs, extraMs + Self.underrunStepMs)
    }

    /// The margin was changed by `ms` (positive: added): slacks measured so far move with it.
    mutating func shift(ms: Int) {
        if windowMin != .max { windowMin += ms }
        for i in 0..<historyCount { history[i] += ms }
    }

    private mutating func closeWindow() -> Int {
        let windowMin = self.windowMin
        self.windowMin = .max
        windowCount = 0
        if !underranInWindow { extraMs = max(0, extraMs - 1) }
        underranInWindow = false
        guard windowMin != .max else { return 0 }  // nothing measured: silence put in, or no arrivals known
        lastWindowMinMs = windowMin
        if historyCount == history.count {
            for i in 1..<history.count { history[i - 1] = history[i] }
            historyCount -= 1
        }
        history[historyCount] = windowMin
        historyCount += 1
        let target = targetMs, step = Self.stepMs, aim = targetMs + Self.stepMs / 2
        if windowMin < target { return (aim - windowMin + step - 1) / step * step }
        var worst = Int.max
        for i in 0..<historyCount { worst = min(worst, history[i]) }
        if worst >= target + 2 * step { return -((worst - aim) / step * step) }
        return 0
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
