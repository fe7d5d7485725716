import Foundation
import Media

/// One participant's loudness: RMS over 100 ms windows (5 blocks of 20 ms), in dBov.
///
/// 0 dBov is the RMS of a full-scale square wave (RMS 1.0), so a full-scale sine reads −3.01 dBov.
/// The meter measures what the participant contributes to the mix: each block is scaled by the same gain
/// the mixer applies (`MixInput.gain`), so a muted participant meters silence. Both channels of the
/// interleaved stereo block count alike.
///
/// The published value (`dBov`, `level`) changes only when a window completes; in between it holds the
/// last complete window, so the room can read every meter whenever it sends `voice_levels` (every 200 ms)
/// and always gets a whole 100 ms measurement. `dBov` is that window's measurement (what the active speaker
/// and the speaking ring go by); `level` has a meter's ballistics: it rises at once and falls at most
/// `fallPerWindowDB` a window, so one quiet window in a sentence reads as a dip, not a drop to 0, and a
/// voice that stops fades out over half a second. One meter per participant, used from the room's queue.
/// `add` allocates nothing: the state is a few numbers.
public struct VoiceMeter: Sendable {
    /// Blocks in one window: 5 × 20 ms = 100 ms.
    public static let blocksPerWindow = 5
    /// The dBov that maps to level 0; anything quieter is level 0 too.
    public static let floorDBov = -60.0
    /// How far `level`'s reading falls in one window (12 dB: 20 points of 100), at most.
    public static let fallPerWindowDB = 12.0

    /// Sum of squared (gain-scaled) samples in the window being filled.
    private var sumOfSquares: Double = 0
    /// Blocks added to the window being filled.
    private var blocksInWindow = 0

    /// RMS of the last complete window in dBov; −∞ for digital silence and before the first window.
    public private(set) var dBov: Double = -.infinity
    /// The falling reading behind `level`: the window's `dBov`, or the last reading less `fallPerWindowDB`.
    public private(set) var heldDBov: Double = -.infinity
    /// Windows completed since creation (lets a caller see that a new value was published).
    public private(set) var windowsCompleted = 0

    public init() {}

    /// The meter's reading, 0…100: `heldDBov` linear from −60 (0) to 0 (100), clamped.
    public var level: Int { Self.level(dBov: heldDBov) }

    /// Maps dBov to the 0…100 scale of `voice_levels`, rounded to the nearest integer.
    public static func level(dBov: Double) -> Int {
        guard dBov > floorDBov else { return 0 }  // also −∞ and NaN
        guard dBov < 0 else { return 100 }
        return Int(((dBov - floorDBov) / -floorDBov * 100).rounded())
    }

    /// Adds one 20 ms block (interleaved stereo, `AudioMixer.blockSamples` floats) scaled by `gain`.
    ///
    /// A shorter block counts as followed by silence and extra samples are ignored, as in the mixer;
    /// a gain that is 0, negative or not finite counts as muted, and a non-finite sample as silence, so
    /// one broken packet cannot poison the window. Returns true when this block completed a window (the
    /// published `dBov` was just updated): the moment to feed an `ActiveSpeakerDetector`.
    @discardableResult
    public mutating func add(block: UnsafeBufferPointer<Float>, gain: Float) -> Bool {
        if gain > 0, gain.isFinite {
            let count = min(block.count, AudioMixer.blockSamples)
            // Accumulate the block in Float (1920 terms cannot lose meaningful precision for a meter),
            // then scale by gain² once. Eight lanes at a time: this runs per participant per 20 ms block,
            // and the one-by-one sum with its finiteness test was 2 % of a voice room's CPU (the compiler
            // cannot vectorise a sequential float sum). NaN and ±∞ samples are masked out, as before.
            var lanes = SIMD8<Float>()
            let limit = SIMD8<Float>(repeating: .greatestFiniteMagnitude)
            var i = 0
            if let base = block.baseAddress {
                let raw = UnsafeRawPointer(base)
                while i + 8 <= count {
                    let v = raw.loadUnaligned(fromByteOffset: i * MemoryLayout<Float>.stride, as: SIMD8<Float>.self)
                    let finite = (v .<= limit) .& (v .>= -limit)  // false for NaN and ±∞
                    lanes += (v * v).replacing(with: 0, where: .!finite)
                    i += 8
                }
            }
            var blockSum = lanes.sum()
            while i < count {
                let x = block[i]
                if x.isFinite { blockSum += x * x }
                i += 1
            }
            sumOfSquares += Double(blockSum) * Double(gain) * Double(gain)
        }
        blocksInWindow += 1
        guard blocksInWindow == Self.blocksPerWindow else { return false }
        let meanSquare = sumOfSquares / Double(Self.blocksPerWindow * AudioMixer.blockSamples)
        // 10·log10(mean square) = 20·log10(RMS); log10(0) is −∞, which is silence.
        dBov = 10 * log10(meanSquare)
        let fallen = heldDBov - Self.fallPerWindowDB
        // A reading stuck at +∞ (a window of huge samples) would never fall: it is replaced by the next window.
        heldDBov = dBov >= fallen || !(fallen > Self.floorDBov) || !fallen.isFinite ? dBov : fallen
        windowsCompleted &+= 1
        sumOfSquares = 0
        blocksInWindow = 0
        return true
    }

    /// `add(block:gain:)` for an array (a participant's reused block buffer); no copy is made.
    @discardableResult
    public mutating func add(block: [Float], gain: Float) -> Bool {
        block.withUnsafeBufferPointer { add(block: $0, gain: gain) }
    }

    /// `add(block:gain:)` for the same input the mixer gets.
    @discardableResult
    public mutating func add(_ input: MixInput) -> Bool {
        add(block: input.samples, gain: input.gain)
    }
}
