import CohostClient
import Foundation

/// What to load a server with.
public struct LoadTestPlan: Sendable {
    public var rooms = 1
    public var participantsPerRoom = 4
    public var seconds = 30.0
    public var audioOnly = false
    /// Offer `sendrecv`, so the server sends each participant the mix-minus (and the room view in video rooms).
    public var receive = false
    /// Receive slots per participant (recvonly video lines): Cohost forwards the others' cameras on them.
    public var slots = 0
    public var video = (width: 640, height: 360, fps: 30, kbps: 800)
    /// Rooms are `<prefix>-1` … `<prefix>-R`; created by the run and closed at its end.
    public var prefix = "load"
    /// An RTMP URL each room pushes its programme to, `{room}` replaced by the room's name.
    public var output: String?

    public init() {}

    public func roomName(_ index: Int) -> String { "\(prefix)-\(index + 1)" }
}

/// Runs a plan against a server: creates the rooms, joins the participants one after another (each starts sending
/// the moment its answer is read), holds them for `seconds`, reads the server's own view of every room, closes the
/// rooms, and reports.
public struct LoadTestRun: Sendable {
    public let plan: LoadTestPlan
    /// An admin's client: it creates and closes the rooms and mints each participant's token (an invite).
    public let admin: APIClient
    /// Progress lines (joins, the hold), for a person watching.
    public let progress: @Sendable (String) -> Void

    public init(plan: LoadTestPlan, admin: APIClient, progress: @escaping @Sendable (String) -> Void) {
        self.plan = plan
        self.admin = admin
        self.progress = progress
    }

    public func run() async throws -> LoadReport {
        let clip = try SyntheticClip(
            video: plan.audioOnly ? nil : (plan.video.width, plan.video.height, plan.video.fps, plan.video.kbps))
        let rooms = (0..<plan.rooms).map(plan.roomName)
        var created: [String] = []
        let pacer = MediaPacer(clip: clip)
        let receiver = ReturnReceiver()
        var participants: [LoadParticipant] = []
        var serverRooms: [String: Data] = [:]
        var metrics: String?
        var heldSeconds = 0.0
        do {
            for room in rooms {
                try await createRoom(room)
                created.append(room)
            }
            let ssrcBase = UInt32.random(in: 0x1000_0000...0x7000_0000)
            for (r, room) in rooms.enumerated() {
                for n in 0..<plan.participantsPerRoom {
                    let participant = try LoadParticipant(
                        room: room, user: "u\(n + 1)",
                        ssrcBase: ssrcBase &+ UInt32((r * plan.participantsPerRoom + n) * 4),
                        sendsVideo: !plan.audioOnly, receives: plan.receive, slots: plan.audioOnly ? 0 : plan.slots)
                    try await join(participant)
                    participants.append(participant)
                    pacer.add(participant)
                    receiver.add(participant)
                }
                let slowest = participants.filter { $0.room == room }.map(\.joinMs).max() ?? 0
                progress("\(room): \(plan.participantsPerRoom) joined (slowest \(Int(slowest.rounded())) ms)")
            }
            progress("holding \(participants.count) participants for \(Int(plan.seconds)) s")
            let start = Date()
            try await Task.sleep(nanoseconds: UInt64(plan.seconds * 1e9))
            for room in rooms {
                serverRooms[room] = try await admin.send("GET", "/v1/rooms/\(ServerURL.segment(room))")
            }
            metrics = try? String(decoding: await admin.send("GET", "/metrics"), as: UTF8.self)
            heldSeconds = Date().timeIntervalSince(start)
        } catch {
            pacer.stop()
            receiver.stop()
            await close(created)
            throw error
        }
        pacer.stop()
        receiver.stop()
        await close(created)
        return try LoadReport(
            plan: plan, rooms: rooms, participants: participants, serverRooms: serverRooms, metrics: metrics,
            heldSeconds: heldSeconds)
    }

    private func createRoom(_ room: String) async throws {
        var body: [String: Any] = ["name": room]
        if plan.audioOnly { body["audioOnly"] = true }
        // Slots without --receive: no room view to encode, so what forwarding costs is what is measured.
        if plan.slots > 0 && !plan.receive { body["returnVideo"] = "none" }
        if let output = plan.output {
            body["outputs"] = [["url": output.replacingOccurrences(of: "{room}", with: room)]]
        }
        do {
            _ = try await admin.send(
                "POST", "/v1/rooms", json: try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]))
        } catch let error as ClientError {
            if case .refused(409, _, _) = error {
                throw LoadTestError("room \(room) exists already: close it, or give another --prefix")
            }
            throw error
        }
    }

    /// An invite gives the participant's own token (the join's user is the token's subject); the join's time is the
    /// POST of the offer until its answer.
    private func join(_ participant: LoadParticipant) async throws {
        struct Invite: Codable {
            var userId: String
            var token: String?
        }
        let room = ServerURL.segment(participant.room)
        let minted = try await admin.send(
            "POST", "/v1/rooms/\(room)/invites", json: try JSONEncoder().encode(Invite(userId: participant.user)))
        guard let token = try JSONDecoder().decode(Invite.self, from: minted).token else {
            throw LoadTestError("the invite for \(participant.user) holds no token")
        }
        let client = APIClient(server: admin.server, token: token)
        let began = DispatchTime.now().uptimeNanoseconds
        let answer = try await client.send(
            "POST", "/v1/rooms/\(room)/participants", body: Data(participant.offer.utf8),
            contentType: "application/sdp")
        participant.joinMs = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6
        try participant.accept(
            answer: String(decoding: answer, as: UTF8.self), fallbackHost: admin.server.host ?? "127.0.0.1")
    }

    /// Closes the rooms the run created; a room that cannot be closed is reported, not fatal (the report matters).
    private func close(_ rooms: [String]) async {
        for room in rooms {
            do { _ = try await admin.send("DELETE", "/v1/rooms/\(ServerURL.segment(room))") } catch {
                progress("could not close \(room): \(error)")
            }
        }
    }
}
