import Media

/// The sound a participant hears: the room's mix without their own voice (a "mix-minus", as broadcast
/// desks and Janus AudioBridge call it).
///
/// The room sums every voice once (`sum`); a talker's block is that sum with their own voice taken out again
/// (`remove`), then limited by a limiter of their own, so one loud listener's mix never rides another's gain.
/// Whoever is not in the sum at that instant hears the programme's own limited mix: one encode serves them
/// all (docs/return-path.md). Pure functions on the caller's buffers: nothing allocates.
public enum MixMinus {
    /// Floats in one block: 960 frames × 2 channels.
    public static let blockSamples = AudioFormat.blockFrames * 2

    /// Peak (linear) above which a block counts as the participant's voice being in the mix: −50 dBFS,
    /// below any speech and above the hiss of a quiet microphone after Opus.
    public static let presenceThreshold: Float = 0.003_162

    /// `out` = Σ inputs × gain, unlimited (resized to 1920 floats if needed). Muted (gain 0) or non-finite
    /// gains add nothing.
    public static func sum(_ inputs: [MixInput], into out: inout [Float]) {
        let n = blockSamples
        if out.count != n { out = [Float](repeating: 0, count: n) }
        out.withUnsafeMutableBufferPointer { dst in
            for i in 0..<n { dst[i] = 0 }
            for input in inputs {
                let gain = input.gain
                guard gain > 0, gain.isFinite else { continue }
                input.samples.withUnsafeBufferPointer { src in
                    let count = min(n, src.count)
                    if gain == 1 {
                        for i in 0..<count { dst[i] += src[i] }
                    } else {
                        for i in 0..<count { dst[i] += src[i] * gain }
                    }
                }
            }
        }
    }

    /// `out` = `full` − `own` × `gain`: the sum without one voice, exactly as if it had not been added.
    public static func remove(_ own: [Float], gain: Float, from full: [Float], into out: inout [Float]) {
        let n = blockSamples
        if out.count != n { out = [Float](repeating: 0, count: n) }
        let g = gain > 0 && gain.isFinite ? gain : 0
        out.withUnsafeMutableBufferPointer { dst in
            full.withUnsafeBufferPointer { all in
                own.withUnsafeBufferPointer { mine in
                    let count = min(n, all.count)
                    let ownCount = min(count, mine.count)
                    for i in 0..<ownCount { dst[i] = all[i] - mine[i] * g }
                    for i in ownCount..<count { dst[i] = all[i] }
                    for i in count..<n { dst[i] = 0 }
                }
            }
        }
    }

    /// The block's largest |sample| × `gain`: whether a voice is in the mix (`presenceThreshold`).
    public static func peak(_ samples: [Float], gain: Float) -> Float {
        guard gain > 0, gain.isFinite else { return 0 }
        var peak: Float = 0
        samples.withUnsafeBufferPointer { src in
            for x in src { peak = max(peak, abs(x)) }
        }
        return peak * gain
    }

    /// Interleaved stereo → mono (the mean of the two channels) into `out` (resized to 960 floats if needed).
    public static func downmix(_ stereo: [Float], into out: inout [Float]) {
        let frames = AudioFormat.blockFrames
        if out.count != frames { out = [Float](repeating: 0, count: frames) }
        out.withUnsafeMutableBufferPointer { dst in
            stereo.withUnsafeBufferPointer { src in
                let count = min(frames, src.count / 2)
                for i in 0..<count { dst[i] = (src[2 * i] + src[2 * i + 1]) * 0.5 }
                for i in count..<frames { dst[i] = 0 }
            }
        }
    }
}
