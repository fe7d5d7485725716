import Media
import Layout
import Codecs

/// Bounds on everything a client may ask of a room; each refusal names the limit.
public enum RoomLimits {
    public static let canvasWidth = 16...3840
    public static let canvasHeight = 16...2160
    public static let fps = 1...60
    public static let holdMs = 100...10_000
    public static let videoBitrateKbps = 64...20_000
    public static let keyintSeconds = 1...10
    public static let audioBitrateKbps = 32...320
    public static let maxParticipants = 1...64
    public static let maxOutputs = 8
    public static let statusIntervalMs = 1000...60_000
    public static let maxIngestBitrate = 100...20_000
    /// A participant's pictures: up to 4096×2304 (16:9 4K-class, H.264 level 5.1) in either orientation.
    public static let maxVideoSide = 16...4096
    public static let maxVideoPixels = 4096 * 2304

    static let returnVideoSide = 64...1920
    static let returnVideoPixels = 1920 * 1080
    static let returnVideoBitrateKbps = 100...4000

    static func check(_ c: RoomConfig) throws(RoomError) {
        func within(_ value: Int, _ range: ClosedRange<Int>, _ field: String) throws(RoomError) {
            guard range.contains(value) else {
                throw .badRequest(
                    "limit_exceeded", "\(field) must be within \(range.lowerBound)...\(range.upperBound), got \(value)")
            }
        }
        try within(c.canvas.width, canvasWidth, "canvas.width")
        try within(c.canvas.height, canvasHeight, "canvas.height")
        guard c.canvas.width % 2 == 0, c.canvas.height % 2 == 0 else {
            throw .badRequest("limit_exceeded", "canvas.width and canvas.height must be even (I420)")
        }
        try within(c.canvas.fps, fps, "canvas.fps")
        try within(c.canvas.holdMs, holdMs, "canvas.holdMs")
        try within(c.video.bitrateKbps, videoBitrateKbps, "video.bitrate (kbps)")
        try within(c.video.minBitrateKbps, videoBitrateKbps.lowerBound...c.video.bitrateKbps, "video.minBitrate (kbps)")
        try within(c.video.keyintSeconds, keyintSeconds, "video.keyint (s)")
        try within(c.audio.bitrateKbps, audioBitrateKbps, "audio.bitrate (kbps)")
        try within(c.maxParticipants, maxParticipants, "maxParticipants")
        try within(c.statusIntervalMs, statusIntervalMs, "statusIntervalMs")
        try within(c.maxIngestBitrate, maxIngestBitrate, "maxIngestBitrate")
        try within(c.maxVideoSize.width, maxVideoSide, "maxVideoSize.width")
        try within(c.maxVideoSize.height, maxVideoSide, "maxVideoSize.height")
        guard c.maxVideoSize.width * c.maxVideoSize.height <= maxVideoPixels else {
            throw .badRequest("limit_exceeded", "maxVideoSize must be at most \(maxVideoPixels) pixels (4096×2304)")
        }
        if let view = c.returnVideo {
            try within(view.width, returnVideoSide, "returnVideo.width")
            try within(view.height, returnVideoSide, "returnVideo.height")
            guard view.width % 2 == 0, view.height % 2 == 0 else {
                throw .badRequest("limit_exceeded", "returnVideo.width and returnVideo.height must be even (I420)")
            }
            guard view.width * view.height <= returnVideoPixels else {
                throw .badRequest(
                    "limit_exceeded", "returnVideo must be at most \(returnVideoPixels) pixels (1920×1080)")
            }
            try within(view.fps, 1...c.canvas.fps, "returnVideo.fps (at most canvas.fps)")
            try within(view.bitrate, returnVideoBitrateKbps, "returnVideo.bitrate (kbps)")
        }
        if c.hasPicture {
            // The H.264 profile-level limits (Table A-1). Within the ranges above every setting fits level
            // 6.2, so this only bites if those ranges grow; it comes after them so their messages win.
            do {
                try H264Level.check(
                    width: c.canvas.width, height: c.canvas.height, fps: c.canvas.fps,
                    bitrateKbps: c.video.bitrateKbps, profile: c.video.profile)
            } catch {
                throw .badRequest("limit_exceeded", error.message)
            }
        }
        guard c.audio.channels == 1 || c.audio.channels == 2 else {
            throw .badRequest("limit_exceeded", "audio.channels must be 1 or 2")
        }
        guard YUVColor(hex: c.canvas.background) != nil else {
            throw .badRequest("invalid_canvas", "canvas.background must be #RRGGBB")
        }
        guard YUVColor(hex: c.canvas.placeholder) != nil else {
            throw .badRequest("invalid_canvas", "canvas.placeholder must be #RRGGBB")
        }
        guard c.outputs.count <= maxOutputs else {
            throw .badRequest("limit_exceeded", "at most \(maxOutputs) outputs per room")
        }
        for output in c.outputs {
            do { try output.options.validate() } catch { throw .badRequest("invalid_output", error.message) }
        }
        do { try c.layout.validate(canvasWidth: c.canvas.width, canvasHeight: c.canvas.height) } catch {
            throw .badRequest("invalid_layout", error.message)
        }
        try Self.checkLabelsDrawable(c.layout)
    }

    /// A layout asking for labels on a machine without the fonts is refused, not shown without them.
    static func checkLabelsDrawable(_ layout: Layout) throws(RoomError) {
        let asks = [layout.label].compactMap { $0 } + layout.regions.compactMap(\.label)
        guard asks.contains(where: { !$0.hidden }), let why = RoomLabels.unavailable else { return }
        throw .badRequest("invalid_layout", "labels cannot be drawn on this server: \(why)")
    }
}
