import Metrics
import Publishing

/// Per-output gauges labelled {room, output}, recorded at each status interval (the same numbers as
/// the `output_status` event) and destroyed when the output goes, so stopped outputs leave the scrape.
enum OutputMetrics {
    static let gauges: [(name: String, value: @Sendable (OutputStatus, OutputStats, Int) -> Double)] = [
        ("cohost_output_video_fps", { status, _, _ in status.videoFps }),
        ("cohost_output_audio_fps", { status, _, _ in status.audioFps }),
        ("cohost_output_kbps", { status, _, _ in Double(status.kbps) }),
        ("cohost_output_dropped_video_frames", { status, _, _ in Double(status.droppedVideoFrames) }),
        ("cohost_output_dropped_audio_frames", { status, _, _ in Double(status.droppedAudioFrames) }),
        ("cohost_output_queue_ms", { status, _, _ in Double(status.queueMs) }),
        ("cohost_output_bitrate_kbps", { _, _, bitrate in Double(bitrate) }),
        ("cohost_output_reconnects", { _, stats, _ in Double(stats.reconnects) }),
        ("cohost_output_sent_bytes", { _, stats, _ in Double(stats.sentBytes) }),
    ]
    /// 1 while connected, 0 otherwise.
    static let connectedGauge = "cohost_output_connected"

    static func record(room: String, output: any Output, status: OutputStatus, bitrateKbps: Int) {
        let dimensions = [("room", room), ("output", output.id)]
        let stats = output.stats
        for gauge in gauges {
            Gauge(label: gauge.name, dimensions: dimensions).record(gauge.value(status, stats, bitrateKbps))
        }
        Gauge(label: connectedGauge, dimensions: dimensions).record(output.state == .connected ? 1 : 0)
    }

    static func remove(room: String, output: String) {
        let dimensions = [("room", room), ("output", output)]
        for gauge in gauges { Gauge(label: gauge.name, dimensions: dimensions).destroy() }
        Gauge(label: connectedGauge, dimensions: dimensions).destroy()
    }
}
