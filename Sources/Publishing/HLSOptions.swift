/// How an HLS output cuts the programme: segments of about `segmentSeconds` (each starting at a keyframe the output
/// asks for), Low-Latency HLS parts of at most `partSeconds` (nil: plain HLS), and how many segments the playlist
/// keeps. `isPublic` serves it without a token; `vod` also writes the show into the recordings directory.
public struct HLSOptions: Sendable, Equatable {
    public var segmentSeconds: Double
    public var partSeconds: Double?
    public var windowSegments: Int
    public var isPublic: Bool
    public var vod: Bool

    public static let segmentRange = 1.0...10.0
    public static let partRange = 0.1...2.0
    public static let windowRange = 3...30

    public init(
        segmentSeconds: Double = 2, partSeconds: Double? = 0.333, windowSegments: Int = 6, isPublic: Bool = false,
        vod: Bool = false
    ) {
        self.segmentSeconds = segmentSeconds
        self.partSeconds = partSeconds
        self.windowSegments = windowSegments
        self.isPublic = isPublic
        self.vod = vod
    }

    /// Why these options cannot be used, nil when they can.
    public var problem: String? {
        guard Self.segmentRange.contains(segmentSeconds) else { return "segmentSeconds is 1 to 10" }
        if let partSeconds {
            guard Self.partRange.contains(partSeconds) else { return "partSeconds is 0.1 to 2 (or 0: plain HLS)" }
            guard partSeconds * 2 <= segmentSeconds else { return "partSeconds is at most half of segmentSeconds" }
        }
        guard Self.windowRange.contains(windowSegments) else { return "windowSegments is 3 to 30" }
        return nil
    }

    var segmentMs: Int64 { Int64((segmentSeconds * 1000).rounded()) }
    var partMs: Int64? { partSeconds.map { Int64(($0 * 1000).rounded()) } }
    /// EXT-X-TARGETDURATION: every segment, rounded to the nearest second, is at most this.
    var targetDuration: Int { Int(segmentSeconds.rounded(.up)) }
}
