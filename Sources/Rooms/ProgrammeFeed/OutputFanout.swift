import Logging
import Playout
import Publishing
import CohostAPI

/// Where the programme's tags go: the room's outputs, each fed in the order of its interleave policy
/// (`OutputOptions.Interleave`), with their statuses and gauges. Confined to the room's queue; the tag lists are
/// reused between ticks (hot path: one push per encoded frame).
final class OutputFanout {
    private let room: String
    private let rules: OutputRules
    private var outputs = OutputTable()
    /// One per interleave policy; each output takes the tags of its own.
    private var strict: TagInterleaver<FLVTag>
    private var lowLatency: TagInterleaver<FLVTag>
    private var strictReady: [FLVTag] = []
    private var lowLatencyReady: [FLVTag] = []
    /// Each output's gauges, made at its first status (see `OutputGauges`).
    private var gauges: [String: OutputGauges] = [:]

    init(room: String, hasVideo: Bool, rules: OutputRules) {
        self.room = room
        self.rules = rules
        strict = TagInterleaver(hasVideo: hasVideo)
        lowLatency = TagInterleaver(hasVideo: hasVideo, lowLatency: true)
        strictReady.reserveCapacity(64)
        lowLatencyReady.reserveCapacity(64)
    }

    var isEmpty: Bool { outputs.isEmpty }

    func infos(bitrateKbps: Int) -> [OutputInfo] { outputs.infos(bitrateKbps: bitrateKbps) }
    var specs: [OutputSpec] { outputs.specs }
    var hlsStream: HLSStream? { outputs.hlsStream }

    /// Creates an output for `spec`, starts it with the stream's `headers` and returns what GET reports of it.
    func add(
        _ spec: OutputSpec, headers: [FLVTag], bitrateKbps: Int, logger: Logger, nowMs: Int64,
        onKeyframeNeeded: @escaping KeyframeRequestHandler,
        onStateChange: @escaping @Sendable (String, String, OutputStateChange) -> Void
    )
        throws(RoomError) -> OutputInfo
    {
        let output = try outputs.add(
            spec, room: room, rules: rules, logger: logger, nowMs: nowMs, onKeyframeNeeded: onKeyframeNeeded,
            onStateChange: onStateChange)
        output.start(headers: headers)
        return outputs.info(id: output.id, bitrateKbps: bitrateKbps)
            ?? OutputInfo(output, status: OutputStatus(), bitrateKbps: bitrateKbps)
    }

    /// Stops and forgets an output; false when there is none with that id. When the last one goes, what the
    /// interleavers hold is dropped: a later output must not get it stale.
    func remove(id: String) -> Bool {
        guard let output = outputs.remove(id: id) else { return false }
        output.stop()
        forget(id)
        if outputs.isEmpty {
            strict.flush(into: &strictReady)
            lowLatency.flush(into: &lowLatencyReady)
            strictReady.removeAll(keepingCapacity: true)
            lowLatencyReady.removeAll(keepingCapacity: true)
        }
        return true
    }

    /// Every output reconnects with `headers` from now on.
    func replaceHeaders(_ headers: [FLVTag]) {
        for entry in outputs.entries { entry.output.replaceHeaders(headers) }
    }

    /// Adds a tag to both interleavers.
    func push(_ tag: FLVTag) {
        strict.push(tag, into: &strictReady)
        lowLatency.push(tag, into: &lowLatencyReady)
    }

    /// Hands every tag now in order to the outputs of its policy (`send` only appends to an output's queue).
    func deliver() {
        guard !strictReady.isEmpty || !lowLatencyReady.isEmpty else { return }
        for entry in outputs.entries {
            switch entry.output.options.interleave {
            case .strict: for tag in strictReady { entry.output.send(tag) }
            case .lowLatency: for tag in lowLatencyReady { entry.output.send(tag) }
            }
        }
        strictReady.removeAll(keepingCapacity: true)
        lowLatencyReady.removeAll(keepingCapacity: true)
    }

    /// Every output's status over the interval since the last call; also records the gauges.
    func sampleStatuses(nowMs: Int64, bitrateKbps: Int) -> [(output: any Output, status: OutputStatus)] {
        let samples = outputs.sampleStatuses(nowMs: nowMs)
        for sample in samples {
            let id = sample.output.id
            let gauge = gauges[id] ?? OutputGauges(room: room, output: id)
            gauges[id] = gauge
            gauge.record(output: sample.output, status: sample.status, bitrateKbps: bitrateKbps)
        }
        return samples
    }

    /// The deepest queue (ms) among the connected outputs, for the adaptive controllers.
    func connectedPressureMs() -> Int? { outputs.connectedPressureMs() }

    /// Sends what is buffered and stops every output cleanly (each flushes its queue, bounded).
    func stop() {
        strict.flush(into: &strictReady)
        lowLatency.flush(into: &lowLatencyReady)
        deliver()
        // Each stop may wait seconds for a stuck connection: all at once, so a room stops in one output's time.
        let all = outputs.removeAll()
        allAtOnce(all) { $0.stop() }
        for output in all { forget(output.id) }
    }

    private func forget(_ id: String) {
        gauges[id] = nil
        OutputMetrics.remove(room: room, output: id)
    }
}
