import Foundation

/// The text of a live media playlist (RFC 8216bis; docs/hls.md says which tags each player reads). Low-Latency HLS
/// when the options have parts: server control with blocking reload, the part target, the parts of the segments
/// within three target durations of the end, and a preload hint for the next part.
struct HLSPlaylist {
    let options: HLSOptions
    let segments: [HLSStream.Segment]
    let firstMSN: Int
    let discontinuitySequence: Int
    /// Appended to every URI ("token=…"), or nil.
    let query: String?

    var text: String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:6", "#EXT-X-TARGETDURATION:\(options.targetDuration)"]
        let partTarget = options.partSeconds
        if let partTarget {
            lines.append(
                "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=\(Self.seconds(Int64((3 * partTarget * 1000).rounded())))"
            )
            lines.append("#EXT-X-PART-INF:PART-TARGET=\(Self.seconds(options.partMs ?? 0))")
        }
        lines.append("#EXT-X-MEDIA-SEQUENCE:\(firstMSN)")
        if discontinuitySequence > 0 { lines.append("#EXT-X-DISCONTINUITY-SEQUENCE:\(discontinuitySequence)") }
        lines.append("#EXT-X-INDEPENDENT-SEGMENTS")
        // Parts are listed for the segments that end within three target durations of the playlist's end.
        var partsFrom = segments.count
        if partTarget != nil {
            var tail: Int64 = 0
            let horizon = Int64(3 * options.targetDuration * 1000)
            for index in segments.indices.reversed() {
                partsFrom = index
                tail += segments[index].durationMs ?? segments[index].parts.reduce(0) { $0 + $1.durationMs }
                if tail >= horizon { break }
            }
        }
        var currentInit: Int?
        for (index, segment) in segments.enumerated() {
            // A segment being written is listed only by its parts, and only in Low-Latency HLS.
            guard segment.durationMs != nil || (partTarget != nil && !segment.parts.isEmpty) else { continue }
            if segment.discontinuity && index > 0 { lines.append("#EXT-X-DISCONTINUITY") }
            if segment.initIndex != currentInit {
                lines.append("#EXT-X-MAP:URI=\"\(uri("init\(segment.initIndex).mp4"))\"")
                currentInit = segment.initIndex
            }
            lines.append("#EXT-X-PROGRAM-DATE-TIME:\(Self.date(segment.programDate))")
            if partTarget != nil, index >= partsFrom {
                for (p, part) in segment.parts.enumerated() {
                    let independent = part.independent ? ",INDEPENDENT=YES" : ""
                    lines.append(
                        "#EXT-X-PART:DURATION=\(Self.seconds(part.durationMs)),URI=\"\(uri("p\(segment.msn).\(p).m4s"))\"\(independent)"
                    )
                }
            }
            if let duration = segment.durationMs {
                lines.append("#EXTINF:\(Self.seconds(duration)),")
                lines.append(uri("s\(segment.msn).m4s"))
            }
        }
        if partTarget != nil, let open = segments.last, open.durationMs == nil {
            lines.append("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"\(uri("p\(open.msn).\(open.parts.count).m4s"))\"")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func uri(_ name: String) -> String { query.map { "\(name)?\($0)" } ?? name }

    /// Milliseconds as decimal seconds with three places ("0.300", "2.000").
    static func seconds(_ ms: Int64) -> String {
        let whole = ms / 1000
        let rest = ms % 1000
        return "\(whole)." + String(repeating: "0", count: rest < 10 ? 2 : rest < 100 ? 1 : 0) + "\(rest)"
    }

    /// ISO 8601 in UTC with milliseconds, as EXT-X-PROGRAM-DATE-TIME wants.
    static func date(_ date: Date) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var t = time_t(ms / 1000)
        var parts = tm()
        gmtime_r(&t, &parts)
        func pad(_ n: Int32, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(ms % 1000), 3))Z"
    }
}
