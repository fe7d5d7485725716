import Foundation
import Testing
@testable import Mixing
import TestSupport

@Suite("AudioMixer")
struct AudioMixerTests {
    private let minus20dBFS = pow(10, -20.0 / 20)  // 0.1

    @Test func twoQuietSinesSumExactly() {
        var mixer = AudioMixer()
        var output: [Float] = []
        for block in 0..<10 {
            let a = sineBlock(frequency: 440, amplitude: minus20dBFS, block: block)
            let b = sineBlock(frequency: 660, amplitude: minus20dBFS, block: block, phase: 1)
            mixer.mix([MixInput(samples: a, gain: 1), MixInput(samples: b, gain: 1)], into: &output)
            #expect(output.count == 1920)
            let worst = zip(output, zip(a, b)).map { abs($0 - ($1.0 + $1.1)) }.max() ?? 1
            #expect(worst <= 1e-6)
        }
    }

    @Test func aLoneSpeakerBelowTheThresholdKeepsItsLevelBitForBit() {
        var mixer = AudioMixer()
        var output = [Float](repeating: 9, count: 1920)
        let a = sineBlock(frequency: 1000, amplitude: 0.7)  // −3.1 dBFS, just under the knee
        mixer.mix([MixInput(samples: a, gain: 1)], into: &output)
        #expect(output == a)
    }

    @Test func nineFullScaleSinesNeverExceedOne() {
        var mixer = AudioMixer()
        var output: [Float] = []
        var peak: Float = 0
        for block in 0..<50 {
            let inputs = (0..<9).map { k in
                MixInput(
                    samples: sineBlock(frequency: 200 + 110 * Double(k), amplitude: 1, block: block, phase: .pi / 2),
                    gain: 1)
            }
            mixer.mix(inputs, into: &output)
            peak = max(peak, output.map(\.magnitude).max() ?? 0)
        }
        #expect(peak <= 1.0)
        #expect(peak > 0.9, "the limiter limits, it does not normalise the mix down")
    }

    @Test func silenceStaysSilent() {
        var mixer = AudioMixer()
        var output: [Float] = []
        let zero = [Float](repeating: 0, count: 1920)
        mixer.mix([MixInput(samples: zero, gain: 1), MixInput(samples: zero, gain: 4)], into: &output)
        #expect(output == zero)
        mixer.mix([], into: &output)
        #expect(output == zero)
    }

    @Test func gainZeroMutesAndGainScales() {
        var mixer = AudioMixer()
        var output: [Float] = []
        let loud = sineBlock(frequency: 300, amplitude: 1)
        let quiet = sineBlock(frequency: 500, amplitude: minus20dBFS)
        mixer.mix([MixInput(samples: loud, gain: 0), MixInput(samples: quiet, gain: 1)], into: &output)
        #expect(output == quiet)
        mixer.mix([MixInput(samples: quiet, gain: 2)], into: &output)
        #expect(output == quiet.map { $0 * 2 })
        mixer.mix([MixInput(samples: loud, gain: -1), MixInput(samples: loud, gain: .nan)], into: &output)
        #expect(output.allSatisfy { $0 == 0 })
    }

    @Test func aShortInputIsFollowedBySilence() {
        var mixer = AudioMixer()
        var output: [Float] = []
        mixer.mix([MixInput(samples: [0.25, -0.25, 0.5], gain: 1)], into: &output)
        #expect(Array(output.prefix(4)) == [0.25, -0.25, 0.5, 0])
        #expect(output.dropFirst(3).allSatisfy { $0 == 0 })
    }

    @Test func nonFiniteSamplesAreZeroedWithoutPoisoningLaterBlocks() {
        var mixer = AudioMixer()
        var output: [Float] = []
        var broken = sineBlock(frequency: 440, amplitude: minus20dBFS)
        broken[10] = .nan
        broken[11] = .infinity
        mixer.mix([MixInput(samples: broken, gain: 1)], into: &output)
        #expect(output[10] == 0 && output[11] == 0)
        #expect(output.allSatisfy { $0.isFinite })
        let next = sineBlock(frequency: 440, amplitude: minus20dBFS, block: 1)
        mixer.mix([MixInput(samples: next, gain: 1)], into: &output)
        #expect(output == next)
    }

    @Test func limiterCurveIsSmoothAtTheKneeAndBoundedByOne() {
        let limiter = SoftLimiter()
        let t = limiter.threshold
        #expect(abs(t - 0.70794576) < 1e-6)
        #expect(limiter.curve(t) == t)
        #expect(limiter.curve(0.5) == 0.5)
        // Slope 1 just above the knee, flattening towards 1.0 above it.
        #expect(abs((limiter.curve(t + 1e-3) - t) / 1e-3 - 1) < 0.01)
        #expect(limiter.curve(1.0) < 0.97)
        #expect(limiter.curve(100) <= 1.0)
    }
}
