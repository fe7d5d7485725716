import Media

/// One participant's 20 ms block for the mix.
///
/// `samples` is interleaved stereo at 48 kHz (1920 floats). Holding an `[Float]` costs no copy: arrays are
/// shared copy-on-write, so a participant's reused block buffer goes in by reference. A shorter array is
/// treated as followed by silence; extra samples are ignored.
public struct MixInput: Sendable {
    public var samples: [Float]
    /// Linear gain, 0 = muted (0.0–4.0 from the API; anything not finite or negative counts as muted).
    public var gain: Float

    public init(samples: [Float], gain: Float = 1) {
        self.samples = samples
        self.gain = gain
    }
}

/// Sums participants' blocks and limits the result, like GStreamer's audiomixer plus a limiter:
/// it never waits for anyone (the clock decides when a block is mixed) and never normalises by the number of
/// inputs, so a lone speaker comes out bit-for-bit at its level as long as it stays under the threshold.
///
/// One per room, used from that room's queue. No allocation in steady state: `output` is reused and only
/// resized when it is not 1920 floats.
public struct AudioMixer: Sendable {
    /// Floats in one block: 960 frames × 2 channels.
    public static let blockSamples = AudioFormat.blockFrames * 2

    /// The limiter; its state (gain recovery) carries across blocks.
    public var limiter = SoftLimiter()

    public init() {}

    /// Sums inputs × gain into `output` (resized to 1920 if needed), then the soft-knee limiter so no
    /// |sample| exceeds 1.0.
    public mutating func mix(_ inputs: [MixInput], into output: inout [Float]) {
        MixMinus.sum(inputs, into: &output)
        limit(&output)
    }

    /// The limiter alone, on a block already summed (`MixMinus.sum`).
    public mutating func limit(_ block: inout [Float]) {
        block.withUnsafeMutableBufferPointer { limiter.process(stereo: $0) }
    }
}
