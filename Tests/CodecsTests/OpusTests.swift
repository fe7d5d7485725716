import Testing
import Foundation
import Media
@testable import Codecs
import TestSupport

@Suite("Opus")
struct OpusTests {
    /// Power of `samples` at `frequency` (Goertzel), normalised so a full-scale sine gives about 0.25·N².
    static func goertzel(_ samples: ArraySlice<Float>, frequency: Double, sampleRate: Double = 48_000) -> Double {
        let coefficient = 2 * cos(2 * Double.pi * frequency / sampleRate)
        var s1 = 0.0, s2 = 0.0
        for x in samples {
            let s0 = Double(x) + coefficient * s1 - s2
            s2 = s1
            s1 = s0
        }
        return s1 * s1 + s2 * s2 - coefficient * s1 * s2
    }

    @Test("a 1 kHz sine survives encode and decode: energy concentrated at 1 kHz, both channels", arguments: [1, 2])
    func roundTrip(channels: Int) throws {
        let encoder = try OpusEncoder(channels: channels, bitrate: 64_000)
        let decoder = try OpusDecoder()
        var block: [Float] = []
        var left: [Float] = []
        for b in 0..<20 {
            let packet = try encoder.encode(sineBlock(amplitude: 0.5, block: b, channels: channels))
            #expect(!packet.isEmpty)
            let frames = try decoder.decode(packet, into: &block)
            #expect(frames == 960)
            #expect(block.count == 1920)
            for i in 0..<frames {
                left.append(block[2 * i])
                #expect(block[2 * i] == block[2 * i + 1] || channels == 2)
            }
        }
        // Skip the first 100 ms (encoder lookahead and start-up); analyse 9600 samples = an integer number of cycles.
        let window = left[4800..<14400]
        let energy = window.reduce(0.0) { $0 + Double($1) * Double($1) }
        let n = Double(window.count)
        let atTone = 2 * Self.goertzel(window, frequency: 1000) / n  // energy in the 1 kHz bin
        let atOther = 2 * Self.goertzel(window, frequency: 3000) / n
        #expect(atTone / energy > 0.9, "1 kHz holds \(atTone / energy) of the energy")
        #expect(atOther / energy < 0.01)
        // −6 dBFS sine: mean square 0.125.
        #expect(abs(energy / n - 0.125) < 0.03, "mean square \(energy / n)")
    }

    @Test("a mono decoder gives one sample per frame: a mono stream as sent, a stereo one downmixed")
    func monoDecoder() throws {
        let stereoEncoder = try OpusEncoder(channels: 2, bitrate: 64_000)
        let stereo = try OpusDecoder(channels: 2)
        let mono = try OpusDecoder(channels: 1)
        #expect(mono.channels == 1)
        var both: [Float] = [], one: [Float] = []
        var maxDifference: Float = 0
        for b in 0..<10 {
            let packet = try stereoEncoder.encode(sineBlock(amplitude: 0.5, block: b, channels: 2))
            #expect(try stereo.decode(packet, into: &both) == 960 && both.count == 1920)
            #expect(try mono.decode(packet, into: &one) == 960 && one.count == 960)
            if b >= 5 {  // past the start-up: the downmix is the mean of the two channels, to coding noise
                for i in 0..<960 {
                    maxDifference = max(maxDifference, abs(one[i] - (both[2 * i] + both[2 * i + 1]) / 2))
                }
            }
        }
        #expect(maxDifference < 0.05, "largest difference \(maxDifference)")
        #expect(try mono.conceal(frames: 960, into: &one) == 960 && one.count == 960)
        #expect(throws: CodecError.self) { try OpusDecoder(channels: 3) }
    }

    @Test("packet loss concealment returns the requested frames in stereo")
    func concealment() throws {
        let encoder = try OpusEncoder(channels: 1, bitrate: 32_000)
        let decoder = try OpusDecoder()
        var block: [Float] = []
        for b in 0..<5 {
            _ = try decoder.decode(try encoder.encode(sineBlock(amplitude: 0.5, block: b, channels: 1)), into: &block)
        }
        #expect(try decoder.conceal(frames: 960, into: &block) == 960)
        #expect(block.count == 1920)
        #expect(block.contains { $0 != 0 })  // concealment continues the tone rather than going silent
        #expect(try decoder.conceal(frames: 480, into: &block) == 480)
        #expect(block.count == 960)
        #expect(throws: CodecError.self) { try decoder.conceal(frames: 0, into: &block) }
        #expect(throws: CodecError.self) { try decoder.conceal(frames: 1_000_000, into: &block) }
    }

    @Test("empty and malformed packets throw an opus CodecError carrying libopus's message")
    func hostilePackets() throws {
        let decoder = try OpusDecoder()
        var block: [Float] = []
        #expect(throws: CodecError.self) { try decoder.decode([], into: &block) }
        do {
            // TOC code 3 (arbitrary frame count) with a frame-count byte of 0 is invalid.
            _ = try decoder.decode([0xFB, 0x00], into: &block)
            Issue.record("malformed packet decoded")
        } catch {
            #expect(error.library == "opus")
            #expect(error.message.contains("corrupted"))
        }
    }

    @Test("the encoder refuses a block of the wrong length")
    func encoderChecksLength() throws {
        let encoder = try OpusEncoder(channels: 2, bitrate: 64_000)
        #expect(throws: CodecError.self) { try encoder.encode([Float](repeating: 0, count: 960)) }
    }
}
