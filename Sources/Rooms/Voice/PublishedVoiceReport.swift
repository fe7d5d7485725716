import Foundation

/// The room's last `voice_levels` report, written by the audio tick every 200 ms and read by `GET` room from
/// any thread.
final class PublishedVoiceReport: @unchecked Sendable {
    private let lock = NSLock()
    private var levels: [(userId: String, level: Int)] = []
    private var activeSpeaker: String?

    /// Copied into this object's own storage, in place: keeping the tick's `levels` array would make its next
    /// in-place refill copy (an allocation every report).
    func store(_ newLevels: [(userId: String, level: Int)], activeSpeaker speaker: String?) {
        lock.withLock {
            levels.removeAll(keepingCapacity: true)
            levels.append(contentsOf: newLevels)
            activeSpeaker = speaker
        }
    }

    /// Each participant's level by user id, and the active speaker.
    var report: (levels: [String: Int], activeSpeaker: String?) {
        lock.withLock {
            (Dictionary(levels.map { ($0.userId, $0.level) }, uniquingKeysWith: { a, _ in a }), activeSpeaker)
        }
    }
}
