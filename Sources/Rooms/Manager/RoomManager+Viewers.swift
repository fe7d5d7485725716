import Clocks

extension RoomManager {
    /// A viewer of `roomName`'s programme (WHEP): a hidden receiver of the programme's mix and of its pictures as
    /// encoded, never a member (not in the layout, the mix, the participant list or the events), counted and capped
    /// per room (`maxViewersPerRoom`). The room must exist: a viewer never creates one. Returns the answer and the
    /// viewer's id, which ends it (`stopWatching`).
    public func watch(room roomName: String, offer: String) throws(RoomError) -> (answer: String, viewer: String) {
        guard let room = room(roomName) else { throw .notFound("no room '\(roomName)'") }
        guard room.viewerCount < settings.maxViewersPerRoom else {
            throw RoomError(
                .limitExceeded, "too_many_viewers",
                "room '\(roomName)' has \(settings.maxViewersPerRoom) viewers, its most")
        }
        let session = sessions.next()
        let viewer = "whep-\(session)"
        // An audio-only room has no pictures to offer: its video lines are rejected.
        let (negotiation, transport) = try negotiate(
            offer, session: session, room: room, programme: room.programmeProfileLevelId ?? "")
        guard let transport else {
            throw .badRequest("invalid_sdp", "a WHEP offer is WebRTC (ICE and DTLS); this one is plain RTP")
        }
        guard negotiation.returnAudio != nil || negotiation.returnVideo != nil else {
            throw RoomError(
                .unsupported, "unsupported_media",
                "nothing to play: the offer has no Opus audio line and no H.264 line of the programme's profile")
        }
        let (participant, entries) = try makeParticipant(
            userId: viewer, session: session, isAdmin: false, monitor: true, negotiation: negotiation,
            transport: transport, room: room, viewer: true)
        if let taken = media.register(entries, room: roomName, participant: participant) {
            throw .conflict("ssrc_conflict", "SSRC \(taken) is already in use on this server")
        }
        // The transport first: once in the room the viewer can be removed, and removing detaches it.
        media.webRTC.add(transport, participant: participant, room: roomName)
        do { _ = try room.add(participant) } catch {
            media.detach(participant)
            throw error
        }
        logger.info("viewer joined", metadata: ["room": "\(roomName)", "viewer": "\(viewer)"])
        return (negotiation.answer, viewer)
    }

    /// Ends viewer `viewer` of `roomName`; false when there is no such viewer.
    public func stopWatching(room roomName: String, viewer: String) -> Bool {
        guard viewer.hasPrefix("whep-"), let session = Int(viewer.dropFirst(5)),
            let room = room(roomName), room.monitor(viewer)?.isViewer == true
        else { return false }
        return removeParticipant(room: roomName, userId: viewer, reason: .left, session: session)
    }
}
