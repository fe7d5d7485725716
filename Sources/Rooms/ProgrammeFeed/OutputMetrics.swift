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

    static func remove(room: String, output: String) {
        let dimensions = [("room", room), ("output", output)]
        for gauge in gauges { Gauge(label: gauge.name, dimensions: dimensions).destroy() }
        Gauge(label: connectedGauge, dimensions: dimensions).destroy()
    }
}

/// One output's gauges, made once and kept by the programme: making a `Gauge` goes through the metrics
/// factory (a registry lookup, label arrays and a handle) every time, which `record` at each status interval
/// would otherwise repeat for all ten gauges.
struct OutputGauges {
    private let values: [Gauge]
    private let connected: Gauge

    init(room: String, output: String) {
        let dimensions = [("room", room), ("output", output)]
        values = OutputMetrics.gauges.map { Gauge(label: $0.name, dimensions: dimensions) }
        connected = Gauge(label: OutputMetrics.connectedGauge, dimensions: dimensions)
    }

    func record(output: any Output, status: OutputStatus, bitrateKbps: Int) {
        let stats = output.stats
        for (gauge, metric) in zip(values, OutputMetrics.gauges) {
            gauge.record(metric.value(status, stats, bitrateKbps))
        }
        connected.record(output.state == .connected ? 1 : 0)
    }
}
