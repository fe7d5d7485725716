import Foundation
import RTP
import SRTP
import Synchronization

/// One stream Cohost sends to one participant: its SSRC and payload type, the sequence numbers, the counts its
/// sender reports carry, and the SRTP context protecting it. Confined to the room's queue, except the counters
/// (`sent`), which metrics read from anywhere. The packet buffers are reused: sending allocates nothing.
final class OutboundRTP {
    let ssrc: UInt32
    let payloadType: UInt8
    let clockRate: Int
    private var srtp: SRTPSession?
    /// A WebRTC receiver's keys: `srtp` is made from them once its handshake is done; until then nothing is sent.
    private let lateKeys: TransportKeys?
    /// The SDES packet with this stream's CNAME, written once: every sender report carries it.
    private let sourceDescription: [UInt8]
    /// The next sequence number; starts at a random value (RFC 3550 §5.1).
    private(set) var nextSequence = UInt16.random(in: 0...UInt16.max)
    /// Added to every media timestamp, so the stream's clock starts at a random value too.
    let timestampBase = UInt32.random(in: 0...UInt32.max)
    private var plain: [UInt8] = []
    private var protected: [UInt8] = []
    private var report: [UInt8] = []
    /// The RTP timestamp of the last packet sent: sender reports map it to wall-clock time.
    private(set) var lastTimestamp: UInt32?
    /// Packets and payload octets sent (what an SR reports), and the protect failures.
    private let counters = Mutex<(packets: Int, bytes: Int, octets: Int, failures: Int)>((0, 0, 0, 0))

    /// `lateKeys`: a WebRTC participant's, known once its DTLS handshake is done: nothing is sent before.
    init(_ offer: ReturnOffer, clockRate: Int, cname: String, lateKeys: TransportKeys?) throws(SRTPError) {
        ssrc = offer.ssrc
        payloadType = offer.payloadType
        self.clockRate = clockRate
        sourceDescription = SourceDescription(chunks: [
            .init(
                source: offer.ssrc,
                items: [.init(type: SourceDescription.Item.cnameType, value: Array(cname.utf8.prefix(255)))])
        ]).serialized()
        if let keys = offer.srtp {
            srtp = try SRTPSession(profile: keys.profile, masterKeyAndSalt: keys.key, direction: .outbound)
        } else {
            srtp = nil
        }
        self.lateKeys = lateKeys
        plain.reserveCapacity(1500)
        protected.reserveCapacity(1500)
    }

    var sent: (packets: Int, bytes: Int) { counters.withLock { ($0.packets, $0.bytes) } }

    /// Writes a packet (media `timestamp` before the base is added) and passes its wire form to `send`. It takes
    /// the next sequence number, or `sequence` when given (a stream whose numbers follow a shared packet index).
    /// A retransmission is not counted in the octets of the sender reports (RFC 3550 counts each payload once).
    @discardableResult
    func send(
        payload: ArraySlice<UInt8>, timestamp: UInt32, marker: Bool, sequence: UInt16? = nil,
        retransmission: Bool = false, _ send: ([UInt8]) -> Void
    ) -> UInt16 {
        let number = sequence ?? nextSequence
        if !retransmission { nextSequence = number &+ 1 }
        let stamp = timestampBase &+ timestamp
        RTPPacket.write(
            payloadType: payloadType, marker: marker, sequenceNumber: number, timestamp: stamp, ssrc: ssrc,
            payload: payload, into: &plain)
        if !retransmission { lastTimestamp = stamp }
        transmit(plain, payloadBytes: retransmission ? 0 : payload.count, send)
        return number
    }

    /// Whether the stream may send: always, except a WebRTC stream before its handshake (keyed here once done).
    private func keyed() -> Bool {
        guard srtp == nil, let lateKeys else { return true }
        srtp = lateKeys.session(.outbound)
        return srtp != nil
    }

    private func transmit(_ packet: [UInt8], payloadBytes: Int, _ send: ([UInt8]) -> Void) {
        guard keyed() else { return }
        if let srtp {
            do { try srtp.protectRTP(packet, into: &protected) } catch {
                counters.withLock { $0.failures += 1 }
                return
            }
            send(protected)
            counters.withLock {
                $0.packets += 1
                $0.bytes += protected.count
                $0.octets += payloadBytes
            }
        } else {
            send(packet)
            counters.withLock {
                $0.packets += 1
                $0.bytes += packet.count
                $0.octets += payloadBytes
            }
        }
    }

    /// A sender report (with the CNAME, as a compound must carry it) mapping `ntp` to the RTP time
    /// `rtpTimestamp` (before the base is added), passed to `send`; nothing before the first packet.
    func sendReport(ntp: UInt64, rtpTimestamp: UInt32, _ send: ([UInt8]) -> Void) {
        guard lastTimestamp != nil, keyed() else { return }
        let (packets, octets) = counters.withLock { ($0.packets, $0.octets) }
        report.removeAll(keepingCapacity: true)
        SenderReport(
            ssrc: ssrc, ntpTimestamp: ntp, rtpTimestamp: timestampBase &+ rtpTimestamp,
            packetCount: UInt32(truncatingIfNeeded: packets), octetCount: UInt32(truncatingIfNeeded: octets)
        ).append(to: &report)
        report.append(contentsOf: sourceDescription)
        if let srtp {
            do { try srtp.protectRTCP(report, into: &protected) } catch {
                counters.withLock { $0.failures += 1 }
                return
            }
            send(protected)
        } else {
            send(report)
        }
    }
}
