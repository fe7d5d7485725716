import Foundation
import Synchronization
import CohostAPI
import MediaSources

/// One pulled source of a room: its checked plan, its reader, and the state the reader last reported.
final class RoomSource: Sendable {
    let plan: SourcePlan
    let reader: SourceReader
    private let status = Mutex<Status>(Status())

    private struct Status {
        var state = SourceState.connecting
        var attempt = 0
        var error: String?
        var streams: (audio: Bool, video: Bool)?
    }

    /// Closes the door of a pushed source (its key is refused from then on).
    private let revoke: (@Sendable () -> Void)?

    init(plan: SourcePlan, reader: SourceReader, revoke: (@Sendable () -> Void)? = nil) {
        self.plan = plan
        self.reader = reader
        self.revoke = revoke
    }

    /// Stops reading; a pushed source's key stops working and its encoder is disconnected.
    func stop() {
        revoke?()
        reader.stop()
    }

    var userId: String { plan.userId }
    var state: SourceState { status.withLock { $0.state } }
    /// Ended or failed: the reader has stopped and the name may be taken again.
    var isOver: Bool { state == .ended || state == .failed }

    func note(_ state: SourceState, attempt: Int, error: String?) {
        status.withLock {
            $0.state = state
            $0.attempt = attempt
            $0.error = error
        }
    }

    func noteStreams(audio: Bool, video: Bool) { status.withLock { $0.streams = (audio, video) } }

    /// The feed its participant plays from, once the input opened.
    private let feed = Mutex<SourceFeed?>(nil)
    func attach(_ made: SourceFeed) { feed.withLock { $0 = made } }

    var info: SourceInfo {
        var info = status.withLock { s in
            SourceInfo(
                userId: plan.userId, url: plan.publishURL ?? plan.shownURL, state: s.state.rawValue, attempt: s.attempt,
                error: s.error,
                loop: plan.loop, gain: Double(plan.gain), transport: plan.transport, latencyMs: plan.input.latencyMs,
                audio: s.streams?.audio, video: s.streams?.video, listen: plan.listen)
        }
        if let stats = feed.withLock({ $0 })?.statistics {
            info.audioFrames = stats.audioFrames
            info.picturesDecoded = stats.picturesDecoded
            info.picturesShown = stats.picturesShown
            info.picturesDropped = stats.picturesDropped
            info.picturesSkipped = stats.picturesSkipped
            info.framesForwarded = stats.framesForwarded
            info.framesEncoded = stats.framesEncoded
            info.framesForwardDropped = stats.framesForwardDropped
            info.audioBufferedMs = stats.audioBufferedMs
            info.underruns = stats.underruns
            info.trimmedMs = stats.trimmedMs
        }
        return info
    }
}

/// A room's sources by user id, in the order they were added (any thread). Ended and failed ones stay listed until
/// deleted, but only `maxFinished` of them: past that the oldest finished one is forgotten, so adding and letting
/// sources end cannot grow a room without bound.
final class SourceTable: Sendable {
    private struct Table {
        var byUser: [String: RoomSource] = [:]
        var order: [String] = []
    }
    private let table = Mutex(Table())
    static let maxFinished = 32

    var all: [RoomSource] { table.withLock { t in t.order.compactMap { t.byUser[$0] } } }

    func source(_ userId: String) -> RoomSource? { table.withLock { $0.byUser[userId] } }

    /// Adds `source` unless a running one has its user id; a finished one of that id is replaced.
    func add(_ source: RoomSource, limit: Int) throws(RoomError) {
        let refusal: RoomError? = table.withLock { t in
            if let existing = t.byUser[source.userId], !existing.isOver {
                return .conflict("source_exists", "a source '\(source.userId)' is already in the room")
            }
            if t.byUser.values.filter({ !$0.isOver }).count >= limit {
                return RoomError(.limitExceeded, "too_many_sources", "the room has its \(limit) sources already")
            }
            t.order.removeAll { $0 == source.userId }
            let finished = t.order.filter { t.byUser[$0]?.isOver == true }
            for userId in finished.dropLast(Self.maxFinished - 1) {
                t.order.removeAll { $0 == userId }
                t.byUser[userId] = nil
            }
            t.byUser[source.userId] = source
            t.order.append(source.userId)
            return nil
        }
        if let refusal { throw refusal }
    }

    func remove(_ userId: String) -> RoomSource? {
        table.withLock { t in
            t.order.removeAll { $0 == userId }
            return t.byUser.removeValue(forKey: userId)
        }
    }

    func removeAll() -> [RoomSource] {
        table.withLock { t in
            defer { t = Table() }
            return Array(t.byUser.values)
        }
    }

    var runningCount: Int { table.withLock { $0.byUser.values.filter { !$0.isOver }.count } }
}
