import Foundation
import Hummingbird
import Rooms

/// WHEP (draft-ietf-wish-whep, the sibling of WHIP): a player POSTs a recvonly offer and gets the room's programme,
/// its mix as Opus and its pictures as the programme's own H.264; a DELETE of the `Location` the answer gives ends it.
/// Any token of the room may watch (a viewer token included), in `Authorization: Bearer`. A viewer never joins the
/// room (`RoomManager.watch`).
struct WHEPRoutes: TokenCheckedRoute, Sendable {
    let manager: RoomManager
    let keys: APIKeys

    func register<Context: RequestContext>(on router: Router<Context>) {
        router.post("whep/:room", use: watch)
        router.delete("whep/:room/:viewer", use: stop)
    }

    func watch(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        let caller = try self.caller(request)
        try caller.requireViewer(of: name)
        guard let type = request.headers[.contentType], type.lowercased().hasPrefix("application/sdp") else {
            throw APIError(
                status: .unsupportedMediaType, code: "unsupported_media",
                message: "a WHEP offer must be Content-Type: application/sdp")
        }
        let buffer = try await collect(request, limit: RoomRoutes.maxSDPBody)
        let offer = String(decoding: buffer.readableBytesView, as: UTF8.self)
        let (answer, viewer) = try await offload { [manager] in try manager.watch(room: name, offer: offer) }
        var headers: HTTPFields = [.contentType: "application/sdp", .location: "/whep/\(name)/\(viewer)"]
        addICEServerLinks(to: &headers, caller: caller)
        return Response(status: .created, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: answer)))
    }

    func stop(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        try caller(request).requireViewer(of: name)
        let viewer = try context.parameters.require("viewer")
        guard manager.stopWatching(room: name, viewer: viewer) else {
            throw APIError(RoomError.notFound("no WHEP session '\(viewer.prefix(64))' in room '\(name)'"))
        }
        return Response(status: .ok)
    }
}
