import Foundation
#if canImport(Glibc)
import Glibc
#endif
import RTP
import SRTP

/// The buffers one datagram's handling reuses: the parsed RTP packet and the SRTP plaintext. The UDP
/// layer keeps one per socket and passes it to `RoomManager.ingest`, so a datagram allocates nothing in
/// steady state (the arrays keep their capacity from one packet to the next). Confined to its caller.
public struct DatagramScratch: Sendable {
    var packet = RTPPacket(payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0)
    var clear: [UInt8] = []
    /// The packets of the last RTCP datagram; `Routed.rtcp` shares this buffer, which is unique again by the
    /// next datagram, so parsing reuses it.
    var rtcp: [RTCPPacket] = []

    public init() {
        packet.payload.reserveCapacity(2048)
        clear.reserveCapacity(2048)
        rtcp.reserveCapacity(8)
    }
}

/// Counters for datagrams that never reached a participant; exported as metrics.
public struct IngestCounters: Sendable, Equatable {
    public var datagrams = 0
    public var malformed = 0
    public var unknownSSRC = 0
    public var wrongSource = 0
    public var srtpFailures = 0
    public var rtcp = 0
}

/// The server-wide SSRC table: which participant owns an SSRC, the address it latched, and
/// its SRTP context. One lookup per datagram under one lock; the participant does the rest.
final class StreamRouter: @unchecked Sendable {
    final class Binding: @unchecked Sendable {
        let ssrc: UInt32
        let room: String
        let participant: Participant
        /// Unprotects what arrives; for WebRTC made from the transport's keys once its handshake is done.
        var srtp: SRTPSession?
        /// Protects the RTCP Cohost sends back (the answer's key); nil for plain RTP.
        var outbound: SRTPSession?
        /// A WebRTC participant's transport: only addresses its ICE checks proved may send, under its DTLS keys.
        let webRTC: WebRTCTransport?
        /// The SSRC of a line the participant only receives on: it sends RTCP from it, never media.
        let receiveOnly: Bool
        /// For a stand-in SSRC: how the packets carrying the real one are known.
        let learning: Learning?
        var latched: PeerAddress?
        /// Where this source's RTCP came from, when not multiplexed: feedback goes back there.
        var rtcpPeer: PeerAddress?
        init(
            ssrc: UInt32, room: String, participant: Participant, srtp: SRTPSession?, outbound: SRTPSession?,
            receiveOnly: Bool, learning: Learning? = nil
        ) {
            self.learning = learning
            self.ssrc = ssrc
            self.room = room
            self.participant = participant
            self.srtp = srtp
            self.outbound = outbound
            self.receiveOnly = receiveOnly
            webRTC = participant.webRTC
        }

        /// For a WebRTC source: whether `peer` passed ICE and the keys are there (counted as a wrong source or an
        /// SRTP failure when not). Always true for other sources.
        func admitsWebRTC(_ peer: PeerAddress, counters: inout IngestCounters) -> Bool {
            guard let webRTC else { return true }
            guard webRTC.accepts(peer) else {
                counters.wrongSource += 1
                return false
            }
            if srtp == nil { srtp = webRTC.keys.session(.inbound) }
            guard srtp != nil else {
                counters.srtpFailures += 1
                return false
            }
            return true
        }
    }

    private let lock = NSLock()
    private var bindings: [UInt32: Binding] = [:]
    /// Stand-in SSRCs still waiting for their first packet (bound under the stand-in too, for unregistering).
    private var pending: [UInt32: Binding] = [:]
    /// Each WebRTC participant's binding for RTCP from an SSRC it never announced (a browser that only receives
    /// sends its reports from one of its own), found through the transport that proved the sender's address.
    private var transportBindings: [ObjectIdentifier: Binding] = [:]
    /// The participant whose WebRTC transport proved `peer`, if any (the WebRTC table; set once by the demux).
    var transportOwner: (@Sendable (PeerAddress) -> Participant?)?
    private(set) var counters = IngestCounters()

    var snapshot: IngestCounters { lock.withLock { counters } }
    /// SSRCs bound to a participant now (media, and RTX where offered).
    var bindingCount: Int { lock.withLock { bindings.count } }

    /// A datagram the socket layer could not pass on whole (longer than its receive slot, or not from IP).
    func countMalformed() {
        lock.withLock {
            counters.datagrams += 1
            counters.malformed += 1
        }
    }

    func isInUse(_ ssrc: UInt32) -> Bool { lock.withLock { bindings[ssrc] != nil } }

    /// Registers every SSRC of a participant, or none when one is taken.
    struct Entry {
        var ssrc: UInt32
        var inbound: SRTPSession?
        var outbound: SRTPSession?
        var receiveOnly = false
        var learning: Learning?
    }

    /// How a stand-in SSRC's real one is recognised in the first packets that carry it (header extensions are
    /// readable before SRTP is removed).
    enum Learning: Equatable {
        /// The line's `a=mid` in the MID extension (a WebRTC line that listed no `a=ssrc`).
        case mid(String)
        /// A simulcast layer's RID in the RID extension (or, for its retransmissions, the repaired-RID one) with
        /// the offer's id, and the line's `a=mid` when the packets carry one.
        case rid(String, extensionID: UInt8, mid: String?, midExtensionID: UInt8?)
    }

    func register(_ entries: [Entry], room: String, participant: Participant) -> UInt32? {
        lock.lock()
        defer { lock.unlock() }
        if let taken = entries.first(where: { bindings[$0.ssrc] != nil }) { return taken.ssrc }
        for e in entries {
            let binding = Binding(
                ssrc: e.ssrc, room: room, participant: participant, srtp: e.inbound, outbound: e.outbound,
                receiveOnly: e.receiveOnly, learning: e.learning)
            bindings[e.ssrc] = binding
            if e.learning != nil { pending[e.ssrc] = binding }
        }
        if participant.webRTC != nil {
            transportBindings[ObjectIdentifier(participant)] = Binding(
                ssrc: 0, room: room, participant: participant, srtp: nil, outbound: nil, receiveOnly: true)
        }
        return nil
    }

    /// Where RTCP about `ssrc` goes: the address its RTP latched (rtcp-mux), or where its RTCP came from. For an
    /// SRTP stream the compound is protected into `scratch` (the caller's reused buffer) and `protected` is true:
    /// send `scratch`; otherwise send the compound as it is. nil before the first packet arrived, or when
    /// protecting failed.
    func protectFeedback(
        _ compound: [UInt8], about ssrc: UInt32,
        into scratch: inout [UInt8]
    ) -> (to: PeerAddress, protected: Bool)? {
        lock.lock()
        defer { lock.unlock() }
        guard let binding = bindings[ssrc] else { return nil }
        if let webRTC = binding.webRTC {
            guard let peer = webRTC.destination else { return nil }
            if binding.outbound == nil { binding.outbound = webRTC.keys.session(.outbound) }
            guard let outbound = binding.outbound else { return nil }
            do { try outbound.protectRTCP(compound, into: &scratch) } catch { return nil }
            return (peer, true)
        }
        guard let peer = binding.rtcpPeer ?? binding.latched else { return nil }
        guard let outbound = binding.outbound else { return (peer, false) }
        do { try outbound.protectRTCP(compound, into: &scratch) } catch { return nil }
        return (peer, true)
    }

    func unregister(_ participant: Participant) {
        lock.lock()
        defer { lock.unlock() }
        let own = [participant.audioSSRC].compactMap { $0 } + participant.videoSSRCs
        for ssrc in own + participant.wireSSRCs + participant.receiverSSRCs
        where bindings[ssrc]?.participant === participant {
            bindings[ssrc] = nil
        }
        for ssrc in own where pending[ssrc]?.participant === participant { pending[ssrc] = nil }
        transportBindings[ObjectIdentifier(participant)] = nil
    }

    /// Where a participant's return stream of `kind` goes (symmetric RTP, RFC 4961): the address the RTP of the
    /// participant's stream of that kind latched, else where the RTCP of the line it only receives on came from,
    /// else the address of its other stream. nil before anything of the participant arrived.
    func returnDestination(of participant: Participant, kind: NegotiatedStream.Kind) -> PeerAddress? {
        if let webRTC = participant.webRTC { return webRTC.destination }
        let audio = participant.audioSSRC
        let video = participant.videoSSRC
        let receiver = kind == .audio ? participant.returnAudio?.receiverSSRC : participant.returnVideo?.receiverSSRC
        lock.lock()
        defer { lock.unlock() }
        let first = kind == .audio ? audio : video
        let second = kind == .audio ? video : audio
        // Looked up one by one, not through an array: this runs for every packet sent back.
        func address(_ ssrc: UInt32?) -> PeerAddress? {
            guard let ssrc, let binding = bindings[ssrc], binding.participant === participant else { return nil }
            return binding.latched ?? binding.rtcpPeer
        }
        return address(first) ?? address(receiver) ?? address(second)
    }

    enum Routed {
        /// The packet is in the scratch passed to `route`.
        case rtp(Participant, bytes: Int)
        case rtcp(Participant, [RTCPPacket])
        case dropped
    }

    /// Classifies, authenticates and latches one datagram. RTCP must name a known SSRC. SRTCP
    /// authenticates itself and is accepted from any address; plain RTCP only from the host its
    /// RTP latched (any port: senders such as ffmpeg send RTCP from the port above), so nobody
    /// else can end a plain-RTP participant with a BYE or skew its lip-sync with a sender report.
    func route(_ bytes: [UInt8], from peer: PeerAddress) -> Routed {
        var scratch = DatagramScratch()
        return route(bytes, from: peer, scratch: &scratch)
    }

    /// `route` for the hot path: SRTP plaintext and the parsed packet go into `scratch`'s reused buffers
    /// (no allocation per RTP datagram; an RTCP datagram's packet list reuses `scratch.rtcp`, though report
    /// blocks, SDES items and NACK lists in it are still new arrays).
    func route(_ bytes: [UInt8], from peer: PeerAddress, scratch: inout DatagramScratch) -> Routed {
        lock.lock()
        defer { lock.unlock() }
        counters.datagrams += 1
        switch classifyPacket(bytes) {
        case .invalid:
            counters.malformed += 1
            return .dropped
        case .rtcp:
            counters.rtcp += 1
            guard bytes.count >= 8 else {
                counters.malformed += 1
                return .dropped
            }
            let ssrc = Self.readUInt32(bytes, at: 4)
            guard let binding = bindings[ssrc] ?? transportBinding(for: peer) else {
                counters.unknownSSRC += 1
                return .dropped
            }
            var clear = bytes
            guard binding.admitsWebRTC(peer, counters: &counters) else { return .dropped }
            if let srtp = binding.srtp {
                do { try srtp.unprotectRTCP(bytes, into: &scratch.clear) } catch {
                    counters.srtpFailures += 1
                    return .dropped
                }
                clear = scratch.clear
            } else if binding.receiveOnly && binding.latched == nil {
                // A line the participant only receives on has no RTP to latch: its first RTCP does.
                binding.latched = peer
            } else if !(binding.latched?.hasSameHost(as: peer) ?? false) {
                counters.wrongSource += 1
                return .dropped
            }
            guard (try? parseCompoundRTCP(clear, into: &scratch.rtcp)) != nil else {
                counters.malformed += 1
                return .dropped
            }
            binding.rtcpPeer = peer
            if binding.ssrc != ssrc {
                // A learnt SSRC: its sender reports are about the stand-in the participant knows.
                for index in scratch.rtcp.indices {
                    if case .senderReport(var sr) = scratch.rtcp[index], sr.ssrc == ssrc {
                        sr.ssrc = binding.ssrc
                        scratch.rtcp[index] = .senderReport(sr)
                    }
                }
            }
            return .rtcp(binding.participant, scratch.rtcp)
        case .rtp:
            guard bytes.count >= 12 else {
                counters.malformed += 1
                return .dropped
            }
            let ssrc = Self.readUInt32(bytes, at: 8)
            var learnt: UInt32?
            if bindings[ssrc] == nil, let standIn = learn(ssrc, from: bytes, peer: peer) { learnt = standIn }
            guard let binding = bindings[ssrc] else {
                counters.unknownSSRC += 1
                return .dropped
            }
            if let latched = binding.latched, latched != peer, binding.srtp == nil, binding.webRTC == nil {
                counters.wrongSource += 1
                return .dropped
            }
            guard binding.admitsWebRTC(peer, counters: &counters) else { return .dropped }
            if let srtp = binding.srtp {
                // Only an authenticated packet may latch or move the source (protocol/sdp.md).
                do { try srtp.unprotectRTP(bytes, into: &scratch.clear) } catch {
                    counters.srtpFailures += 1
                    if let learnt { unlearn(ssrc, standIn: learnt) }
                    return .dropped
                }
            }
            // Parsed into the scratch packet's storage: no payload array per datagram.
            let parsed: Bool
            if binding.srtp != nil {
                parsed = (try? scratch.packet.parse(scratch.clear)) != nil
            } else {
                parsed = (try? scratch.packet.parse(bytes)) != nil
            }
            guard parsed else {
                counters.malformed += 1
                return .dropped
            }
            binding.latched = peer
            if binding.ssrc != ssrc { scratch.packet.ssrc = binding.ssrc }
            if learnt != nil { binding.participant.learn(standIn: binding.ssrc, wireSSRC: ssrc) }
            return .rtp(binding.participant, bytes: bytes.count)
        }
    }

    /// Binds `ssrc` to the waiting stand-in whose line's MID (or layer's RID) the packet carries in its header
    /// extension (readable before decryption), when it comes from an address that transport's ICE proved (for
    /// plain RTP, the address the participant's voice latched). Returns the stand-in; the caller unbinds it again
    /// when the packet then fails to authenticate. A stand-in's SSRC, once learnt, stays: libwebrtc names a layer
    /// only in its first packets.
    private func learn(_ ssrc: UInt32, from bytes: [UInt8], peer: PeerAddress) -> UInt32? {
        // A packet without header extensions names no MID or RID: no need to look through the stand-ins.
        guard !pending.isEmpty, bytes[0] & 0x10 != 0 else { return nil }
        for (standIn, binding) in pending {
            guard let learning = binding.learning, fromParticipant(binding, peer) else { continue }
            switch learning {
            case .mid(let mid):
                guard let id = binding.webRTC?.parameters.midExtension,
                    let value = RTPHeaderExtension.element(id, in: bytes), value.elementsEqual(mid.utf8)
                else { continue }
            case .rid(let rid, let id, let mid, let midID):
                guard let value = RTPHeaderExtension.element(id, in: bytes), value.elementsEqual(rid.utf8) else {
                    continue
                }
                // Two lines may use the same RIDs; the MID, where packets carry it, says whose they are.
                if let mid, let midID, let value = RTPHeaderExtension.element(midID, in: bytes),
                    !value.elementsEqual(mid.utf8)
                {
                    continue
                }
            }
            pending[standIn] = nil
            bindings[ssrc] = binding
            return standIn
        }
        return nil
    }

    /// Whether `peer` may speak for the binding's participant: its WebRTC transport proved it, or (plain RTP, where
    /// the first packet latches as everywhere) the participant's media latched exactly there, if any did (lock
    /// held).
    private func fromParticipant(_ binding: Binding, _ peer: PeerAddress) -> Bool {
        if let webRTC = binding.webRTC { return webRTC.accepts(peer) }
        let participant = binding.participant
        for ssrc in [participant.audioSSRC].compactMap({ $0 }) + participant.videoSSRCs {
            if let other = bindings[ssrc], other.participant === participant, let latched = other.latched {
                return latched == peer
            }
        }
        return true
    }

    /// The binding of the WebRTC participant whose transport proved `peer` (lock held).
    private func transportBinding(for peer: PeerAddress) -> Binding? {
        guard !transportBindings.isEmpty, let owner = transportOwner?(peer) else { return nil }
        return transportBindings[ObjectIdentifier(owner)]
    }

    private func unlearn(_ ssrc: UInt32, standIn: UInt32) {
        guard let binding = bindings[ssrc] else { return }
        bindings[ssrc] = nil
        pending[standIn] = binding
    }

    private static func readUInt32(_ b: [UInt8], at i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }
}
