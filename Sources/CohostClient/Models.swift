import Foundation

// What the tables show of the API's answers (protocol/openapi.yaml). Only the fields printed are decoded, so an answer
// with fields beyond these still reads; `--json` prints the answer itself.

public struct RoomView: Decodable, Sendable {
    public struct Canvas: Decodable, Sendable {
        public var width: Int
        public var height: Int
        public var fps: Int
        public var background: String
    }
    public struct Video: Decodable, Sendable {
        public var bitrate: Int
        public var keyint: Int
        public var profile: String
    }
    public struct Audio: Decodable, Sendable {
        public var bitrate: Int
        public var channels: Int
    }

    public var name: String
    public var audioOnly: Bool
    public var maxParticipants: Int
    public var canvas: Canvas
    public var video: Video?
    public var audio: Audio
    public var layout: LayoutView
    public var participants: [ParticipantView]
    public var outputs: [OutputView]
    public var anchor: String?
    public var activeSpeaker: String?
}

public struct RoomListView: Decodable, Sendable {
    public var rooms: [RoomView]
}

public struct LayoutView: Decodable, Sendable {
    public struct Region: Decodable, Sendable {
        public var userId: String
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int
        public var z: Int
        public var fit: String
        public var alpha: Double
    }

    public var mode: String
    public var anchor: String?
    public var regions: [Region]

    enum CodingKeys: String, CodingKey { case mode, anchor, regions }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        mode = try c.decode(String.self, forKey: .mode)
        anchor = try c.decodeIfPresent(String.self, forKey: .anchor)
        regions = try c.decodeIfPresent([Region].self, forKey: .regions) ?? []
    }
}

public struct ParticipantView: Decodable, Sendable {
    public struct Stream: Decodable, Sendable {
        public var kind: String
        public var codec: String
        public var fps: Int
        public var kbps: Int
        public var lost: Int
    }

    public var userId: String
    public var joinedAt: String
    public var muted: Bool
    public var gain: Double
    public var admin: Bool
    public var level: Int
    public var streams: [Stream]
}

public struct OutputView: Decodable, Sendable {
    public var id: String
    public var url: String
    public var state: String
    public var attempt: Int
    public var error: String?
    public var kbps: Int
    public var sentBytes: Int
    public var reconnects: Int
}

public struct InviteView: Decodable, Sendable {
    public var userId: String
    public var token: String
    public var link: String
    public var expiresAt: String
}

extension Decodable {
    /// Decodes an API answer; a body that does not fit says so as a refusal of the server's (exit 1), not a crash.
    public static func decoded(from data: Data) throws -> Self {
        do { return try JSONDecoder().decode(Self.self, from: data) } catch {
            throw ClientError.refused(
                status: 200, code: "unexpected_answer",
                message: "the server's answer does not read as \(Self.self): \(error)")
        }
    }
}
