import Forwarding
import Foundation
import Logging
import MediaSources
import RTP

/// A pulled or pushed source's pictures as receivers' slots take them: the H.264 access units its reader prepared
/// (its own stream, or its pictures encoded once), packetized when they are due (RFC 6184, mode 1) into one RTP
/// stream of Cohost's own and handed to a `VideoReceiver` that never decodes; its forwarder feeds the slots as a
/// participant's camera does. The timestamps run on across the reader's reconnects. The room's tick drives it
/// (`Participant.drain`); `lock` keeps the packetizing state.
final class SourceVideo: @unchecked Sendable {
    let stream: LayeredVideo
    private let feed: SourceFeed
    private let lock = NSLock()
    private let packetizer = H264Packetizer()
    private let ssrc: UInt32
    private static let payloadType: UInt8 = 96
    private var sequence: UInt16
    private var units: [SourceFeed.ForwardedUnit] = []
    /// One packet, its payload's storage reused for every packet (the receiver copies what it keeps).
    private var packet: RTPPacket
    /// Feed time → RTP timestamp, per reader connection.
    private var epoch = -1
    private var offset = 0.0
    private var lastTimestamp: UInt32 = 0
    private var lastRatesMs: Int64?

    init(feed: SourceFeed, format: SourceVideoFormat, userId: String, logger: Logger) throws {
        self.feed = feed
        var random = SystemRandomNumberGenerator()
        let ssrc: UInt32 = random.next()
        self.ssrc = ssrc
        sequence = random.next()
        lastTimestamp = random.next()
        packet = RTPPacket(payloadType: Self.payloadType, sequenceNumber: 0, timestamp: 0, ssrc: ssrc)
        packet.payload.reserveCapacity(1500)
        let negotiated = NegotiatedStream(
            kind: .video, ssrc: ssrc, payloadType: Self.payloadType, clockRate: 90_000, codec: "H264",
            fmtp: format.fmtp)
        let key = StreamKey(userId: userId, source: .camera)
        let forwarder = ForwardCodec(name: "H264", fmtp: format.fmtp).map {
            VideoForwarder(key: key, ssrc: ssrc, codec: $0)
        }
        let receiver = try VideoReceiver(
            negotiated, userId: userId, forwarder: forwarder, source: .camera, decodes: false, logger: logger)
        stream = LayeredVideo(layers: [receiver], source: .camera)
    }

    /// Says whether slots show the source and want a keyframe, and sends the units due now.
    func tick(nowMs: Int64) {
        guard let forwarder = stream.forwarders.first else { return }
        feed.setForwarded(forwarder.subscriberCount > 0)
        if forwarder.takeKeyframeRequest(nowMs: nowMs) { feed.requestKeyframe() }
        lock.lock()
        defer { lock.unlock() }
        feed.takeDueUnits(nowMs: nowMs, into: &units)
        let receiver = stream.primary
        for unit in units {
            if unit.epoch != epoch {
                // A new connection's times start again: its first unit follows the last one sent by a frame.
                epoch = unit.epoch
                offset = Double(lastTimestamp &+ 3000) - unit.time * 90_000
            }
            let timestamp = UInt32(truncatingIfNeeded: Int64((unit.time * 90_000 + offset).rounded()))
            lastTimestamp = timestamp
            unit.avcc.withUnsafeBytes { avcc in
                packetizer.packetize(avcc: avcc, parameterSets: unit.parameterSets) { prefix, count, rest, last in
                    packet.payload.removeAll(keepingCapacity: true)
                    if count > 0 { packet.payload.append(prefix.0) }
                    if count > 1 { packet.payload.append(prefix.1) }
                    packet.payload.append(contentsOf: rest)
                    packet.marker = last
                    packet.sequenceNumber = sequence
                    packet.timestamp = timestamp
                    sequence &+= 1
                    receiver.receive(packet, bytes: packet.payload.count + 12, nowMs: nowMs)
                }
            }
        }
        feed.recycle(&units)
        // Its rates, which a sender's receiver reports update once a second (this one has no sender to report to).
        if nowMs - (lastRatesMs ?? 0) >= 1000 {
            lastRatesMs = nowMs
            _ = receiver.receptionReport(nowMs: nowMs)
        }
    }
}
