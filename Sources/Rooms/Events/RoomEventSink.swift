/// Receives the events of every room, as the exact JSON text the events WebSocket sends (webhooks).
///
/// Called synchronously by whoever publishes the event (a room's media queue, an HTTP handler, the
/// timeout timer): an implementation must only hand the text off (queue it) and return, never block.
public protocol RoomEventSink: Sendable {
    func receive(eventJSON: String, room: String)
}
