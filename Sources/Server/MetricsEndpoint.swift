import Foundation
import Hummingbird
import Metrics
import Prometheus
import Rooms

/// `GET /metrics`: gauges sampled from the rooms at scrape time, then the Prometheus text of the
/// registry that `cohost serve` bootstrapped swift-metrics with.
struct MetricsEndpoint: Sendable {
    let manager: RoomManager
    let registry: PrometheusCollectorRegistry

    func render() -> String {
        let rooms = manager.allRooms
        Gauge(label: "cohost_rooms").record(rooms.count)
        Gauge(label: "cohost_participants").record(rooms.reduce(0) { $0 + $1.participantCount })
        let c = manager.ingestCounters
        Gauge(label: "cohost_udp_datagrams").record(c.datagrams)
        Gauge(label: "cohost_udp_dropped", dimensions: [("reason", "malformed")]).record(c.malformed)
        Gauge(label: "cohost_udp_dropped", dimensions: [("reason", "unknown_ssrc")]).record(c.unknownSSRC)
        Gauge(label: "cohost_udp_dropped", dimensions: [("reason", "wrong_source")]).record(c.wrongSource)
        Gauge(label: "cohost_udp_dropped", dimensions: [("reason", "srtp")]).record(c.srtpFailures)
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}
