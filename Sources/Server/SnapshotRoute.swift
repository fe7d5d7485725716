import Foundation
import Hummingbird
import Rooms

/// `GET /v1/rooms/{room}/snapshot` (admin): the room's current canvas as a PNG.
///
/// 409 `audio_only` for a room without video, 404 for an unknown room, the usual token refusals.
struct SnapshotRoute: TokenCheckedRoute, Sendable {
    let manager: RoomManager
    let keys: APIKeys

    func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("v1/rooms/:room/snapshot", use: snapshot)
    }

    func snapshot(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try context.parameters.require("room")
        guard Identifier.isValid(name) else {
            throw APIError.badRequest("invalid_room", "room name must match [A-Za-z0-9_.-]{1,64}")
        }
        try caller(request).requireAdmin(of: name)
        let png = try await offload { [manager] in try manager.snapshotPNG(room: name) }
        // A snapshot is of one instant: never serve it from a cache.
        return Response(
            status: .ok, headers: [.contentType: "image/png", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: png)))
    }
}
