import Foundation
import Logging
import Publishing
import CohostAPI

/// A programme's outputs in creation order, each with its rate meter and last status.
///
/// Confined to the room's queue, like the programme that owns it.
struct OutputTable {
    struct Entry {
        let output: any Output
        /// What it was made from (the room's stored definition lists it).
        let spec: OutputSpec
        var meter: OutputRateMeter
        /// The status of the last interval (zero until the first status tick).
        var lastStatus = OutputStatus()
        /// Video dropped by the queue policy as of the last control tick.
        var droppedVideoAtLastTick = 0
    }

    /// In creation order; iterated per tag by the programme (an array, so no lookups on the hot path).
    private(set) var entries: [Entry] = []
    private var nextNumber = 1

    var count: Int { entries.count }
    var specs: [OutputSpec] { entries.map(\.spec) }
    var isEmpty: Bool { entries.isEmpty }

    /// Creates and registers the output for `spec` (not started yet); ids are o1, o2, … per room.
    mutating func add(
        _ spec: OutputSpec, room: String, rules: OutputRules, logger: Logger, nowMs: Int64,
        onKeyframeNeeded: @escaping KeyframeRequestHandler,
        onStateChange: @escaping @Sendable (String, String, OutputStateChange) -> Void
    ) throws(RoomError) -> any Output {
        // The room's state, not the request, is what is wrong: 409, like room_full.
        guard entries.count < RoomLimits.maxOutputs else {
            throw .conflict("limit_exceeded", "at most \(RoomLimits.maxOutputs) outputs per room")
        }
        let id = "o\(nextNumber)"
        let url = spec.url
        let output: any Output
        if let hls = spec.hls {
            guard hlsStream == nil else { throw .conflict("limit_exceeded", "a room has at most one HLS output") }
            var directory: String?
            if hls.vod {
                guard let recordings = rules.recordings else {
                    throw .badRequest("invalid_output", "an HLS recording (vod) needs a recordings directory")
                }
                directory = "\(recordings.path)/hls-\(room)-\(Self.stamp())-\(id)"
            }
            let playlist = "/v1/rooms/\(room)/hls/index.m3u8"
            output = HLSOutput(
                id: id, url: playlist, hls: hls, options: spec.options, recordingDirectory: directory,
                quota: rules.recordings?.quota, logger: logger,
                onKeyframeNeeded: onKeyframeNeeded
            ) { change in
                onStateChange(id, playlist, change)
            }
            nextNumber += 1
            entries.append(Entry(output: output, spec: spec, meter: OutputRateMeter(startMs: nowMs)))
            return output
        }
        do {
            output = try makeOutput(
                id: id, url: url, options: spec.options, rules: rules, logger: logger,
                onKeyframeNeeded: onKeyframeNeeded
            ) { change in
                onStateChange(id, url, change)
            }
        } catch .forbiddenPath(_, let reason) {
            throw .badRequest("output_path_forbidden", reason)
        } catch .forbiddenHost(_, let reason) {
            throw .badRequest("output_host_forbidden", reason)
        } catch {
            throw .badRequest("invalid_output", error.description)
        }
        nextNumber += 1
        entries.append(Entry(output: output, spec: spec, meter: OutputRateMeter(startMs: nowMs)))
        return output
    }

    /// What the room's HLS output serves, if it has one.
    var hlsStream: HLSStream? {
        for entry in entries { if let hls = entry.output as? HLSOutput { return hls.stream } }
        return nil
    }

    /// The UTC second, for names of recordings ("20261128-221530").
    static func stamp(_ date: Date = Date()) -> String {
        var t = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(
            format: "%04d%02d%02d-%02d%02d%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday, parts.tm_hour,
            parts.tm_min, parts.tm_sec)
    }

    /// Unregisters an output (the caller stops it).
    mutating func remove(id: String) -> (any Output)? {
        guard let index = entries.firstIndex(where: { $0.output.id == id }) else { return nil }
        return entries.remove(at: index).output
    }

    mutating func removeAll() -> [any Output] {
        defer { entries.removeAll() }
        return entries.map(\.output)
    }

    /// Samples every output's rates since the previous call.
    mutating func sampleStatuses(nowMs: Int64) -> [(output: any Output, status: OutputStatus)] {
        var out: [(output: any Output, status: OutputStatus)] = []
        out.reserveCapacity(entries.count)
        for i in entries.indices {
            let status = entries[i].meter.sample(entries[i].output.stats, nowMs: nowMs)
            entries[i].lastStatus = status
            out.append((entries[i].output, status))
        }
        return out
    }

    /// What the adaptive controllers react to, once per control tick: the largest queue span among
    /// connected outputs, where an output that dropped video since the last tick counts as full (its drops
    /// keep its queue short, which would otherwise hide the congestion). Nil when no output is connected:
    /// a reconnecting output's queue says nothing about the link.
    mutating func connectedPressureMs() -> Int? {
        var deepest: Int?
        for i in entries.indices {
            let output = entries[i].output
            let stats = output.stats
            let dropped = stats.droppedVideoTags > entries[i].droppedVideoAtLastTick
            entries[i].droppedVideoAtLastTick = stats.droppedVideoTags
            guard output.state == .connected else { continue }
            let queueMs = dropped ? max(stats.queueMs, output.options.queueLimitMs) : stats.queueMs
            deepest = max(deepest ?? 0, queueMs)
        }
        return deepest
    }

    func infos(bitrateKbps: Int) -> [OutputInfo] {
        entries.map { OutputInfo($0.output, status: $0.lastStatus, bitrateKbps: bitrateKbps) }
    }

    func info(id: String, bitrateKbps: Int) -> OutputInfo? {
        entries.first { $0.output.id == id }.map {
            OutputInfo($0.output, status: $0.lastStatus, bitrateKbps: bitrateKbps)
        }
    }
}
