import Foundation
import Hummingbird
import Publishing
import Rooms

/// `GET /v1/rooms/{room}/hls/{file}`: the room's HLS output, as `HLSStream` holds it. The playlist honours blocking
/// reloads (`_HLS_msn`, `_HLS_part`); a part named by the preload hint is answered once it exists. Any token of the
/// room plays (a viewer token only plays), in `Authorization` or as `?token=`, which the playlist then appends to
/// every URI in it; a public output needs none. docs/hls.md has the details.
struct HLSRoute: TokenCheckedRoute, Sendable {
    let manager: RoomManager
    let keys: APIKeys

    func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("v1/rooms/:room/hls/:file", use: serve)
    }

    func serve(_ request: Request, context: some RequestContext) async throws -> Response {
        let name = try roomName(context)
        let file = try context.parameters.require("file")
        let stream = manager.room(name)?.hlsStream
        var query: String?
        if stream?.options.isPublic != true {
            try caller(request, allowQuery: true).requireViewer(of: name)
            if request.headers[.authorization] == nil, let token = request.uri.queryParameters.get("token") {
                query = "token=" + (token.addingPercentEncoding(withAllowedCharacters: Self.tokenCharacters) ?? "")
            }
        }
        guard let stream else { throw APIError(RoomError.notFound("room '\(name)' has no HLS output")) }
        guard file == "index.m3u8" else {
            switch await stream.file(named: file) {
            case .media(let bytes, let contentType):
                return Response(
                    status: .ok, headers: [.contentType: contentType, .cacheControl: "private, max-age=60"],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
            case .notFound:
                throw APIError(RoomError.notFound("no '\(file.prefix(64))' in the HLS output of '\(name)'"))
            }
        }
        let parameters = request.uri.queryParameters
        let msn = try Self.number(parameters.get("_HLS_msn"), "_HLS_msn")
        let part = try Self.number(parameters.get("_HLS_part"), "_HLS_part")
        if part != nil && msn == nil {
            throw APIError.badRequest("invalid_parameter", "_HLS_part needs _HLS_msn")
        }
        // Before the first part, a plain request waits for it like a blocking one.
        let target = msn.map { ($0, part) } ?? (stream.playlist(query: query) == nil ? (0, 0) : nil)
        if let (msn, part) = target {
            switch await stream.waitForPlaylist(msn: msn, part: part) {
            case .ready: break
            case .tooFarAhead:
                throw APIError.badRequest("invalid_parameter", "_HLS_msn \(msn) is more than two segments ahead")
            case .timedOut:
                throw APIError(
                    status: .serviceUnavailable, code: "hls_not_ready",
                    message: "the HLS output has nothing newer yet")
            }
        }
        guard let text = stream.playlist(query: query) else {
            throw APIError(
                status: .serviceUnavailable, code: "hls_not_ready", message: "the HLS output has nothing to play yet")
        }
        return Response(
            status: .ok, headers: [.contentType: "application/vnd.apple.mpegurl", .cacheControl: "no-cache"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// A JWT is base64url and dots; anything else is escaped.
    static let tokenCharacters = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")

    static func number(_ text: String?, _ what: String) throws -> Int? {
        guard let text else { return nil }
        guard text.count <= 9, let value = Int(text), value >= 0 else {
            throw APIError.badRequest("invalid_parameter", "\(what) must be a non-negative integer")
        }
        return value
    }
}
