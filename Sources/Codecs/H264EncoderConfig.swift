/// Everything `H264Encoder` needs to open libx264; equal configs produce interchangeable streams.
public struct H264EncoderConfig: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var fps: Int
    public var bitrateKbps: Int
    /// Maximum distance between keyframes, in frames.
    public var keyintFrames: Int
    public var profile: H264Profile
    /// Encoder threads (x264 sliced threads under zerolatency, so no added delay).
    public var threads: Int = 1

    public init(
        width: Int, height: Int, fps: Int, bitrateKbps: Int, keyintFrames: Int,
        profile: H264Profile, threads: Int = 1
    ) {
        self.width = width
        self.height = height
        self.fps = fps
        self.bitrateKbps = bitrateKbps
        self.keyintFrames = keyintFrames
        self.profile = profile
        self.threads = threads
    }
}
