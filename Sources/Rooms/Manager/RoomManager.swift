import Foundation
import Forwarding
import CohostAPI
import Media
import RTP
import SRTP
import Logging
import Publishing
import DTLS
import Clocks
import MediaSources
import Synchronization

/// The rooms of one server and the rules of joining and leaving: the one thing the HTTP layer calls.
///
/// It holds no lock of its own. Each job has an owner with its own: `RoomRegistry` (which rooms exist),
/// `KickLedger` (who was kicked from which name), `RoomPersistence` (what outlives the process, when a store is
/// configured) and `MediaDemux` (the media port: SSRC table, WebRTC transports, the socket's send). The periodic
/// work (`sweep`, `media.tickTransports`) is run by services of the server, not by timers of its own.
public final class RoomManager: @unchecked Sendable {
    public let settings: RoomSettings
    let logger: Logger
    private let clock: MixClock
    private let decodePool: DecodePool
    private let registry: RoomRegistry
    let kicks: KickLedger
    /// The invites minted here, single-use or revocable.
    public let invites = InviteLedger()
    /// nil keeps rooms and kicks in memory only.
    let persistence: RoomPersistence?
    public let media: MediaDemux
    let sessions = SessionCounter()
    /// The SRT and RTMP ports encoders push to, when the server has them (`attach`).
    let srt = Mutex<SRTListener?>(nil)
    let rtmp = Mutex<RTMPListener?>(nil)
    /// The SSRC Cohost's own RTCP (receiver reports, PLI, NACK) is sent from.
    public let serverSSRC = UInt32.random(in: 1...UInt32.max)

    public init(
        settings: RoomSettings, logger: Logger, clock: MixClock = .shared, store: (any RoomStore)? = nil
    ) {
        self.settings = settings
        self.logger = logger
        self.clock = clock
        decodePool = DecodePool(threads: settings.decodeThreads)
        registry = RoomRegistry(capacity: settings.maxRooms)
        kicks = KickLedger(maxTokenTTLSeconds: settings.maxTokenTTLSeconds)
        persistence = store.map { RoomPersistence(store: $0, logger: logger) }
        media = MediaDemux(acceptsWebRTC: settings.webRTC != nil, logger: logger)
        media.onSessionEnd { [weak self] participant, roomName, reason in
            self?.endSession(of: participant, in: roomName, reason: reason)
        }
    }

    deinit { decodePool.stop() }

    // MARK: rooms

    public func room(_ name: String) -> Room? { registry.room(name) }
    public var allRooms: [Room] { registry.all }
    public var ingestCounters: IngestCounters { media.router.snapshot }
    /// WebRTC transports now, handshakes, and STUN/DTLS datagrams dropped.
    public var webRTCCounters: WebRTCTable.Counters { media.webRTC.snapshot }
    /// Entries in the server's SSRC table (each participant's media SSRCs, and RTX ones).
    public var ssrcBindings: Int { media.router.bindingCount }
    /// Ticks (audio and video, every room) the shared clock skipped because it fell behind: a stalled machine.
    public var clockSkippedTicks: Int { clock.skippedTicks }
    /// Store operations that failed since the start (`cohost_store_errors`).
    public var storeErrors: Int { persistence?.errors ?? 0 }

    /// Creates a room from a request; `room_exists` when the name is taken.
    @discardableResult
    public func createRoom(_ request: RoomConfigRequest) throws(RoomError) -> Room {
        let config = try request.resolve()
        return try create(config, failIfExists: true)
    }

    func create(_ config: RoomConfig, failIfExists: Bool) throws(RoomError) -> Room {
        switch registry.reserve(config.name) {
        case .exists(let existing):
            if failIfExists { throw .conflict("room_exists", "room '\(config.name)' already exists") }
            return existing
        case .full:
            throw RoomError(.limitExceeded, "limit_exceeded", "this server holds at most \(settings.maxRooms) rooms")
        case .reserved:
            break
        }
        let room: Room
        do { room = try open(config) } catch {
            registry.cancel(config.name)
            throw error
        }
        registry.fill(room)
        do { try room.start(clock: clock) } catch {
            _ = closeRoom(config.name)
            throw error
        }
        persist(room)
        logger.info("room created", metadata: ["room": "\(config.name)", "audioOnly": "\(config.audioOnly)"])
        return room
    }

    /// A reserved name's room: claimed in a shared store (which decides which node holds a name), its encoders
    /// opened, its observers attached. Not started yet.
    private func open(_ config: RoomConfig) throws(RoomError) -> Room {
        // A name closed on another node and created again here keeps the kicks made there: the kicked keep out.
        if let cluster = persistence?.store as? any ClusterStore {
            do {
                for kick in try cluster.kicks(of: config.name) {
                    kicks.record(room: kick.room, userId: kick.userId, atSeconds: kick.atSeconds)
                }
            } catch {
                throw RoomError(.unavailable, "store_unavailable", "the room store failed: \(error)")
            }
        }
        if let store = persistence?.store {
            let claimed: Bool
            do { claimed = try store.claimRoom(name: config.name, definition: RoomDefinition(config).json) } catch {
                throw RoomError(.unavailable, "store_unavailable", "the room store failed: \(error)")
            }
            guard claimed else {
                throw .conflict("room_exists", "room '\(config.name)' already exists on another node")
            }
        }
        let room: Room
        do {
            room = try Room(
                config: config, serverSSRC: serverSSRC, logger: logger, outputRules: outputRules(for: config.name)
            ) { [media] p, compound, scratch in
                media.sendFeedback(p, compound, &scratch)
            } sendReturn: { [media] p, kind, bytes in
                media.sendReturn(p, kind, bytes)
            }
        } catch {
            throw RoomError(.internal, "encoder_failed", "could not start the room's encoders: \(error)")
        }
        // Before `start`, so the sinks also see the first outputs' state changes.
        for sink in settings.eventSinks { room.events.attach(sink) }
        room.onDefinitionChange = { [weak self] room in self?.persist(room) }
        return room
    }

    /// Closes a room: everyone leaves with `room_closed`, outputs stop cleanly.
    @discardableResult
    public func closeRoom(_ name: String) -> Bool { closeRoom(name, ifStill: nil) }

    /// Closes a room here without removing it from the store: another node of the cluster has taken it over.
    @discardableResult
    public func release(_ name: String) -> Bool { closeRoom(name, ifStill: nil, forget: false) }

    /// Closes `name` if it is (still) `expected`, when one is given: a room closed for idleness and
    /// created again meanwhile under the same name is left alone. `forget`: remove it from the store too (not when
    /// the server shuts down: the room comes back at the next start).
    private func closeRoom(_ name: String, ifStill expected: Room?, forget: Bool = true) -> Bool {
        guard let room = registry.remove(name, ifStill: expected) else { return false }
        if forget { persistence?.remove(name) }
        for p in room.close() {
            media.detach(p)
            room.events.publish(.participantLeft(userId: p.userId, reason: .roomClosed))
        }
        room.events.publish(.roomClosed)
        room.events.finish()
        logger.info("room closed", metadata: ["room": "\(name)"])
        return true
    }

    /// Closes every room at once (a room's outputs may each take seconds to stop on a stuck connection: in turn,
    /// many rooms would outlast the service manager's stop timeout).
    public func shutdown() {
        allAtOnce(allRooms) { [self] room in closeRoom(room.name, ifStill: room, forget: false) }
    }

    /// Saves the room's definition, unless it has been closed meanwhile.
    func persist(_ room: Room) {
        persistence?.save(room) { registry.room(room.name) === room }
    }

    // MARK: participants

    /// Joins `userId` to `roomName` with an SDP offer; returns the SDP answer.
    /// A room that does not exist is created with the server's defaults.
    /// `isAdmin`: joined with an admin token (the first admin to join anchors a pip layout without an anchor).
    /// `monitor`: a hidden receiver (admins only): its slots show every participant's camera, and it is in no
    /// layout, mix, participant list or event (protocol/sdp.md, "Monitors").
    public func join(
        room roomName: String, userId: String, tokenIssuedAt: Int64?, isAdmin: Bool = false, monitor: Bool = false,
        invite: String? = nil, displayName: String? = nil, offer: String
    ) throws(RoomError) -> String {
        guard !monitor || isAdmin else {
            throw .forbidden("joining as a monitor needs an admin token")
        }
        // Kicks outlive their room: checked before a room could be created again for the user.
        if isKicked(room: roomName, userId: userId, tokenIssuedAt: tokenIssuedAt) {
            throw .forbidden(
                "kicked", "user '\(userId)' was kicked from '\(roomName)'; a token issued after the kick is needed")
        }
        // An invite's join is taken before anything is set up, and given back if the join fails.
        if let invite {
            try invites.admit(
                id: invite, room: roomName, userId: userId, nowSeconds: Int64(Date().timeIntervalSince1970))
        }
        do {
            return try joinAdmitted(
                room: roomName, userId: userId, isAdmin: isAdmin, monitor: monitor, displayName: displayName,
                offer: offer)
        } catch {
            if let invite { invites.refund(id: invite) }
            throw error
        }
    }

    private func joinAdmitted(
        room roomName: String, userId: String, isAdmin: Bool, monitor: Bool, displayName: String?, offer: String
    ) throws(RoomError) -> String {
        let room: Room
        if let existing = self.room(roomName) {
            room = existing
        } else if settings.autoCreateRooms || isAdmin {
            room = try create(RoomConfigRequest(name: roomName).resolve(), failIfExists: false)
        } else {
            throw .notFound("room '\(roomName)' does not exist (this server does not create rooms on join)")
        }
        // A source's user id is the source's while it runs.
        if !monitor, let source = room.sources.source(userId), !source.isOver {
            throw .conflict("user_exists", "'\(userId)' is a source of room '\(roomName)'; join with another user id")
        }
        let session = sessions.next()
        let (negotiation, transport) = try negotiate(offer, session: session, room: room)
        let (participant, entries) = try makeParticipant(
            userId: userId, session: session, isAdmin: isAdmin, monitor: monitor, negotiation: negotiation,
            transport: transport, room: room, displayName: displayName)
        // The same user joining again replaces the old session: free its SSRCs first.
        if let old = monitor ? room.monitor(userId) : room.participant(userId) { media.detach(old) }
        if let taken = media.register(entries, room: roomName, participant: participant) {
            throw .conflict("ssrc_conflict", "SSRC \(taken) is already in use on this server")
        }
        // The transport before the participant is visible: a kick right after `add` detaches both, where a transport
        // added after it would stay behind, answering checks for nobody.
        if let transport { media.webRTC.add(transport, participant: participant, room: roomName) }
        let replaced: Participant?
        do { replaced = try room.add(participant) } catch {
            media.detach(participant)
            throw error
        }
        if let replaced {
            // A concurrent join of the same user may have registered its SSRCs after the check above: the session
            // replaced here must not keep them (it would decode forever, in no room).
            media.detach(replaced)
            if !monitor { room.events.publish(.participantLeft(userId: replaced.userId, reason: .replaced)) }
        }
        if !monitor {
            room.events.publish(
                .participantJoined(
                    userId: userId, sources: participant.sources.map(\.rawValue), name: participant.displayName))
        }
        logger.info("participant joined", metadata: ["room": "\(roomName)", "user": "\(userId)"])
        return negotiation.answer
    }

    /// The server's output rules, with a quota of the room's own when rooms have one.
    private func outputRules(for room: String) -> OutputRules {
        var rules = settings.outputRules
        guard settings.roomRecordingsMaxBytes > 0, var recordings = rules.recordings else { return rules }
        recordings.quota = RecordingQuota(
            room: room, limitBytes: settings.roomRecordingsMaxBytes, parent: recordings.quota)
        rules.recordings = recordings
        return rules
    }

    /// The offer read against the room and this server, and a WebRTC transport when the offer is WebRTC.
    /// `programme`: a viewer's offer (WHEP), answered with the programme in this profile (`JoinNegotiator`).
    func negotiate(
        _ offer: String, session: Int, room: Room, programme: String? = nil
    ) throws(RoomError) -> (Negotiation, WebRTCTransport?) {
        let negotiation = try JoinNegotiator.negotiate(
            offer: offer, address: settings.publicIP, port: settings.rtpPort,
            sessionID: UInt64(session), audioOnly: room.config.audioOnly,
            sendsRoomView: programme != nil || (room.config.returnVideo != nil && !room.config.audioOnly),
            webRTC: settings.webRTC.map {
                WebRTCIdentity(
                    fingerprint: $0.context.certificate.fingerprintAttribute, addresses: $0.addresses,
                    tcpPort: $0.tcpPort)
            },
            programme: programme, ssrcInUse: { [router = media.router] in router.isInUse($0) })
        guard let parameters = negotiation.webRTC, let webRTC = settings.webRTC else { return (negotiation, nil) }
        let transport: WebRTCTransport
        do {
            transport = try WebRTCTransport(
                parameters: parameters, context: webRTC.context, nowMs: MonotonicClock.nowMs())
        } catch {
            throw RoomError(.internal, "dtls_failed", "could not set up DTLS: \(error)")
        }
        return (negotiation, transport)
    }

    /// The participant with its decoders, and the SSRC table's entries for its streams.
    func makeParticipant(
        userId: String, session: Int, isAdmin: Bool, monitor: Bool, negotiation: Negotiation,
        transport: WebRTCTransport?, room: Room, viewer: Bool = false, displayName: String? = nil
    ) throws(RoomError) -> (Participant, [StreamRouter.Entry]) {
        do {
            let participant = try Participant(
                userId: userId, sessionID: session, isAdmin: isAdmin, isMonitor: monitor, audio: negotiation.audio,
                video: negotiation.video, screen: negotiation.screen, decodeChannels: room.config.audio.channels,
                videoLimits: VideoLimits(
                    maxWidth: room.config.maxVideoSize.width, maxHeight: room.config.maxVideoSize.height,
                    decodeBudgetMs: settings.decodeBudgetMs),
                decodePool: decodePool, returnAudio: negotiation.returnAudio,
                returnVideo: negotiation.returnVideo, slots: negotiation.slots, webRTC: transport, viewer: viewer,
                maxIngestKbps: room.config.maxIngestBitrate, displayName: displayName, nowMs: MonotonicClock.nowMs(),
                logger: logger)
            return (participant, try Self.routingEntries(negotiation))
        } catch {
            throw RoomError(
                .internal, "decoder_failed", "could not set up the participant's decoders: \(error)")
        }
    }

    /// One entry per SSRC the participant sends from: its media streams, their retransmissions, and the lines it
    /// only receives on (their RTCP, receiver reports about the return, comes from the line's own SSRC).
    private static func routingEntries(_ negotiation: Negotiation) throws -> [StreamRouter.Entry] {
        var entries: [StreamRouter.Entry] = []
        for stream in [negotiation.audio, negotiation.video, negotiation.screen].compactMap({ $0 }) {
            let inbound = try stream.srtp.map {
                try SRTPSession(profile: $0.profile, masterKeyAndSalt: $0.key, direction: .inbound)
            }
            let outbound = try stream.srtp.flatMap { srtp in
                try stream.serverKey.map {
                    try SRTPSession(profile: srtp.profile, masterKeyAndSalt: $0, direction: .outbound)
                }
            }
            if let ridID = stream.ridExtension {
                // Simulcast: every layer's SSRCs are stand-ins, learnt from the RID of their first packets.
                for layer in stream.layers {
                    entries.append(
                        .init(
                            ssrc: layer.ssrc, inbound: inbound, outbound: outbound,
                            learning: .rid(
                                layer.rid, extensionID: ridID, mid: stream.mid, midExtensionID: stream.midExtension)))
                    if let repair = layer.repairSSRC, let repairedID = stream.repairedRidExtension {
                        entries.append(
                            .init(
                                ssrc: repair, inbound: inbound, outbound: nil,
                                learning: .rid(
                                    layer.rid, extensionID: repairedID, mid: stream.mid,
                                    midExtensionID: stream.midExtension)))
                    }
                }
                continue
            }
            entries.append(
                .init(
                    ssrc: stream.ssrc, inbound: inbound, outbound: outbound,
                    learning: stream.learnFromMID.map { .mid($0) }))
            // Retransmissions come on their own SSRC under the same m= line's key (libsrtp keys any SSRC).
            if let rtx = stream.retransmission {
                entries.append(.init(ssrc: rtx.ssrc, inbound: inbound, outbound: nil))
            }
        }
        let receivers =
            [negotiation.returnAudio, negotiation.returnVideo].compactMap { $0 }.map {
                ($0.receiverSSRC, $0.receiverSRTP)
            }
            + negotiation.slots.map { ($0.receiverSSRC, $0.receiverSRTP) }
        for (ssrc, srtp) in receivers {
            guard let ssrc else { continue }
            let inbound = try srtp.map {
                try SRTPSession(profile: $0.profile, masterKeyAndSalt: $0.key, direction: .inbound)
            }
            entries.append(.init(ssrc: ssrc, inbound: inbound, outbound: nil, receiveOnly: true))
        }
        return entries
    }

    /// Removes a participant (leave, kick, timeout); only session `session` of them, when given. Returns false
    /// when they are not in the room.
    @discardableResult
    public func removeParticipant(
        room roomName: String, userId: String, reason: LeaveReason, by: String? = nil, session: Int? = nil
    ) -> Bool {
        guard let room = room(roomName), let p = room.remove(userId, ifSession: session) else { return false }
        media.detach(p)
        // A source kicked or removed as a participant stops being pulled; one that ended stays listed.
        if p.feed != nil, reason != .ended, let source = room.sources.remove(userId) { source.stop() }
        if p.isMonitor { return true }
        if reason == .kicked {
            let now = Int64(Date().timeIntervalSince1970)
            kicks.record(room: roomName, userId: userId, atSeconds: now)
            persistence?.recordKick(room: roomName, userId: userId, atSeconds: now)
            room.events.publish(.participantKicked(userId: userId, by: by ?? "admin"))
        }
        room.events.publish(.participantLeft(userId: userId, reason: reason))
        logger.info(
            "participant left", metadata: ["room": "\(roomName)", "user": "\(userId)", "reason": "\(reason.rawValue)"])
        return true
    }

    /// A session ended by the media side (its WebRTC transport, or an RTCP BYE).
    private func endSession(of participant: Participant, in roomName: String?, reason: LeaveReason) {
        guard let roomName = roomName ?? registry.room(of: participant)?.name else { return }
        removeParticipant(room: roomName, userId: participant.userId, reason: reason, session: participant.sessionID)
    }

    /// The ICE ufrag a WebRTC participant's checks must name now (the WHIP session's ETag); nil for others.
    public func iceUfrag(room roomName: String, userId: String) -> String? {
        room(roomName)?.participant(userId)?.webRTC?.localUfrag
    }

    /// An ICE restart of a WebRTC participant (WHIP PATCH, RFC 9725 §4.3.2): the new remote credentials in, the new
    /// local ones and the host candidates out, as the lines of an SDP fragment.
    /// nil when `remoteUfrag` is the current one: trickled candidates, which an ICE-lite server does not need.
    public func restartICE(
        room roomName: String, userId: String, remoteUfrag: String, remotePassword: String? = nil
    ) throws(RoomError) -> String? {
        guard let participant = room(roomName)?.participant(userId) else {
            throw .notFound("no participant '\(userId)' in room '\(roomName)'")
        }
        if participant.webRTC?.remoteUfrag == remoteUfrag { return nil }
        guard
            let fresh = media.webRTC.restartICE(
                participant, remoteUfrag: remoteUfrag, remotePassword: remotePassword, nowMs: MonotonicClock.nowMs())
        else {
            throw .conflict("not_webrtc", "'\(userId)' did not join over WebRTC: there is no ICE to restart")
        }
        let candidates = AnswerTransport(
            iceUfrag: fresh.ufrag, icePassword: fresh.password, fingerprint: "", setup: "",
            candidates: (settings.webRTC?.addresses ?? [settings.publicIP]).map { ($0, settings.rtpPort) },
            tcpPort: settings.webRTC?.tcpPort
        ).candidateLines
        return (["ice-ufrag:\(fresh.ufrag)", "ice-pwd:\(fresh.password)"] + candidates + ["end-of-candidates"])
            .map { "a=\($0)\r\n" }.joined()
    }

    /// Whether a token issued at `tokenIssuedAt` for `userId` predates that user's kick from `roomName`.
    public func isKicked(room roomName: String, userId: String, tokenIssuedAt: Int64?) -> Bool {
        kicks.refuses(room: roomName, userId: userId, tokenIssuedAt: tokenIssuedAt)
    }

    /// `gain` is checked as given, before it becomes a Float: 4.0000001 would round onto 4 and pass.
    public func setMix(room roomName: String, userId: String, muted: Bool?, gain: Double?) throws(RoomError) {
        guard let room = room(roomName), let p = room.participant(userId) else {
            throw .notFound("no participant '\(userId)' in room '\(roomName)'")
        }
        if let gain, !(0...4).contains(gain) {
            throw .badRequest("invalid_gain", "gain must be within 0.0...4.0")
        }
        p.setMix(muted: muted, gain: gain.map { Float($0) })
    }

    /// A participant's camera or microphone on or off (`PATCH`).
    public func setDevices(room roomName: String, userId: String, camera: Bool?, microphone: Bool?) throws(RoomError) {
        guard let room = room(roomName) else { throw .notFound("no participant '\(userId)' in room '\(roomName)'") }
        try room.setDevices(userId, camera: camera, microphone: microphone)
    }

    /// Drops kicks no valid token could be refused by any more. A closed room's list goes once it is empty.
    func forgetExpiredKicks(nowSeconds: Int64) {
        let cutoff = kicks.cutoff(nowSeconds: nowSeconds)
        kicks.forget(before: cutoff, open: registry.names)
        persistence?.forgetKicks(before: cutoff, nowSeconds: nowSeconds)
    }

    /// Removes participants silent for longer than `participantTimeoutMs` (reason `timeout`), then
    /// closes rooms that have been empty for `emptyRoomTimeoutMs`. The server calls it once a second; the
    /// emptiness clock of a room starts at the first sweep that finds it empty.
    public func sweep(nowMs now: Int64) {
        for room in allRooms {
            for p in room.participants(idleLongerThan: settings.participantTimeoutMs, nowMs: now) {
                // This session only: the user may have joined again since it was found idle.
                removeParticipant(room: room.name, userId: p.userId, reason: .timeout, session: p.sessionID)
            }
        }
        forgetExpiredKicks(nowSeconds: Int64(Date().timeIntervalSince1970))
        guard settings.emptyRoomTimeoutMs > 0 else { return }
        for room in registry.idle(nowMs: now, timeoutMs: settings.emptyRoomTimeoutMs) where room.participantCount == 0 {
            logger.info(
                "closing idle room", metadata: ["room": "\(room.name)", "emptyMs": "\(settings.emptyRoomTimeoutMs)"])
            _ = closeRoom(room.name, ifStill: room)
        }
    }
}

/// Session numbers, one per join, never reused while the process lives.
final class SessionCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var last = 0

    func next() -> Int {
        lock.withLock {
            last += 1
            return last
        }
    }
}
