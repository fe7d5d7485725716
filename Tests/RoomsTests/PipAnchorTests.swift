import Foundation
import Logging
import Testing
@testable import Rooms
import TestSupport

/// Who a pip layout puts full-canvas: the layout's anchor, else the room's, else the first admin, else the
/// first to join — each only while present.
@Suite(.serialized) struct PipAnchorTests {
    static func offer(ssrc: Int) -> String { TestOffer.plain(audio: UInt32(ssrc), direction: nil) }

    @Test func anAbsentRoomAnchorFallsBackToTheFirstAdminNotTheFirstToJoin() throws {
        let manager = RoomManager(settings: RoomSettings(), logger: Logger(label: "test"))
        defer { manager.shutdown() }
        let body =
            #"{"name":"pip1","anchor":"ghost","canvas":{"width":320,"height":180,"fps":5},"layout":{"mode":"pip"}}"#
        let room = try manager.createRoom(JSONDecoder().decode(RoomConfigRequest.self, from: Data(body.utf8)))
        #expect(room.effectiveAnchor == nil)
        _ = try manager.join(room: "pip1", userId: "guest", tokenIssuedAt: nil, offer: Self.offer(ssrc: 8101))
        #expect(room.effectiveAnchor == "guest")
        _ = try manager.join(
            room: "pip1", userId: "host", tokenIssuedAt: nil, isAdmin: true, offer: Self.offer(ssrc: 8102))
        #expect(room.effectiveAnchor == "host")
        _ = try manager.join(room: "pip1", userId: "ghost", tokenIssuedAt: nil, offer: Self.offer(ssrc: 8103))
        #expect(room.effectiveAnchor == "ghost")
        // The layout's own anchor wins while present (the SDK's big/small switch).
        try room.applyLayout(.init(mode: .pip, anchor: "guest"))
        #expect(room.effectiveAnchor == "guest")
        #expect(manager.removeParticipant(room: "pip1", userId: "guest", reason: .left))
        #expect(room.effectiveAnchor == "ghost")
    }
}
