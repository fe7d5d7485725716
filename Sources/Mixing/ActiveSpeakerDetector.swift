/// Picks the room's active speaker from the participants' `VoiceMeter` levels, with hysteresis.
///
/// Rules (the `active_speaker` event is emitted only when `update`/`evaluate` return a user id):
/// - The *leader* at an evaluation is the one participant strictly louder than everyone else and at or
///   above `thresholdDBov` (−50 dBov). Nobody leads when the loudest is below it or two tie for loudest.
/// - A leader other than the current speaker becomes the current speaker once it has led in every
///   evaluation for `holdMs` (300 ms), counted from the first evaluation in which it led. Any evaluation
///   in which it does not lead (someone else leads, the current speaker leads, nobody leads) restarts
///   the count. This also applies when there is no current speaker yet: the first speaker needs 300 ms too,
///   so a cough does not become the active speaker.
/// - Silence never clears the current speaker: when nobody is above −50 dBov, the last speaker stays
///   (as conferencing UIs keep the last speaker highlighted). So there is no "no speaker" event.
/// - When the current speaker leaves (`remove`), there is no current speaker until the next leader has
///   led for 300 ms; the room announces the departure with `participant_left`, not `active_speaker`.
///
/// Feed it each participant's dBov every 100 ms window (the `VoiceMeter` publishes a value when `add`
/// returns true) or every block with the meter's latest value: the hold is measured in milliseconds of the
/// injected clock, so both work, with a resolution of the feeding interval. Levels are kept per user until
/// the user is removed, so participants whose windows complete on different ticks still compare against
/// each other's latest value. One per room, used from the room's queue; times are the room clock in ms.
public struct ActiveSpeakerDetector: Sendable {
    /// How long a challenger must lead continuously to take over.
    public let holdMs: Int64
    /// Levels below this never lead.
    public let thresholdDBov: Double

    /// The current active speaker, nil before anyone has spoken for `holdMs` and after the speaker left.
    public private(set) var current: String?
    /// Each participant's latest level (dBov).
    private var levels: [String: Double] = [:]
    /// The participant leading without being current, and since when (ms).
    private var challenger: (userId: String, sinceMs: Int64)?

    public init(holdMs: Int64 = 300, thresholdDBov: Double = -50) {
        self.holdMs = holdMs
        self.thresholdDBov = thresholdDBov
    }

    /// Records a participant's latest level without evaluating (call `evaluate` after a batch).
    /// A NaN level counts as silence.
    public mutating func report(userId: String, dBov: Double) {
        levels[userId] = dBov.isNaN ? -.infinity : dBov
    }

    /// Records several participants' levels, then evaluates once at `nowMs`.
    /// Returns the new active speaker when it changed, nil otherwise.
    public mutating func update(levels newLevels: [(userId: String, dBov: Double)], nowMs: Int64) -> String? {
        for entry in newLevels { report(userId: entry.userId, dBov: entry.dBov) }
        return evaluate(nowMs: nowMs)
    }

    /// Records one participant's level, then evaluates at `nowMs`.
    /// Returns the new active speaker when it changed, nil otherwise.
    public mutating func update(userId: String, dBov: Double, nowMs: Int64) -> String? {
        report(userId: userId, dBov: dBov)
        return evaluate(nowMs: nowMs)
    }

    /// Applies the rules to the latest levels at `nowMs`; returns the new active speaker when it changed.
    public mutating func evaluate(nowMs: Int64) -> String? {
        guard let leader = leader(), leader != current else {
            challenger = nil
            return nil
        }
        // A clock that went backwards restarts the count rather than granting or withholding time.
        guard let running = challenger, running.userId == leader, nowMs >= running.sinceMs else {
            challenger = (leader, nowMs)
            return holdMs <= 0 ? takeOver(leader) : nil
        }
        return nowMs - running.sinceMs >= holdMs ? takeOver(leader) : nil
    }

    /// Forgets a participant who left. If it was the current speaker, there is none until someone else
    /// has led for `holdMs`; if it was the challenger, the count stops.
    public mutating func remove(userId: String) {
        levels[userId] = nil
        if current == userId { current = nil }
        if challenger?.userId == userId { challenger = nil }
    }

    private mutating func takeOver(_ userId: String) -> String {
        current = userId
        challenger = nil
        return userId
    }

    /// The one participant strictly loudest and at or above the threshold.
    private func leader() -> String? {
        var best: String?
        var bestLevel = -Double.infinity
        var tied = false
        for (userId, level) in levels where level >= thresholdDBov {
            if level > bestLevel {
                best = userId
                bestLevel = level
                tied = false
            } else if level == bestLevel {
                tied = true
            }
        }
        return tied ? nil : best
    }
}
