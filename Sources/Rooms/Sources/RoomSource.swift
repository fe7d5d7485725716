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
            info.audioBufferedMs = stats.audioBufferedMs
            info.underruns = stats.underruns
            info.trimmedMs = stats.trimmedMs
        }
        return info
    }
}

/// A room's pulled sources by user id (any thread).
final class SourceTable: Sendable {
    private let sources = Mutex<[String: RoomSource]>([:])
    private let order = Mutex<[String]>([])

    var all: [RoomSource] {
        let names = order.withLock { $0 }
        return sources.withLock { table in names.compactMap { table[$0] } }
    }

    func source(_ userId: String) -> RoomSource? { sources.withLock { $0[userId] } }

    /// Adds `source` unless a running one has its user id; a finished one of that id is replaced.
    func add(_ source: RoomSource, limit: Int) throws(RoomError) {
        let result: RoomError? = sources.withLock { table in
            if let existing = table[source.userId], !existing.isOver {
                return .conflict("source_exists", "a source '\(source.userId)' is already in the room")
            }
            let running = table.values.filter { !$0.isOver }.count
            if running >= limit {
                return RoomError(.limitExceeded, "too_many_sources", "the room has its \(limit) sources already")
            }
            table[source.userId] = source
            return nil
        }
        if let result { throw result }
        order.withLock { names in
            names.removeAll { $0 == source.userId }
            names.append(source.userId)
        }
    }

    func remove(_ userId: String) -> RoomSource? {
        order.withLock { $0.removeAll { $0 == userId } }
        return sources.withLock { $0.removeValue(forKey: userId) }
    }

    func removeAll() -> [RoomSource] {
        order.withLock { $0.removeAll() }
        return sources.withLock { table in
            defer { table.removeAll() }
            return Array(table.values)
        }
    }

    var runningCount: Int { sources.withLock { $0.values.filter { !$0.isOver }.count } }
}
