import Foundation
import Testing
@testable import Mixing
import TestSupport

@Suite("VoiceMeter")
struct VoiceMeterTests {
    /// Feeds `blocks` blocks of a 1 kHz sine (a whole number of periods per block) and returns the meter.
    private func metered(amplitude: Double, gain: Float = 1, blocks: Int = 5) -> VoiceMeter {
        var meter = VoiceMeter()
        for block in 0..<blocks {
            meter.add(block: sineBlock(frequency: 1000, amplitude: amplitude, block: block), gain: gain)
        }
        return meter
    }

    /// RMS 0.1 is −20 dBov; a sine's RMS is amplitude/√2.
    private let minus20dBovSine = 0.1 * 2.0.squareRoot()

    @Test func aMinus20dBovSineMetersMinus20dBovAndLevel67() {
        let meter = metered(amplitude: minus20dBovSine)
        #expect(abs(meter.dBov - -20) < 0.01, "dBov \(meter.dBov)")
        #expect(meter.level == 67)
    }

    @Test func aFullScaleSineIsMinus3dBov() {
        let meter = metered(amplitude: 1)
        #expect(abs(meter.dBov - -3.0103) < 0.01, "dBov \(meter.dBov)")
        #expect(meter.level == 95)
    }

    @Test func aFullScaleSquareWaveIs0dBovAndLevel100() {
        var meter = VoiceMeter()
        let square = (0..<1920).map { i -> Float in (i / 2 / 24) % 2 == 0 ? 1 : -1 }  // 1 kHz
        for _ in 0..<5 { meter.add(block: square, gain: 1) }
        #expect(meter.dBov == 0)
        #expect(meter.level == 100)
    }

    @Test func silenceMetersLevel0() {
        var meter = VoiceMeter()
        for _ in 0..<5 { meter.add(block: [Float](repeating: 0, count: 1920), gain: 1) }
        #expect(meter.dBov == -.infinity)
        #expect(meter.level == 0)
        #expect(meter.windowsCompleted == 1)
    }

    @Test func halfGainLowersTheLevelBy6dB() {
        let full = metered(amplitude: minus20dBovSine)
        let half = metered(amplitude: minus20dBovSine, gain: 0.5)
        let drop = full.dBov - half.dBov
        #expect(abs(drop - 6.0206) < 0.01, "dropped \(drop) dB")
        #expect(half.level == 57)  // −26.02 dBov → 56.6
    }

    @Test func aMutedUserMetersSilenceHoweverLoud() {
        let muted = metered(amplitude: 1, gain: 0)
        #expect(muted.dBov == -.infinity && muted.level == 0)
        let broken = metered(amplitude: 1, gain: .nan)
        #expect(broken.level == 0)
    }

    @Test func theValueOnlyChangesWhenTheFifthBlockCompletesAWindow() {
        var meter = VoiceMeter()
        for block in 0..<4 {
            let completed = meter.add(block: sineBlock(frequency: 1000, amplitude: 1, block: block), gain: 1)
            #expect(completed == false)
            #expect(meter.level == 0 && meter.windowsCompleted == 0)
        }
        let fifth = meter.add(block: sineBlock(frequency: 1000, amplitude: 1, block: 4), gain: 1)
        #expect(fifth)
        #expect(meter.level == 95 && meter.windowsCompleted == 1)
        // The next window is silent: the loud value is held for four more blocks, then replaced.
        let zero = [Float](repeating: 0, count: 1920)
        for _ in 0..<4 {
            let completed = meter.add(block: zero, gain: 1)
            #expect(completed == false)
        }
        #expect(meter.level == 95)
        let tenth = meter.add(block: zero, gain: 1)
        #expect(tenth)
        #expect(meter.dBov == -.infinity && meter.windowsCompleted == 2)
        #expect(meter.level == 75)  // the reading falls 12 dB: −15.01 dBov
    }

    /// A meter's ballistics: the reading follows a louder window at once and falls 12 dB (20 points) a window,
    /// so a voice that stops reads 95, 75, 55, 35, 15, then 0; one quiet window inside a tone is a dip.
    @Test func theLevelFallsTwelveDecibelsAWindowAndRisesAtOnce() {
        var meter = VoiceMeter()
        let zero = [Float](repeating: 0, count: 1920)
        var block = 0
        func window(_ loud: Bool) -> Int {
            for _ in 0..<5 {
                meter.add(block: loud ? sineBlock(frequency: 1000, amplitude: 1, block: block) : zero, gain: 1)
                block += 1
            }
            return meter.level
        }
        #expect(window(true) == 95)
        #expect((0..<6).map { _ in window(false) } == [75, 55, 35, 15, 0, 0])
        #expect(meter.heldDBov == -.infinity)
        #expect(window(true) == 95)
        #expect(window(false) == 75)
        #expect(window(true) == 95)
        // The active speaker goes by the window itself, not the falling reading.
        _ = window(false)
        #expect(meter.dBov == -.infinity && meter.level == 75)
    }

    @Test func oneLoudBlockInAWindowCountsForAFifthOfTheEnergy() {
        var meter = VoiceMeter()
        meter.add(block: sineBlock(frequency: 1000, amplitude: 1, block: 0), gain: 1)
        for _ in 0..<4 { meter.add(block: [Float](repeating: 0, count: 1920), gain: 1) }
        // −3.01 dBov over one fifth of the window: −3.01 − 6.99 = −10 dBov.
        #expect(abs(meter.dBov - -10) < 0.01, "dBov \(meter.dBov)")
    }

    @Test func aShortBlockIsPaddedWithSilenceAndNaNsCountAsSilence() {
        var short = VoiceMeter()
        var broken = VoiceMeter()
        let square = [Float](repeating: 1, count: 1920)
        var half = square
        for i in 960..<1920 { half[i] = .nan }
        for _ in 0..<5 {
            short.add(block: Array(square.prefix(960)), gain: 1)
            broken.add(block: half, gain: 1)
        }
        #expect(abs(short.dBov - -3.0103) < 0.001)
        #expect(abs(broken.dBov - -3.0103) < 0.001)
    }

    @Test func levelMapsMinus60To0Linearly() {
        #expect(VoiceMeter.level(dBov: -.infinity) == 0)
        #expect(VoiceMeter.level(dBov: -80) == 0)
        #expect(VoiceMeter.level(dBov: -60) == 0)
        #expect(VoiceMeter.level(dBov: -30) == 50)
        #expect(VoiceMeter.level(dBov: -0.2) == 100)  // 99.67
        #expect(VoiceMeter.level(dBov: 6) == 100)
        #expect(VoiceMeter.level(dBov: .nan) == 0)
    }

    @Test func aGainAbove1CanReadAbove0dBovButLevelStaysAt100() {
        let boosted = metered(amplitude: 1, gain: 4)
        #expect(abs(boosted.dBov - (-3.0103 + 12.0412)) < 0.01)
        #expect(boosted.level == 100)
    }
}
