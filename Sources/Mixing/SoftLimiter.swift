import Foundation

/// A peak limiter with a soft knee and a hard ceiling of 1.0, linked across the two stereo channels.
///
/// The envelope follows the frame peak instantly (no overshoot is possible without lookahead otherwise),
/// holds it for `holdSeconds` and then falls back exponentially (`releaseSeconds`). The hold is what keeps
/// a loud crowd from pumping: many voices at once have a steady loudness but peaks that come and go, and a
/// gain that followed each peak down and up again would swing the level audibly (1.6 dB between 100 ms
/// windows for 9 full-scale sines with a 50 ms release and no hold). Held, the gain rides the loudest peak
/// of the last moment and stays still. The output gain maps the envelope `e` through
/// `f(e) = e` below the threshold and `f(e) = T + (1 − T)·tanh((e − T)/(1 − T))` above it: continuous with
/// slope 1 at the threshold (the smooth knee) and approaching, never passing, 1.0. Since |x| ≤ e, every
/// output |x·f(e)/e| ≤ f(e) ≤ 1. Below the threshold the gain is exactly 1, so quiet mixes pass unchanged.
/// Riding a gain instead of shaping each sample keeps the waveform, so a loud mix pumps rather than distorts.
public struct SoftLimiter: Sendable {
    /// ≈ −3 dBFS.
    public let threshold: Float
    public let releaseSeconds: Double
    public let holdSeconds: Double
    private let releaseCoefficient: Float
    private let holdFrames: Int
    private var envelope: Float = 0
    /// Frames the envelope stays at its last peak before it starts to fall.
    private var holdLeft = 0

    public init(
        thresholdDBFS: Double = -3, releaseSeconds: Double = 0.15, holdSeconds: Double = 1.0,
        sampleRate: Int = 48_000
    ) {
        threshold = Float(pow(10, thresholdDBFS / 20))
        self.releaseSeconds = releaseSeconds
        self.holdSeconds = holdSeconds
        releaseCoefficient = Float(exp(-1 / (releaseSeconds * Double(sampleRate))))
        holdFrames = max(0, Int(holdSeconds * Double(sampleRate)))
    }

    /// The knee curve: the output peak for an input peak `e` ≥ 0.
    public func curve(_ e: Float) -> Float {
        guard e > threshold else { return e }
        let room = 1 - threshold
        return min(1, threshold + room * tanh((e - threshold) / room))
    }

    /// Limits interleaved stereo in place.
    public mutating func process(stereo buffer: UnsafeMutableBufferPointer<Float>) {
        var e = envelope
        // The envelope stays put while held (most of a loud stretch): the gain, a tanh, is computed again
        // only when it moves.
        var gainFor: Float = -1
        var g: Float = 1
        var i = 0
        while i + 1 < buffer.count {
            let l = buffer[i], r = buffer[i + 1]
            let peak = max(l.magnitude, r.magnitude)
            guard peak.isFinite else {
                // A NaN or infinity from a broken input must not poison the envelope for good.
                buffer[i] = 0
                buffer[i + 1] = 0
                i += 2
                continue
            }
            if peak >= e {
                e = peak
                holdLeft = holdFrames
            } else if holdLeft > 0 {
                holdLeft -= 1
            } else {
                e = max(peak, e * releaseCoefficient)
            }
            if e > threshold {
                if e != gainFor {
                    g = curve(e) / e
                    gainFor = e
                }
                // The clamp only catches the last rounding bit when curve(e) is 1.
                buffer[i] = min(1, max(-1, l * g))
                buffer[i + 1] = min(1, max(-1, r * g))
            }
            i += 2
        }
        // Flush to zero after long silence: denormals are slow on x86.
        envelope = e < 1e-20 ? 0 : e
    }
}
