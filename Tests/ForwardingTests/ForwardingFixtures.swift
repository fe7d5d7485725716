import Codecs
import Forwarding
import Media
import RTP

/// Real encoder output, packetized as a sender would: the packets forwarding tests rewrite.
struct SentPacket {
    var sequence: UInt16
    var timestamp: UInt32
    var marker: Bool
    var payload: [UInt8]
}

enum Fixtures {
    /// `frames` VP8 frames of a flat `luma` picture, the first a keyframe (and every `keyEvery`-th), as RTP
    /// payloads numbered from `firstSequence`, 3000 ticks apart (30 fps), with 15-bit picture ids from
    /// `firstPictureID`.
    static func vp8(
        frames: Int, keyEvery: Int = 1000, luma: UInt8 = 80, firstSequence: UInt16, firstTimestamp: UInt32,
        firstPictureID: UInt16, maxPayload: Int = 300
    ) throws -> [SentPacket] {
        let encoder = try VP8Encoder(width: 160, height: 96, fps: 30, bitrateKbps: 400)
        var packetizer = VP8Packetizer(maxPayloadSize: maxPayload, firstPictureID: firstPictureID)
        var frame = VideoFrame(width: 160, height: 96)
        var packets: [SentPacket] = []
        var sequence = firstSequence
        for i in 0..<frames {
            for j in frame.y.indices { frame.y[j] = luma &+ UInt8(truncatingIfNeeded: (j + i * 3) % 40) }
            let timestamp = firstTimestamp &+ UInt32(i * 3000)
            for encoded in try encoder.encode(frame, pts: Int64(i), forceKeyframe: i % keyEvery == 0) {
                encoded.data.withUnsafeBytes { data in
                    packetizer.packetize(data) { d, piece, last in
                        packets.append(
                            SentPacket(
                                sequence: sequence, timestamp: timestamp, marker: last,
                                payload: [d.0, d.1, d.2, d.3] + Array(piece)))
                        sequence &+= 1
                    }
                }
            }
        }
        return packets
    }

    /// `frames` H.264 access units (constrained baseline, x264), parameter sets before each keyframe.
    static func h264(frames: Int, keyEvery: Int = 1000, firstSequence: UInt16) throws -> [SentPacket] {
        let encoder = try H264Encoder(
            config: H264EncoderConfig(
                width: 160, height: 96, fps: 30, bitrateKbps: 400, keyintFrames: 300, profile: .baseline))
        let packetizer = H264Packetizer(maxPayloadSize: 300)
        var frame = VideoFrame(width: 160, height: 96)
        var packets: [SentPacket] = []
        var sequence = firstSequence
        for i in 0..<frames {
            for j in frame.y.indices { frame.y[j] = UInt8(truncatingIfNeeded: (j + i * 5) % 200) }
            _ = try encoder.encode(frame, pts: Int64(i), forceKeyframe: i % keyEvery == 0) { avcc, key, _, _ in
                packetizer.packetize(avcc: avcc, parameterSets: key ? encoder.parameterSets : nil) {
                    prefix, count, rest, last in
                    var payload: [UInt8] = []
                    if count > 0 { payload.append(prefix.0) }
                    if count > 1 { payload.append(prefix.1) }
                    payload.append(contentsOf: rest)
                    packets.append(
                        SentPacket(sequence: sequence, timestamp: UInt32(i * 3000), marker: last, payload: payload))
                    sequence &+= 1
                }
            }
        }
        return packets
    }

    /// Whether a payload starts a frame (VP8 S = 1, partition 0).
    static func startsFrame(_ payload: [UInt8]) -> Bool { payload[0] & 0x10 != 0 && payload[0] & 0x07 == 0 }

    /// The 15-bit picture id of a VP8 payload written by `VP8Packetizer`.
    static func pictureID(_ payload: [UInt8]) -> UInt16 { UInt16(payload[2] & 0x7F) << 8 | UInt16(payload[3]) }
}
