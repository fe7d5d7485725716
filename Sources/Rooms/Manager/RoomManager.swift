import Foundation
import Media
import Mixing
import RTP
import SRTP
import Logging
import Publishing
import DTLS

/// The rooms of one server, the SSRC table, and the rules of joining and leaving.
///
/// This is the whole of what the HTTP layer and the UDP endpoint call: they stay thin.
public final class RoomManager: @unchecked Sendable {
    public let settings: RoomSettings
    let logger: Logger
    private let clock: MixClock
    let router = StreamRouter()
    let webRTC = WebRTCTable()
    private var transportTimer: DispatchSourceTimer?
    private let decodePool: DecodePool
    let lock = NSLock()
    private var rooms: [String: Room] = [:]
    /// Each room name's kicks, kept past the room's life for `maxTokenTTLSeconds` (pruned by `sweep`).
    var kicks: [String: KickList] = [:]
    private var nextSession = 1
    private var timeoutTimer: DispatchSourceTimer?
    /// When each room (by identity, so a re-created room starts afresh) was first seen empty by `sweep`.
    private var emptySince: [ObjectIdentifier: Int64] = [:]
    /// The media socket's send (under `lock`).
    var transport: DatagramSender?
    /// The SSRC Cohost's own RTCP (receiver reports, PLI, NACK) is sent from.
    public let serverSSRC = UInt32.random(in: 1...UInt32.max)
    /// Where room definitions and kicks outlive the process; nil keeps them in memory only.
    let store: (any RoomStore)?
    /// Orders a room's saves against its removal from the store (RoomManager+Store.swift).
    let storeLock = NSLock()
    var storeErrorCount = 0
    var kicksForgottenInStoreAt: Int64 = 0

    /// Sends one datagram; installed by the UDP endpoint once its socket is bound.
    public typealias DatagramSender = @Sendable ([UInt8], PeerAddress) -> Void

    /// `sweepInterval`: seconds between `sweep`s (participant timeouts, idle rooms); nil when the
    /// owner calls `sweep(nowMs:)` itself (tests, with injected time).
    public init(
        settings: RoomSettings, logger: Logger, clock: MixClock = .shared, sweepInterval: Double? = 1,
        store: (any RoomStore)? = nil
    ) {
        self.settings = settings
        self.store = store
        self.logger = logger
        self.clock = clock
        decodePool = DecodePool(threads: settings.decodeThreads)
        guard let sweepInterval else { return }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "cohost.timeouts"))
        timer.schedule(deadline: .now() + sweepInterval, repeating: sweepInterval)
        timer.setEventHandler { [weak self] in self?.sweep(nowMs: MonotonicClock.nowMs()) }
        timer.resume()
        timeoutTimer = timer
        guard settings.webRTC != nil else { return }
        // DTLS retransmissions (OpenSSL's timers start at 1 s) and ICE consent, 20 times a second.
        let transports = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "cohost.transports"))
        transports.schedule(deadline: .now() + 0.05, repeating: 0.05)
        transports.setEventHandler { [weak self] in self?.tickTransports(nowMs: MonotonicClock.nowMs()) }
        transports.resume()
        transportTimer = transports
    }

    deinit {
        timeoutTimer?.cancel()
        transportTimer?.cancel()
        decodePool.stop()
    }

    /// Lets the rooms send RTCP feedback through the media socket.
    public func attachTransport(_ send: @escaping DatagramSender) { lock.withLock { transport = send } }

    /// Protects and sends a participant's RTCP feedback (one compound datagram) to its latched address.
    /// Once a second per participant and more under loss: written without closures or temporary arrays, SRTCP
    /// into the room's `scratch`, so reports allocate nothing here.
    private func sendFeedback(_ participant: Participant, _ compound: [UInt8], _ scratch: inout [UInt8]) {
        lock.lock()
        let send = transport
        lock.unlock()
        guard let send else { return }
        // To the first of the participant's streams that has latched an address (video may start late).
        if let ssrc = participant.videoSSRC, let route = router.protectFeedback(compound, about: ssrc, into: &scratch) {
            return send(route.protected ? scratch : compound, route.to)
        }
        if let ssrc = participant.audioSSRC, let route = router.protectFeedback(compound, about: ssrc, into: &scratch) {
            send(route.protected ? scratch : compound, route.to)
        }
    }

    /// Sends one datagram of a participant's return stream to where its media comes from.
    private func sendReturn(_ participant: Participant, _ kind: NegotiatedStream.Kind, _ bytes: [UInt8]) {
        lock.lock()
        let send = transport
        lock.unlock()
        guard let send, let peer = router.returnDestination(of: participant, kind: kind) else { return }
        send(bytes, peer)
    }

    // MARK: rooms

    public func room(_ name: String) -> Room? { lock.withLock { rooms[name] } }
    public var allRooms: [Room] { lock.withLock { rooms.values.sorted { $0.name < $1.name } } }
    public var ingestCounters: IngestCounters { router.snapshot }
    /// WebRTC transports now, handshakes, and STUN/DTLS datagrams dropped.
    public var webRTCCounters: WebRTCTable.Counters { webRTC.snapshot }
    /// Entries in the server's SSRC table (each participant's media SSRCs, and RTX ones).
    public var ssrcBindings: Int { router.bindingCount }
    /// Ticks (audio and video, every room) the shared clock skipped because it fell behind: a stalled machine.
    public var clockSkippedTicks: Int { clock.skippedTicks }

    /// Creates a room from a request; 409 when the name is taken.
    @discardableResult
    public func createRoom(_ request: RoomConfigRequest) throws(RoomError) -> Room {
        let config = try request.resolve()
        return try create(config, failIfExists: true)
    }

    func create(_ config: RoomConfig, failIfExists: Bool) throws(RoomError) -> Room {
        lock.lock()
        if let existing = rooms[config.name] {
            lock.unlock()
            if failIfExists { throw .conflict("room_exists", "room '\(config.name)' already exists") }
            return existing
        }
        guard rooms.count < settings.maxRooms else {
            lock.unlock()
            throw .init(
                status: 429, code: "limit_exceeded", message: "this server holds at most \(settings.maxRooms) rooms")
        }
        // A shared store decides which node holds a name: claimed before anything starts.
        if let store {
            let claimed: Bool
            do { claimed = try store.claimRoom(name: config.name, definition: RoomDefinition(config).json) } catch {
                lock.unlock()
                throw .init(status: 503, code: "store_unavailable", message: "the room store failed: \(error)")
            }
            guard claimed else {
                lock.unlock()
                throw .conflict("room_exists", "room '\(config.name)' already exists on another node")
            }
        }
        let room: Room
        do {
            room = try Room(
                config: config, serverSSRC: serverSSRC, logger: logger, outputRules: settings.outputRules
            ) { [weak self] p, compound, scratch in
                self?.sendFeedback(p, compound, &scratch)
            } sendReturn: { [weak self] p, kind, bytes in
                self?.sendReturn(p, kind, bytes)
            }
        } catch {
            lock.unlock()
            throw .init(status: 500, code: "encoder_failed", message: "could not start the room's encoders: \(error)")
        }
        // Before `start`, so the sinks also see the first outputs' state changes.
        for sink in settings.eventSinks { room.events.attach(sink) }
        room.onDefinitionChange = { [weak self] room in self?.persist(room) }
        rooms[config.name] = room
        lock.unlock()
        do { try room.start(clock: clock) } catch {
            _ = closeRoom(config.name)
            throw error
        }
        persist(room)
        logger.info("room created", metadata: ["room": "\(config.name)", "audioOnly": "\(config.audioOnly)"])
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
        let room: Room? = lock.withLock {
            guard let current = rooms[name], expected.map({ $0 === current }) ?? true else { return nil }
            rooms[name] = nil
            emptySince[ObjectIdentifier(current)] = nil
            return current
        }
        guard let room else { return false }
        if forget { unpersist(name) }
        for p in room.close() {
            detach(p)
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
        timeoutTimer?.cancel()
        allAtOnce(allRooms) { [self] room in closeRoom(room.name, ifStill: room, forget: false) }
    }

    // MARK: participants

    /// Joins `userId` to `roomName` with an SDP offer; returns the SDP answer.
    /// A room that does not exist is created with the server's defaults.
    /// `isAdmin`: joined with an admin token (the first admin to join anchors a pip layout without an anchor).
    public func join(
        room roomName: String, userId: String, tokenIssuedAt: Int64?, isAdmin: Bool = false,
        offer: String
    ) throws(RoomError) -> String {
        // Kicks outlive their room: checked before a room could be created again for the user.
        if isKicked(room: roomName, userId: userId, tokenIssuedAt: tokenIssuedAt) {
            throw .init(
                status: 403, code: "kicked",
                message: "user '\(userId)' was kicked from '\(roomName)'; a token issued after the kick is needed")
        }
        let room: Room
        if let existing = self.room(roomName) {
            room = existing
        } else if settings.autoCreateRooms || isAdmin {
            room = try create(RoomConfigRequest(name: roomName).resolve(), failIfExists: false)
        } else {
            throw .notFound("room '\(roomName)' does not exist (this server does not create rooms on join)")
        }
        let session = lock.withLock { () -> Int in
            defer { nextSession += 1 }
            return nextSession
        }
        var negotiation = try JoinNegotiator.negotiate(
            offer: offer, address: settings.publicIP, port: settings.rtpPort,
            sessionID: UInt64(session), audioOnly: room.config.audioOnly,
            sendsRoomView: room.config.returnVideo != nil && !room.config.audioOnly,
            webRTC: settings.webRTC.map {
                WebRTCIdentity(fingerprint: $0.context.certificate.fingerprintAttribute, addresses: $0.addresses)
            },
            ssrcInUse: { [router] in router.isInUse($0) })
        var transport: WebRTCTransport?
        if let parameters = negotiation.webRTC, let webRTC = settings.webRTC {
            do {
                transport = try WebRTCTransport(
                    parameters: parameters, context: webRTC.context, nowMs: MonotonicClock.nowMs())
            } catch {
                throw .init(status: 500, code: "dtls_failed", message: "could not set up DTLS: \(error)")
            }
            negotiation.returnAudio?.dtlsKeys = transport?.keys
            negotiation.returnVideo?.dtlsKeys = transport?.keys
        }
        let participant: Participant
        var entries: [StreamRouter.Entry] = []
        do {
            participant = try Participant(
                userId: userId, sessionID: session, isAdmin: isAdmin, audio: negotiation.audio,
                video: negotiation.video, decodeChannels: room.config.audio.channels,
                videoLimits: VideoLimits(
                    maxWidth: room.config.maxVideoSize.width, maxHeight: room.config.maxVideoSize.height,
                    decodeBudgetMs: settings.decodeBudgetMs),
                decodePool: decodePool, returnAudio: negotiation.returnAudio,
                returnVideo: negotiation.returnVideo, webRTC: transport,
                maxIngestKbps: room.config.maxIngestBitrate, nowMs: MonotonicClock.nowMs(), logger: logger)
            for stream in [negotiation.audio, negotiation.video].compactMap({ $0 }) {
                let inbound = try stream.srtp.map {
                    try SRTPSession(profile: $0.profile, masterKeyAndSalt: $0.key, direction: .inbound)
                }
                let outbound = try stream.srtp.flatMap { srtp in
                    try stream.serverKey.map {
                        try SRTPSession(profile: srtp.profile, masterKeyAndSalt: $0, direction: .outbound)
                    }
                }
                entries.append(
                    .init(ssrc: stream.ssrc, inbound: inbound, outbound: outbound, learnFromMID: stream.learnFromMID))
                // Retransmissions come on their own SSRC under the same m= line's key (libsrtp keys any SSRC).
                if let rtx = stream.retransmission {
                    entries.append(.init(ssrc: rtx.ssrc, inbound: inbound, outbound: nil))
                }
            }
            // A line the participant only receives on: its RTCP (receiver reports about the return) comes from
            // the line's own SSRC.
            for back in [negotiation.returnAudio, negotiation.returnVideo].compactMap({ $0 }) {
                guard let ssrc = back.receiverSSRC else { continue }
                let inbound = try back.receiverSRTP.map {
                    try SRTPSession(profile: $0.profile, masterKeyAndSalt: $0.key, direction: .inbound)
                }
                entries.append(.init(ssrc: ssrc, inbound: inbound, outbound: nil, receiveOnly: true))
            }
        } catch {
            throw .init(
                status: 500, code: "decoder_failed", message: "could not set up the participant's decoders: \(error)")
        }
        // The same user joining again replaces the old session: free its SSRCs first.
        if let old = room.participant(userId) { detach(old) }
        if let taken = router.register(entries, room: roomName, participant: participant) {
            throw .conflict("ssrc_conflict", "SSRC \(taken) is already in use on this server")
        }
        let replaced: Participant?
        do { replaced = try room.add(participant) } catch {
            detach(participant)
            throw error
        }
        if let transport { webRTC.add(transport, participant: participant, room: roomName) }
        if let replaced {
            // A concurrent join of the same user may have registered its SSRCs after the check above: the session
            // replaced here must not keep them (it would decode forever, in no room).
            detach(replaced)
            room.events.publish(.participantLeft(userId: replaced.userId, reason: .replaced))
        }
        room.events.publish(.participantJoined(userId: userId))
        logger.info("participant joined", metadata: ["room": "\(roomName)", "user": "\(userId)"])
        return negotiation.answer
    }

    /// Removes a participant (leave, kick, timeout); only session `session` of them, when given. Returns false
    /// when they are not in the room.
    @discardableResult
    public func removeParticipant(
        room roomName: String, userId: String, reason: LeaveReason, by: String? = nil, session: Int? = nil
    ) -> Bool {
        guard let room = room(roomName), let p = room.remove(userId, ifSession: session) else { return false }
        detach(p)
        if reason == .kicked {
            let list = lock.withLock { () -> KickList in
                let list = kicks[roomName] ?? KickList()
                kicks[roomName] = list
                return list
            }
            let now = Int64(Date().timeIntervalSince1970)
            list.record(userId, atSeconds: now)
            persistKick(room: roomName, userId: userId, atSeconds: now)
            room.events.publish(.participantKicked(userId: userId, by: by ?? "admin"))
        }
        room.events.publish(.participantLeft(userId: userId, reason: reason))
        logger.info(
            "participant left", metadata: ["room": "\(roomName)", "user": "\(userId)", "reason": "\(reason.rawValue)"])
        return true
    }

    /// The ICE ufrag a WebRTC participant's checks must name now (the WHIP session's ETag); nil for others.
    public func iceUfrag(room roomName: String, userId: String) -> String? {
        room(roomName)?.participant(userId)?.webRTC?.localUfrag
    }

    /// An ICE restart of a WebRTC participant (WHIP PATCH, RFC 9725 §4.3.2): the new remote credentials in, the new
    /// local ones and the host candidates out, as the lines of an SDP fragment.
    /// nil when `remoteUfrag` is the current one: trickled candidates, which an ICE-lite server does not need.
    public func restartICE(room roomName: String, userId: String, remoteUfrag: String) throws(RoomError) -> String? {
        guard let participant = room(roomName)?.participant(userId) else {
            throw .notFound("no participant '\(userId)' in room '\(roomName)'")
        }
        if participant.webRTC?.remoteUfrag == remoteUfrag { return nil }
        guard let fresh = webRTC.restartICE(participant, remoteUfrag: remoteUfrag, nowMs: MonotonicClock.nowMs())
        else {
            throw .init(
                status: 409, code: "not_webrtc",
                message: "'\(userId)' did not join over WebRTC: there is no ICE to restart")
        }
        let candidates = AnswerTransport(
            iceUfrag: fresh.ufrag, icePassword: fresh.password, fingerprint: "", setup: "",
            candidates: (settings.webRTC?.addresses ?? [settings.publicIP]).map { ($0, settings.rtpPort) }
        ).candidateLines
        return (["ice-ufrag:\(fresh.ufrag)", "ice-pwd:\(fresh.password)"] + candidates + ["end-of-candidates"])
            .map { "a=\($0)\r\n" }.joined()
    }

    /// Whether a token issued at `tokenIssuedAt` for `userId` predates that user's kick from `roomName`.
    public func isKicked(room roomName: String, userId: String, tokenIssuedAt: Int64?) -> Bool {
        let list = lock.withLock { kicks[roomName] }
        return list?.refuses(userId, tokenIssuedAt: tokenIssuedAt) ?? false
    }

    public func setMix(room roomName: String, userId: String, muted: Bool?, gain: Float?) throws(RoomError) {
        guard let room = room(roomName), let p = room.participant(userId) else {
            throw .notFound("no participant '\(userId)' in room '\(roomName)'")
        }
        if let gain, !(0...4).contains(gain) { throw .badRequest("invalid_gain", "gain must be within 0.0...4.0") }
        p.setMix(muted: muted, gain: gain)
    }

    /// Drops kicks older than the longest token lifetime and twice the skew (a token's own `exp` leeway, and the
    /// issuer's clock behind ours): no token they could refuse is valid any more. A closed room's list goes once
    /// it is empty.
    func forgetExpiredKicks(nowSeconds: Int64) {
        let cutoff = nowSeconds - settings.maxTokenTTLSeconds - 2 * KickList.skewSeconds
        lock.withLock {
            for (name, list) in kicks {
                list.forget(before: cutoff)
                if list.isEmpty && rooms[name] == nil { kicks[name] = nil }
            }
        }
        forgetStoredKicks(before: cutoff, nowSeconds: nowSeconds)
    }

    /// Removes participants silent for longer than `participantTimeoutMs` (reason `timeout`), then
    /// closes rooms that have been empty for `emptyRoomTimeoutMs`. Runs every `sweepInterval`; the
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
        var idle: [Room] = []
        lock.withLock {
            // Updated in place (this runs every second): `closeRoom`, the only way out of `rooms`, drops a room's
            // entry, so every key here is a room still in `rooms`.
            for room in rooms.values {
                let id = ObjectIdentifier(room)
                guard room.participantCount == 0 else {
                    emptySince[id] = nil
                    continue
                }
                let since = emptySince[id] ?? now
                emptySince[id] = since
                if now - since >= settings.emptyRoomTimeoutMs { idle.append(room) }
            }
        }
        for room in idle.sorted(by: { $0.name < $1.name }) where room.participantCount == 0 {
            logger.info(
                "closing idle room", metadata: ["room": "\(room.name)", "emptyMs": "\(settings.emptyRoomTimeoutMs)"])
            _ = closeRoom(room.name, ifStill: room)
        }
    }

    // MARK: media

    /// Entry point for every UDP datagram (RTP and RTCP, either port).
    public func ingest(_ bytes: [UInt8], from peer: PeerAddress) {
        var scratch = DatagramScratch()
        ingest(bytes, from: peer, scratch: &scratch)
    }

    /// Counts a datagram the UDP layer dropped before `ingest` (cut short by its receive slot, or not from IP)
    /// as malformed, where `cohost_udp_dropped{reason="malformed"}` shows it.
    public func ingestDroppedMalformed() { router.countMalformed() }

    /// `ingest` for the UDP hot path: `scratch` is the caller's (one per socket), so parsing and SRTP
    /// reuse its buffers and a datagram allocates nothing in steady state.
    public func ingest(_ bytes: [UInt8], from peer: PeerAddress, scratch: inout DatagramScratch) {
        // RFC 7983: the first byte tells STUN (0–3) and DTLS (20–63) from RTP and RTCP (128–191).
        if let first = bytes.first, first < 64, settings.webRTC != nil {
            if first < 4 { return ingestSTUN(bytes, from: peer) }
            if first >= 20 { return ingestDTLS(bytes, from: peer) }
        }
        switch router.route(bytes, from: peer, scratch: &scratch) {
        case .dropped:
            return
        case let .rtp(participant, size):
            participant.receive(scratch.packet, bytes: size, nowMs: MonotonicClock.nowMs())
        case let .rtcp(participant, packets):
            let now = MonotonicClock.nowMs()
            participant.touch(nowMs: now)
            for packet in packets {
                switch packet {
                case .senderReport(let sr):
                    participant.noteSenderReport(sr, nowMs: now)
                    if !sr.reports.isEmpty {
                        participant.noteReceptionReports(sr.reports, nowMs: now, ntpNow: NTPTime.now())
                    }
                case .receiverReport(let rr) where !rr.reports.isEmpty:
                    participant.noteReceptionReports(rr.reports, nowMs: now, ntpNow: NTPTime.now())
                case .pli, .fir, .nack, .remb:
                    participant.noteViewFeedback(packet)
                default: break
                }
                guard case .bye = packet else { continue }
                if let room = roomOf(participant) {
                    room.remove(participant.userId, ifSession: participant.sessionID).map { p in
                        detach(p)
                        room.events.publish(.participantLeft(userId: p.userId, reason: .left))
                    }
                }
            }
        }
    }

    private func roomOf(_ participant: Participant) -> Room? {
        lock.withLock { rooms.values.first { $0.participant(participant.userId) === participant } }
    }
}
