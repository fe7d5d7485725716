import Foundation
import CohostAPI
import Clocks
import MediaSources

/// Pulled sources: each is read by a `SourceReader` of its own and joins its room as a participant once its input
/// has opened (its streams say whether it has pictures), leaving when it ends or is removed.
extension RoomManager {
    /// Starts pulling a source into `roomName`; returns it as the API shows it (state `connecting`).
    public func addSource(room roomName: String, _ request: SourceRequest) throws(RoomError) -> SourceInfo {
        guard let room = room(roomName) else { throw .notFound("room '\(roomName)' does not exist") }
        let srtListener = srt.withLock { $0 }
        let rtmpListener = rtmp.withLock { $0 }
        let plan: SourcePlan
        var revokeKey: (@Sendable (String) -> Void)?
        if request.listen == "srt", let srtListener {
            plan = try request.planPush(
                rules: settings.sourceRules, room: room.config, host: settings.publicIP, port: srtListener.port)
            revokeKey = { [weak srtListener] id in srtListener?.revoke(id) }
        } else if request.listen == "rtmp", let rtmpListener {
            plan = try request.planPush(
                rules: settings.sourceRules, room: room.config, host: settings.publicIP, port: rtmpListener.port)
        } else {
            plan = try request.plan(rules: settings.sourceRules, room: room.config)
        }
        if let present = room.participant(plan.userId), present.feed == nil {
            throw .conflict("user_exists", "a participant '\(plan.userId)' is in the room: a source needs its own id")
        }
        let running = allRooms.reduce(0) { $0 + $1.sources.runningCount }
        guard running < settings.sourceRules.maxTotal else {
            throw RoomError(
                .limitExceeded, "too_many_sources",
                "this server runs its \(settings.sourceRules.maxTotal) sources already")
        }
        let userId = plan.userId
        let shownURL = plan.shownURL
        let holder = SourceHolder()
        let logger = self.logger
        let roomName = room.name
        let destinations = CheckedSourceDestinations(policy: settings.sourceRules.destinations) { refusal in
            logger.warning(
                "source refused", metadata: ["room": "\(roomName)", "user": "\(userId)", "reason": "\(refusal)"])
        }
        let reader = SourceReader(
            plan.input, destinations: destinations,
            onState: { [weak self, weak room] state, attempt, error in
                guard let self, let room, let source = holder.source else { return }
                source.note(state, attempt: attempt, error: error)
                room.events.publish(
                    .sourceState(userId: userId, url: shownURL, state: state.rawValue, attempt: attempt, error: error))
                self.logger.info(
                    "source state",
                    metadata: [
                        "room": "\(room.name)", "user": "\(userId)", "url": "\(shownURL)", "state": "\(state.rawValue)",
                        "attempt": "\(attempt)", "error": "\(error ?? "")",
                    ])
                if state == .ended || state == .failed, let p = room.participant(userId), p.feed != nil {
                    self.removeParticipant(room: room.name, userId: userId, reason: .ended, session: p.sessionID)
                }
            },
            onOpen: { [weak self, weak room] hasAudio, hasVideo, forward in
                guard let self, let room, !room.isClosed, let source = holder.source else { return nil }
                source.noteStreams(audio: hasAudio, video: hasVideo)
                return self.joinSource(source, hasAudio: hasAudio, hasVideo: hasVideo, forward: forward, room: room)
            })
        let streamID = plan.streamID
        var revoke: (@Sendable () -> Void)?
        if let streamID, let revokeKey { revoke = { revokeKey(streamID) } }
        let source = RoomSource(plan: plan, reader: reader, revoke: revoke)
        holder.source = source
        try room.sources.add(source, limit: settings.sourceRules.maxPerRoom)
        // The SRT port checks keys in its handshake, from a table of its own; the RTMP port asks `pushedSource`.
        if let streamID, plan.listen == "srt", srtListener?.allow(streamID) != true {
            _ = room.sources.remove(userId)
            throw RoomError(.limitExceeded, "too_many_sources", "the SRT port takes no more pushed sources")
        }
        reader.start()
        logger.info("source added", metadata: ["room": "\(roomName)", "user": "\(userId)", "url": "\(shownURL)"])
        return source.info
    }

    /// Stops and forgets a source; its participant leaves. False when there is no such source.
    public func removeSource(room roomName: String, userId: String) -> Bool {
        guard let room = room(roomName), let source = room.sources.remove(userId) else { return false }
        source.stop()
        if let p = room.participant(userId), p.feed != nil {
            removeParticipant(room: roomName, userId: userId, reason: .left, session: p.sessionID)
        }
        return true
    }

    public func sources(room roomName: String) throws(RoomError) -> [SourceInfo] {
        guard let room = room(roomName) else { throw .notFound("room '\(roomName)' does not exist") }
        return room.sources.all.map(\.info)
    }

    /// Takes encoders' SRT pushes from now on (the server's one SRT port).
    public func attach(srt listener: SRTListener) {
        srt.withLock { $0 = listener }
        listener.start { [weak self] connection in self?.acceptPush(connection) }
    }

    /// Takes encoders' RTMP publishes from now on (the server's one RTMP port).
    public func attach(rtmp listener: RTMPListener) {
        rtmp.withLock { $0 = listener }
        listener.start(
            authorize: { [weak self] id in self?.pushedSource(id, over: "rtmp") != nil },
            onConnection: { [weak self] connection in self?.acceptPush(connection) })
    }

    /// Callers the SRT and RTMP ports refused for a wrong or revoked key, since the start.
    public var pushesRefused: (srt: Int, rtmp: Int) {
        (srt.withLock { $0?.refused ?? 0 }, rtmp.withLock { $0?.refused ?? 0 })
    }

    /// The running source a stream id (`room/key`) belongs to, pushed over `listen`.
    private func pushedSource(_ streamID: String, over listen: String) -> RoomSource? {
        let roomName = String(streamID.prefix { $0 != "/" })
        return room(roomName)?.sources.all.first {
            $0.plan.streamID == streamID && $0.plan.listen == listen && !$0.isOver
        }
    }

    /// An encoder's connection, let in by its key: to the source that key belongs to.
    private func acceptPush(_ connection: any PushedConnection) {
        let listen = connection is RTMPConnection ? "rtmp" : "srt"
        guard let source = pushedSource(connection.streamID, over: listen) else { return connection.close() }
        logger.info(
            "encoder connected",
            metadata: ["room": "\(connection.streamID.prefix { $0 != "/" })", "user": "\(source.userId)"])
        source.reader.deliver(connection)
    }

    /// The source's participant, joined when its input first opened; its feed is kept across reconnects.
    private func joinSource(
        _ source: RoomSource, hasAudio: Bool, hasVideo: Bool, forward: SourceVideoFormat?, room: Room
    ) -> SourceFeed? {
        if room.participant(source.userId).map({ $0.feed == nil }) == true {
            // Someone joined with the source's user id while it was connecting: the source gives way.
            let message = "a participant joined as '\(source.userId)'"
            source.note(.failed, attempt: 0, error: message)
            room.events.publish(
                .sourceState(
                    userId: source.userId, url: source.plan.shownURL, state: "failed", attempt: 0, error: message))
            return nil
        }
        let feed = SourceFeed(
            hasAudio: hasAudio, hasVideo: hasVideo, latencyMs: source.plan.input.latencyMs, forwardFormat: forward)
        do {
            let participant = try Participant(
                userId: source.userId, sessionID: sessions.next(), audio: nil, video: nil, feed: feed,
                nowMs: MonotonicClock.nowMs(), logger: logger)
            participant.setMix(muted: nil, gain: source.plan.gain)
            // The source may have been removed meanwhile: it does not join then.
            guard room.sources.source(source.userId) === source else { return nil }
            if let replaced = try room.add(participant) {
                room.events.publish(.participantLeft(userId: replaced.userId, reason: .replaced))
            }
        } catch {
            logger.warning(
                "source could not join",
                metadata: ["room": "\(room.name)", "user": "\(source.userId)", "error": "\(error)"])
            return nil
        }
        // Its pictures reach slots as a camera's do.
        room.events.publish(
            .participantJoined(userId: source.userId, sources: feed.forwardFormat == nil ? [] : ["camera"]))
        source.attach(feed)
        logger.info("source joined", metadata: ["room": "\(room.name)", "user": "\(source.userId)"])
        return feed
    }
}

/// Lets the reader's handlers reach the source they belong to, which is made after them.
private final class SourceHolder: @unchecked Sendable {
    private let lock = NSLock()
    private var value: RoomSource?
    var source: RoomSource? {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
