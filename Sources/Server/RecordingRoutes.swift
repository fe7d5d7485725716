import CohostAPI
import Foundation
import Hummingbird
import Rooms

/// The body of `POST /v1/rooms/{room}/recordings`.
struct RecordingRequest: Decodable {
    var userId: String
    /// "camera" (the default: microphone and camera) or "screen".
    var source: String?
}

/// `{"recordings": [...]}`.
struct RecordingList: Encodable {
    var recordings: [RecordingInfo]
}

/// Recordings of a participant's own tracks, as received (admin): start, list, stop.
extension RoomRoutes {
    func startRecording(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        try caller(request).requireAdmin(of: name)
        let body: RecordingRequest = try await decodeJSON(request, context: context)
        guard Identifier.isValid(body.userId) else {
            throw APIError.badRequest("invalid_user", "userId must match [A-Za-z0-9_.-]{1,64}")
        }
        let room = try existingRoom(name)
        let info = try await offload { try room.startRecording(userId: body.userId, source: body.source ?? "camera") }
        return try json(info, status: .created, headers: [.location: "/v1/rooms/\(name)/recordings/\(info.id)"])
    }

    func listRecordings(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        try caller(request).requireAdmin(of: name)
        return try json(RecordingList(recordings: try existingRoom(name).recordingInfos))
    }

    /// Stops the recording and answers once its file is closed.
    func stopRecording(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        try caller(request).requireAdmin(of: name)
        let id = try context.parameters.require("recording")
        let room = try existingRoom(name)
        guard try await offload({ room.stopRecording(id: id) }) else {
            throw APIError(RoomError.notFound("no recording '\(id.prefix(64))' in room '\(name)'"))
        }
        return Response(status: .noContent)
    }
}
