import Foundation
import Testing
import Rooms
@testable import Server

/// Which event ends a kicked participant's own events socket.
@Suite struct EventsSocketTests {
    static let time = Date(timeIntervalSince1970: 1_714_564_800)

    @Test func onlyTheKickedUsersOwnKickedDepartureEndsTheSubscription() {
        func ends(_ event: RoomEvent, _ user: String) -> Bool {
            EventsSocket.endsSubscription(event.json(room: "r", time: Self.time), for: user)
        }
        #expect(ends(.participantLeft(userId: "bob", reason: .kicked), "bob"))
        // the reason comes first, then the departure
        #expect(!ends(.participantKicked(userId: "bob", by: "mod"), "bob"))
        #expect(!ends(.participantLeft(userId: "bob", reason: .kicked), "alice"))
        #expect(!ends(.participantLeft(userId: "bob", reason: .left), "bob"))
        #expect(!ends(.participantLeft(userId: "bob", reason: .replaced), "bob"))
        #expect(!ends(.roomClosed, "bob"))
        #expect(!EventsSocket.endsSubscription(#"{"type":"participant_left","userId":"#, for: "bob"))
    }
}
