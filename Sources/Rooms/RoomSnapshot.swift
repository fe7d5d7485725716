import Codecs

extension RoomManager {
    /// The room's current canvas as a PNG (`GET /v1/rooms/{room}/snapshot`).
    ///
    /// 404 `not_found` for an unknown room, 409 `audio_only` for a room without video, 500
    /// `snapshot_failed` when the encoder refuses. The canvas is copied on the room's queue between
    /// two ticks (so it is never half-composed); the PNG is made on the caller's thread.
    public func snapshotPNG(room roomName: String) throws(RoomError) -> [UInt8] {
        guard let room = room(roomName) else { throw .notFound("no room '\(roomName)'") }
        guard room.config.hasPicture, let canvas = room.canvasSnapshot else {
            throw .conflict("audio_only", "room '\(roomName)' is audio-only: it has no canvas")
        }
        do { return try PNGEncoder.encode(canvas) } catch {
            throw RoomError(.internal, "snapshot_failed", "could not encode the snapshot: \(error)")
        }
    }
}
