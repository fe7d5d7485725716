import Foundation
import Media

/// One 20 ms block (960 frames at 48 kHz) of a sine, interleaved over `channels`, `block` blocks from the start;
/// `cosine` peaks at t = 0.
public func sineBlock(
    frequency: Double = 1000, amplitude: Double, block: Int = 0, phase: Double = 0,
    channels: Int = 2, cosine: Bool = false
) -> [Float] {
    var out = [Float](repeating: 0, count: 960 * channels)
    for i in 0..<960 {
        let angle = 2 * Double.pi * frequency * Double(block * 960 + i) / 48_000 + phase
        let s = Float(amplitude * (cosine ? cos(angle) : sin(angle)))
        for c in 0..<channels { out[i * channels + c] = s }
    }
    return out
}

/// A frame whose columns before `split` are `left` and from `split` on are `right` (split even); one colour
/// without `right`.
public func solidFrame(
    _ width: Int, _ height: Int, _ left: YUVColor, right: YUVColor? = nil,
    split: Int = 0
) -> VideoFrame {
    var f = VideoFrame(width: width, height: height, color: left)
    guard let right else { return f }
    for y in 0..<height { for x in split..<width { f.y[y * f.strideY + x] = right.y } }
    for y in 0..<f.chromaHeight {
        for x in (split / 2)..<f.strideUV {
            f.u[y * f.strideUV + x] = right.u
            f.v[y * f.strideUV + x] = right.v
        }
    }
    return f
}

/// An RTP packet's bytes (version 2, no padding, extension or CSRCs): `payloadType` (Opus's 111 by default),
/// `seq`, `timestamp`, `ssrc`, then `payload`.
public func rtpPacketBytes(
    payloadType: UInt8 = 111, seq: UInt16 = 1, timestamp: UInt32 = 0, ssrc: UInt32,
    payload: [UInt8]
) -> [UInt8] {
    [
        0x80, payloadType & 0x7F, UInt8(seq >> 8), UInt8(seq & 0xFF),
        UInt8(timestamp >> 24), UInt8(timestamp >> 16 & 0xFF), UInt8(timestamp >> 8 & 0xFF), UInt8(timestamp & 0xFF),
        UInt8(ssrc >> 24), UInt8(ssrc >> 16 & 0xFF), UInt8(ssrc >> 8 & 0xFF), UInt8(ssrc & 0xFF),
    ] + payload
}
