import Foundation

/// Fans a room's events out to its subscribers (WebSockets, webhooks).
///
/// Each subscriber has a bounded buffer: a reader that falls `bufferLimit` events behind is
/// dropped (its stream finishes) instead of making the room hold events without bound.
public final class EventHub: @unchecked Sendable {
    public let room: String
    private let lock = NSLock()
    private var subscribers: [Int: AsyncStream<String>.Continuation] = [:]
    private var nextID = 0
    private var closed = false
    private let bufferLimit: Int
    /// Server-wide receivers of every event (webhooks); they never block, so publishing calls them inline.
    private var sinks: [any RoomEventSink] = []

    public init(room: String, bufferLimit: Int = 256) {
        self.room = room
        self.bufferLimit = bufferLimit
    }

    /// A stream of JSON texts, finishing when the room closes or the reader falls behind.
    public func subscribe() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: String.self, bufferingPolicy: .bufferingOldest(bufferLimit))
        lock.lock()
        if closed {
            lock.unlock()
            continuation.finish()
            return stream
        }
        let id = nextID
        nextID += 1
        subscribers[id] = continuation
        lock.unlock()
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        return stream
    }

    public var subscriberCount: Int { lock.withLock { subscribers.count } }

    /// Whether any WebSocket is subscribed (webhooks do not take high-rate events).
    public var hasListeners: Bool { lock.withLock { !subscribers.isEmpty } }

    /// Adds a receiver of every event published from now on, in publishing order.
    public func attach(_ sink: any RoomEventSink) { lock.withLock { sinks.append(sink) } }

    public func publish(_ event: RoomEvent, time: Date = Date()) {
        lock.lock()
        let targets = subscribers
        let sinks = event.isHighRate ? [] : self.sinks
        lock.unlock()
        // Nobody listening (a headless room's status reports): not even encoded, which is most of its cost.
        guard !targets.isEmpty || !sinks.isEmpty else { return }
        let text = event.json(room: room, time: time)
        for sink in sinks { sink.receive(eventJSON: text, room: room) }
        for (id, continuation) in targets {
            if case .dropped = continuation.yield(text) {
                continuation.finish()
                remove(id)
            }
        }
    }

    /// Ends every stream (after the final events were published).
    public func finish() {
        lock.lock()
        closed = true
        let targets = subscribers
        subscribers.removeAll()
        lock.unlock()
        for continuation in targets.values { continuation.finish() }
    }

    private func remove(_ id: Int) {
        lock.lock()
        subscribers[id] = nil
        lock.unlock()
    }
}
