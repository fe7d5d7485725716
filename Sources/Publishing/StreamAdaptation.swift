/// The room's adaptive controllers working together: under pressure the bitrate gives way first and
/// the frame rate only once the bitrate is at its minimum; on recovery the frame rate comes back first,
/// then the bitrate. Either controller may be absent (not enabled for the room). Pure, time injected.
public struct StreamAdaptation: Sendable {
    public private(set) var bitrate: AdaptiveBitrateController?
    public private(set) var frameRate: FrameRateController?

    public init(bitrate: AdaptiveBitrateController?, frameRate: FrameRateController?) {
        self.bitrate = bitrate
        self.frameRate = frameRate
    }

    public var isEnabled: Bool { bitrate != nil || frameRate != nil }

    /// One control tick with the largest queue span among connected outputs (nil when none is connected).
    /// Returns what changed.
    public mutating func update(queueMs: Int?, nowMs: Int64) -> (bitrateKbps: Int?, fps: Int?) {
        // Decide from the state before this tick, so both never step on the same tick.
        let fpsMayDrop = bitrate?.isAtMinimum ?? true
        let bitrateMayRise = frameRate?.isAtMaximum ?? true
        let newBitrate = bitrate?.update(queueMs: queueMs, nowMs: nowMs, mayIncrease: bitrateMayRise)
        let newFps = frameRate?.update(queueMs: queueMs, nowMs: nowMs, mayDecrease: fpsMayDrop)
        return (newBitrate, newFps)
    }

    /// See `FrameRateController.shouldEncode(canvasIndex:)`; always true without a frame-rate controller.
    public func shouldEncode(canvasIndex: Int64) -> Bool {
        frameRate?.shouldEncode(canvasIndex: canvasIndex) ?? true
    }
}
