import Foundation

/// Tone detection for tests: the Goertzel algorithm's power at one frequency, normalised so a
/// full-scale sine at that frequency gives about 0.25 whatever the block length, and silence gives 0.
public enum Goertzel {
    public static func power(samples: [Float], sampleRate: Int, frequency: Double) -> Double {
        power(count: samples.count, sampleRate: sampleRate, frequency: frequency) { Double(samples[$0]) }
    }

    /// Int16 samples are scaled to [-1, 1) first.
    public static func power(samples: [Int16], sampleRate: Int, frequency: Double) -> Double {
        power(count: samples.count, sampleRate: sampleRate, frequency: frequency) { Double(samples[$0]) / 32768 }
    }

    private static func power(count: Int, sampleRate: Int, frequency: Double, sample: (Int) -> Double) -> Double {
        guard count > 0, sampleRate > 0 else { return 0 }
        let coefficient = 2 * cos(2 * Double.pi * frequency / Double(sampleRate))
        var previous = 0.0, beforePrevious = 0.0
        for index in 0..<count {
            let current = sample(index) + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        let magnitudeSquared =
            previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        let n = Double(count)
        return magnitudeSquared / (n * n)
    }
}
