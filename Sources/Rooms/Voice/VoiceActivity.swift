import Mixing

/// A room's voice meters and active speaker, fed with exactly what the mixer hears.
///
/// The audio tick adds each participant's block (after gain and mute) to their `VoiceMeter`; every
/// `reportEveryBlocks` blocks (200 ms of the programme) `endBlock` hands back the levels in join order and whether the active
/// speaker changed, which the room turns into `voice_levels` / `active_speaker` events and the FLV
/// `onVoiceLevels` message. Confined to the room's queue. Meters live in a dictionary mutated in place
/// and the report reuses one array, so the per-block work allocates nothing.
struct VoiceActivity {
    static let reportEveryBlocks = 10
    /// A placeholder lights its speaking indicator at or above this (the active speaker's threshold too).
    static let speakingDBov = -50.0

    private var meters: [String: VoiceMeter] = [:]
    private var detector = ActiveSpeakerDetector(holdMs: 300, thresholdDBov: speakingDBov)
    private var blocks = 0
    private(set) var levels: [(userId: String, level: Int)] = []

    var activeSpeaker: String? { detector.current }

    /// Adds one participant's 20 ms block as mixed (`gain` 0 = muted or no audio this tick).
    mutating func add(userId: String, block: [Float], gain: Float, nowMs: Int64) {
        let completed = meters[userId, default: VoiceMeter()].add(block: block, gain: gain)
        if completed, let dBov = meters[userId]?.dBov { detector.report(userId: userId, dBov: dBov) }
    }

    /// A participant without audio this tick still has a level: it decays to silence window by window.
    mutating func addSilence(userId: String, nowMs: Int64) {
        add(userId: userId, block: [], gain: 0, nowMs: nowMs)
    }

    /// Whether the user's last 100 ms window was at or above the speaking threshold.
    func isSpeaking(_ userId: String) -> Bool { (meters[userId]?.dBov ?? -.infinity) >= Self.speakingDBov }

    func level(of userId: String) -> Int? { meters[userId]?.level }

    mutating func remove(userId: String) {
        meters[userId] = nil
        detector.remove(userId: userId)
    }

    /// Call once per mixed block after every `add`; says whether a report is due (every `reportEveryBlocks` blocks),
    /// and the new active speaker if it changed. `levels` then holds the levels of `present` in order.
    mutating func endBlock(present: [Participant], nowMs: Int64) -> (report: Bool, speakerChanged: String?) {
        let changed = detector.evaluate(nowMs: nowMs)
        blocks += 1
        guard blocks >= Self.reportEveryBlocks else { return (false, changed) }
        blocks = 0
        levels.removeAll(keepingCapacity: true)
        for p in present { levels.append((p.userId, meters[p.userId]?.level ?? 0)) }
        return (true, changed)
    }
}
