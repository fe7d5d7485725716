/// The one internal audio format: 48 kHz, interleaved Float32 in [-1, 1], blocks of 20 ms.
///
/// Every decoder produces it and the mixer consumes it, so no resampling happens between them.
public enum AudioFormat {
    public static let sampleRate = 48_000
    /// Samples per channel in one 20 ms block.
    public static let blockFrames = 960
    public static let blockMilliseconds = 20
}
