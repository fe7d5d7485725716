import RTP
import SRTP
import Synchronization

/// The room view's codecs: VP8 for whoever offered it, H.264 constrained baseline for a participant that offered
/// only H.264.
enum RoomViewCodec: Int, Sendable, CaseIterable {
    case vp8 = 0
    case h264 = 1

    init?(name: String) {
        switch name.lowercased() {
        case "vp8": self = .vp8
        case "h264": self = .h264
        default: return nil
        }
    }

    var name: String { self == .vp8 ? "VP8" : "H264" }
}

/// One participant's return video: the stream carrying the room view to them, what their receiver reports, and
/// the requests their RTCP brings (NACKs, keyframe requests) for the room's next video tick. The requests come on
/// the UDP thread and are taken on the room's queue: behind a lock of their own. The rest is confined to the room's
/// queue.
final class ReturnVideo {
    let codec: RoomViewCodec
    /// A viewer's (WHEP): the programme's own H.264 (`ProgrammeVideoSender`), not the room view.
    let carriesProgramme: Bool
    let rtp: OutboundRTP
    let feedback: ReceiverFeedback
    /// The participant's own SSRC on a line it only receives on (its RTCP comes from it).
    let receiverSSRC: UInt32?
    /// Retransmissions left this second: a receiver NACKing everything cannot make Cohost resend more than this
    /// (`RoomViewSender.retransmissionsPerSecond`), whatever it asks for.
    var retransmissionBudget = RoomViewSender.retransmissionsPerSecond
    /// The shared packet index of the first packet this participant got (at a keyframe), and its sequence number
    /// there: every later packet's number follows from its index, so retransmissions need no table.
    var first: (index: Int64, sequence: UInt16)?
    private let inbox = Mutex<Inbox>(Inbox())
    /// Packets resent on NACK, and NACKed numbers no longer held (read by metrics from anywhere).
    private let resent = Mutex<(answered: Int, unanswerable: Int)>((0, 0))

    struct Inbox {
        var keyframe = false
        var nacks: [UInt16] = []
        var nacksReceived = 0
        var keyframeRequests = 0
    }

    init(
        _ offer: ReturnOffer, codec: RoomViewCodec, cname: String, lateKeys: TransportKeys?,
        carriesProgramme: Bool = false
    ) throws(SRTPError) {
        self.codec = codec
        self.carriesProgramme = carriesProgramme
        rtp = try OutboundRTP(offer, clockRate: 90_000, cname: cname, lateKeys: lateKeys)
        feedback = ReceiverFeedback(clockRate: 90_000)
        receiverSSRC = offer.receiverSSRC
    }

    /// A PLI or FIR about this stream (the UDP thread).
    func requestKeyframe() {
        inbox.withLock {
            $0.keyframe = true
            $0.keyframeRequests += 1
        }
    }

    /// A generic NACK about this stream (the UDP thread). At most 256 numbers wait: a flood cannot grow memory.
    func noteNack(_ nack: GenericNACK) {
        inbox.withLock { box in
            box.nacksReceived += 1
            for entry in nack.entries {
                guard box.nacks.count < 256 else { return }
                box.nacks.append(entry.packetID)
                var mask = entry.lostBitmask
                var offset: UInt16 = 1
                while mask != 0, box.nacks.count < 256 {
                    if mask & 1 != 0 { box.nacks.append(entry.packetID &+ offset) }
                    mask >>= 1
                    offset += 1
                }
            }
        }
    }

    /// Takes the waiting requests (the room's video tick): whether a keyframe was asked for, and the NACKed
    /// numbers appended to `nacks` (the caller's reused storage).
    func takeRequests(nacks: inout [UInt16]) -> Bool {
        inbox.withLock { box in
            nacks.append(contentsOf: box.nacks)
            box.nacks.removeAll(keepingCapacity: true)
            defer { box.keyframe = false }
            return box.keyframe
        }
    }

    var requestCounts: (nacks: Int, keyframes: Int) { inbox.withLock { ($0.nacksReceived, $0.keyframeRequests) } }

    /// This participant's sequence number for shared packet `index` (nil before its first keyframe).
    func sequence(of index: Int64) -> UInt16? {
        guard let first, index >= first.index else { return nil }
        return first.sequence &+ UInt16(truncatingIfNeeded: index - first.index)
    }

    /// The shared index of this participant's sequence number `number`, counting back from `lastIndex` (the newest
    /// packet sent): nil when it is before the participant's first packet.
    func index(ofSequence number: UInt16, lastIndex: Int64) -> Int64? {
        guard let first, let newest = sequence(of: lastIndex) else { return nil }
        let back = Int64(newest &- number)
        let index = lastIndex - back
        return index >= first.index ? index : nil
    }

    func countRetransmission(answered: Bool) {
        resent.withLock { if answered { $0.answered += 1 } else { $0.unanswerable += 1 } }
    }

    var retransmissions: (answered: Int, unanswerable: Int) { resent.withLock { $0 } }
}

extension ReturnVideo {
    /// The NACKed `numbers` sent again from `history` while this second's budget lasts, each counted as answered or
    /// not; `deliver` puts a packet on the wire. (`RoomViewSender` and `ProgrammeVideoSender` share this.)
    func retransmit(_ numbers: [UInt16], from history: SendHistory, _ deliver: ([UInt8]) -> Void) {
        let last = history.nextIndex - 1
        for number in numbers {
            guard retransmissionBudget > 0, let index = index(ofSequence: number, lastIndex: last),
                let sequence = sequence(of: index)
            else {
                countRetransmission(answered: false)
                continue
            }
            var answered = false
            history.withPacket(index) { entry in
                answered = true
                retransmissionBudget -= 1
                rtp.send(
                    payload: entry.payload[...], timestamp: entry.timestamp, marker: entry.marker,
                    sequence: sequence, retransmission: true, deliver)
            }
            countRetransmission(answered: answered)
        }
    }

    /// The shared packets `range` of `history` on this receiver's own sequence numbers; nothing before its first
    /// keyframe (`startsAtKeyframe` marks the range that may be its first).
    func send(_ range: Range<Int64>, from history: SendHistory, startsAtKeyframe: Bool, _ deliver: ([UInt8]) -> Void) {
        if first == nil {
            guard startsAtKeyframe else { return }
            first = (range.lowerBound, rtp.nextSequence)
        }
        for index in range {
            history.withPacket(index) { entry in
                rtp.send(
                    payload: entry.payload[...], timestamp: entry.timestamp, marker: entry.marker,
                    sequence: sequence(of: index), deliver)
            }
        }
    }
}
