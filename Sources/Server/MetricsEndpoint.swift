import Foundation
import Hummingbird
import Metrics
import Prometheus
import Rooms
import CohostAPI

/// `GET /metrics`: gauges sampled from the rooms at scrape time, then the Prometheus text of the
/// registry that `cohost serve` bootstrapped swift-metrics with.
struct MetricsEndpoint: Sendable {
    /// Whether `authorization` is `Bearer <token>`, compared in constant time (a timing leak would let the token
    /// be guessed byte by byte).
    static func authorizes(_ authorization: String?, token: String) -> Bool {
        guard let authorization, authorization.hasPrefix("Bearer ") else { return false }
        let given = Array(authorization.utf8.dropFirst(7))
        let expected = Array(token.utf8)
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for i in 0..<expected.count { difference |= expected[i] ^ (i < given.count ? given[i] : 0) }
        return difference == 0
    }

    let manager: RoomManager
    private let emittedStages = EmittedStreams()
    let registry: PrometheusCollectorRegistry
    /// The label sets of per-stream gauges emitted last time: a stream that is gone has its gauges
    /// destroyed, so departed participants do not linger in the scrape.
    private let emitted = EmittedStreams()
    private let emittedReturns = EmittedStreams()
    private let emittedSlots = EmittedStreams()
    let connections: ConnectionLimit?
    let iceTCP: ICETCPListener?

    init(
        manager: RoomManager, registry: PrometheusCollectorRegistry, connections: ConnectionLimit? = nil,
        iceTCP: ICETCPListener? = nil
    ) {
        self.manager = manager
        self.registry = registry
        self.connections = connections
        self.iceTCP = iceTCP
    }

    static let streamGauges: [(name: String, value: @Sendable (StreamReport) -> Double)] = [
        ("cohost_stream_packets", { Double($0.packets) }),
        ("cohost_stream_bytes", { Double($0.bytes) }),
        ("cohost_stream_lost", { Double($0.lost) }),
        ("cohost_stream_jitter_ms", { $0.jitterMs }),
        ("cohost_stream_nacks_sent", { Double($0.nacksSent) }),
        ("cohost_stream_keyframe_requests", { Double($0.keyframeRequests) }),
        ("cohost_stream_decode_errors", { Double($0.decodeErrors) }),
        ("cohost_stream_frames_decoded", { Double($0.framesDecoded) }),
        ("cohost_stream_fps", { Double($0.fps) }),
        ("cohost_stream_kbps", { Double($0.kbps) }),
        ("cohost_stream_concealed_ms", { Double($0.concealedMs) }),
        ("cohost_stream_underruns", { Double($0.underruns) }),
        ("cohost_stream_trimmed_ms", { Double($0.trimmedMs) }),
        ("cohost_stream_picture_buffers_replaced", { Double($0.pictureBuffersReplaced) }),
        ("cohost_stream_frames_too_large", { Double($0.framesTooLarge) }),
        ("cohost_stream_frames_over_budget", { Double($0.framesOverBudget) }),
        ("cohost_stream_frames_queue_full", { Double($0.framesQueueFull) }),
        ("cohost_stream_decode_budget_exceeded", { Double($0.decodeBudgetExceeded) }),
        ("cohost_stream_decode_cpu_ms", { Double($0.decodeCpuMs) }),
    ]

    /// What each participant's return streams sent and what its receiver reports (absent values as -1).
    static let returnGauges: [(name: String, value: @Sendable (ReturnReport) -> Double)] = [
        ("cohost_return_packets", { Double($0.packetsSent) }),
        ("cohost_return_bytes", { Double($0.bytesSent) }),
        ("cohost_return_loss_percent", { Double($0.lossPercent ?? -1) }),
        ("cohost_return_cumulative_lost", { Double($0.cumulativeLost ?? -1) }),
        ("cohost_return_jitter_ms", { $0.jitterMs ?? -1 }),
        ("cohost_return_round_trip_ms", { Double($0.roundTripMs ?? -1) }),
    ]

    /// Each receive slot: what it sent, whether it is paused, and what its receiver reports (absent values as -1).
    static let slotGauges: [(name: String, value: @Sendable (SlotInfo) -> Double)] = [
        ("cohost_slot_packets", { Double($0.packets) }),
        ("cohost_slot_bytes", { Double($0.bytes) }),
        ("cohost_slot_bitrate_bps", { Double($0.bitrate) }),
        ("cohost_slot_paused", { $0.paused ? 1 : 0 }),
        ("cohost_slot_retransmitted", { Double($0.retransmitted) }),
        ("cohost_slot_switches", { Double($0.switches) }),
        ("cohost_slot_loss_percent", { Double($0.lossPercent) }),
        ("cohost_slot_round_trip_ms", { Double($0.roundTripMs ?? -1) }),
        ("cohost_slot_estimated_bitrate_bps", { Double($0.estimatedBitrate ?? -1) }),
    ]

    func render() -> String {
        let rooms = manager.allRooms
        Gauge(label: "cohost_rooms").record(rooms.count)
        Gauge(label: "cohost_participants").record(rooms.reduce(0) { $0 + $1.participantCount })
        Gauge(label: "cohost_ssrc_bindings").record(manager.ssrcBindings)
        Gauge(label: "cohost_clock_skipped_ticks").record(manager.clockSkippedTicks)
        Gauge(label: "cohost_store_errors").record(manager.storeErrors)
        Gauge(label: "cohost_sources").record(rooms.reduce(0) { $0 + $1.sourceCount })
        let refused = manager.pushesRefused
        Gauge(label: "cohost_pushes_refused", dimensions: [("protocol", "srt")]).record(refused.srt)
        Gauge(label: "cohost_pushes_refused", dimensions: [("protocol", "rtmp")]).record(refused.rtmp)
        if let connections {
            Gauge(label: "cohost_http_connections").record(connections.openConnections)
            Gauge(label: "cohost_http_connections_refused").record(connections.refusedConnections)
            Gauge(label: "cohost_http_connections_refused_per_address").record(
                connections.refusedPerAddressConnections)
            Gauge(label: "cohost_http_requests_timed_out").record(connections.deadlines.timedOut)
            Gauge(label: "cohost_http_requests_refused_reserve").record(connections.refusedReserveRequests)
        }
        let c = manager.ingestCounters
        Gauge(label: "cohost_udp_datagrams").record(c.datagrams)
        Gauge(label: "cohost_udp_dropped", dimensions: [("reason", "malformed")]).record(c.malformed)
        Gauge(label: "cohost_udp_dropped", dimensions: [("reason", "unknown_ssrc")]).record(c.unknownSSRC)
        Gauge(label: "cohost_udp_dropped", dimensions: [("reason", "wrong_source")]).record(c.wrongSource)
        Gauge(label: "cohost_udp_dropped", dimensions: [("reason", "srtp")]).record(c.srtpFailures)
        let w = manager.webRTCCounters
        Gauge(label: "cohost_webrtc_transports").record(w.transports)
        Gauge(label: "cohost_webrtc_consent_checks", dimensions: [("result", "sent")]).record(w.consentChecks)
        Gauge(label: "cohost_webrtc_consent_checks", dimensions: [("result", "answered")]).record(w.consentAnswers)
        Gauge(label: "cohost_webrtc_handshakes", dimensions: [("result", "completed")]).record(w.handshakesCompleted)
        Gauge(label: "cohost_webrtc_handshakes", dimensions: [("result", "failed")]).record(w.handshakesFailed)
        Gauge(label: "cohost_udp_dropped", dimensions: [("reason", "stun_ignored")]).record(w.stunIgnored)
        Gauge(label: "cohost_udp_dropped", dimensions: [("reason", "dtls_unknown_source")]).record(w.dtlsUnknownSource)
        if let t = iceTCP?.snapshot {
            Gauge(label: "cohost_ice_tcp_connections").record(t.open)
            Gauge(label: "cohost_ice_tcp_accepted").record(t.accepted)
            Gauge(label: "cohost_ice_tcp_frames").record(t.frames)
            for (reason, count) in [
                ("timeout", t.closedTimeout), ("invalid", t.closedInvalid), ("limit", t.closedLimit),
                ("peer", t.closedPeer), ("idle", t.closedIdle),
            ] {
                Gauge(label: "cohost_ice_tcp_closed", dimensions: [("reason", reason)]).record(count)
            }
            Gauge(label: "cohost_ice_tcp_send_dropped").record(t.sendDropped)
        }
        // A participant's camera, screen share and simulcast layers are streams of the same kind: told apart by
        // source and RID (empty when there is none).
        Self.record(
            rooms.flatMap { room in
                room.streamReports().flatMap { user, streams in
                    streams.map { ([room.name, user, $0.kind, $0.source ?? "", $0.rid ?? ""], $0) }
                }
            }, Self.streamGauges, emitted: emitted, labels: ["room", "user", "kind", "source", "rid"])
        Self.record(
            rooms.flatMap { room in
                room.canvasCPU.map { cpu in
                    [
                        ([room.name, "composite"], cpu.compositeMs), ([room.name, "encode"], cpu.encodeMs),
                        ([room.name, "view"], cpu.viewMs),
                    ]
                } ?? []
            }, [("cohost_room_canvas_cpu_ms", { @Sendable in $0 })], emitted: emittedStages, labels: ["room", "stage"])
        Self.record(
            rooms.flatMap { room in
                room.returnReports().flatMap { user, streams in streams.map { ([room.name, user, $0.kind], $0) } }
            }, Self.returnGauges, emitted: emittedReturns)
        Self.record(
            rooms.flatMap { room in
                room.slotReports().flatMap { user, slots in slots.map { ([room.name, user, $0.mid], $0) } }
            }, Self.slotGauges, emitted: emittedSlots, labels: ["room", "user", "mid"])
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}

extension MetricsEndpoint {
    /// Records `gauges` for each report under its (room, user, kind) labels, and destroys the gauges of label sets
    /// `emitted` saw last time and that are gone.
    static func record<Report>(
        _ reports: [(labels: [String], report: Report)],
        _ gauges: [(name: String, value: @Sendable (Report) -> Double)],
        emitted: EmittedStreams, labels names: [String] = ["room", "user", "kind"]
    ) {
        var current: Set<[String]> = []
        for (labels, report) in reports {
            current.insert(labels)
            for gauge in gauges {
                Gauge(label: gauge.name, dimensions: Array(zip(names, labels))).record(gauge.value(report))
            }
        }
        for gone in emitted.replace(with: current) {
            for gauge in gauges { Gauge(label: gauge.name, dimensions: Array(zip(names, gone))).destroy() }
        }
    }
}

/// The label sets emitted by the previous scrape.
final class EmittedStreams: @unchecked Sendable {
    private let lock = NSLock()
    private var last: Set<[String]> = []

    /// Stores `current`; returns the sets that were there before and are not any more.
    func replace(with current: Set<[String]>) -> Set<[String]> {
        lock.withLock {
            defer { last = current }
            return last.subtracting(current)
        }
    }
}
