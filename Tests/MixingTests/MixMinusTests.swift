import Media
import Testing
@testable import Mixing

@Suite struct MixMinusTests {
    func block(_ value: Float) -> [Float] { [Float](repeating: value, count: MixMinus.blockSamples) }

    @Test func removingAVoiceFromTheSumLeavesExactlyTheOthers() {
        let a = block(0.25), b = block(0.125), c = block(-0.5)
        var sum: [Float] = []
        MixMinus.sum([MixInput(samples: a), MixInput(samples: b, gain: 2), MixInput(samples: c)], into: &sum)
        #expect(sum.allSatisfy { $0 == 0 })  // 0.25 + 0.25 - 0.5
        var withoutB: [Float] = []
        MixMinus.remove(b, gain: 2, from: sum, into: &withoutB)
        #expect(withoutB.allSatisfy { $0 == -0.25 })
        var withoutC: [Float] = []
        MixMinus.remove(c, gain: 1, from: sum, into: &withoutC)
        #expect(withoutC.allSatisfy { $0 == 0.5 })
    }

    @Test func aMutedOrNonFiniteGainAddsNothingAndRemovesNothing() {
        var sum: [Float] = []
        MixMinus.sum(
            [
                MixInput(samples: block(0.5), gain: 0), MixInput(samples: block(0.5), gain: .nan),
                MixInput(samples: block(0.25)),
            ], into: &sum)
        #expect(sum.allSatisfy { $0 == 0.25 })
        var out: [Float] = []
        MixMinus.remove(block(0.5), gain: 0, from: sum, into: &out)
        #expect(out == sum)
    }

    @Test func aShortVoiceBlockIsTakenAsFollowedBySilence() {
        var out: [Float] = []
        MixMinus.remove([0.5, 0.5], gain: 1, from: block(1), into: &out)
        #expect(out.count == MixMinus.blockSamples)
        #expect(out[0] == 0.5 && out[1] == 0.5 && out[2] == 1 && out.last == 1)
    }

    @Test func peakScalesWithGainAndMutedIsZero() {
        var b = block(0.01)
        b[7] = -0.2
        #expect(MixMinus.peak(b, gain: 0.5) == 0.1)
        #expect(MixMinus.peak(b, gain: 0) == 0)
        #expect(MixMinus.peak(block(0.001), gain: 1) < MixMinus.presenceThreshold)
    }

    @Test func downmixAveragesTheTwoChannels() {
        var stereo = [Float](repeating: 0, count: MixMinus.blockSamples)
        for i in 0..<AudioFormat.blockFrames {
            stereo[2 * i] = 0.5
            stereo[2 * i + 1] = -0.25
        }
        var mono: [Float] = []
        MixMinus.downmix(stereo, into: &mono)
        #expect(mono.count == AudioFormat.blockFrames)
        #expect(mono.allSatisfy { $0 == 0.125 })
    }

    @Test func theMixerIsTheSumThroughTheLimiter() {
        var mixer = AudioMixer()
        var mixed: [Float] = []
        mixer.mix([MixInput(samples: block(0.9)), MixInput(samples: block(0.9))], into: &mixed)
        var summed: [Float] = []
        MixMinus.sum([MixInput(samples: block(0.9)), MixInput(samples: block(0.9))], into: &summed)
        var limiter = AudioMixer()
        limiter.limit(&summed)
        #expect(mixed == summed)
        #expect(mixed.allSatisfy { $0 <= 1 })
    }
}
