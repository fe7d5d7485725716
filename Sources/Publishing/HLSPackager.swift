import Foundation

/// Cuts the programme's tags into CMAF parts and segments for an `HLSStream` (and, for a VOD copy, a
/// `HLSRecording`). Segments start at keyframes: the first at or within half a frame of `segmentSeconds` ends one;
/// when none comes then, the packager asks for one (a segment is then a frame or two longer than the target, which
/// the target duration's rounding allows). Parts end before the frame that would take them past `partSeconds`, so no part is
/// longer than the part target; a part starting with a keyframe is independent. Without video, any audio frame
/// starts a part. Timestamps are the tags' own; a jump (backwards, or more than 10 s ahead) ends the segment and
/// starts a new init section after an `EXT-X-DISCONTINUITY`.
///
/// Confined to its output's worker thread.
final class HLSPackager {
    private let options: HLSOptions
    private let stream: HLSStream
    private let headers: [FLVTag]
    private let hasVideo: Bool
    private let requestKeyframe: () -> Void
    private let now: () -> Date
    private let recording: HLSRecording?
    private let sink = ByteSink(reserving: 256 * 1024)
    private var muxer: ProgrammeMuxer?
    private var initIndex = -1
    private var fragment: [UInt8] = []

    /// Waiting for the first keyframe (of the stream or after a discontinuity).
    private var starting = true
    private var discontinuity = false
    private var clock: (ms: Int64, date: Date)?
    private var segmentStartMs: Int64 = 0
    private var partStartMs: Int64 = 0
    private var partIndependent = true
    private var keyframeRequested = false
    private var lastMs: Int64?
    /// The steps between the last frames of the cutting track (video, or audio without video): a frame is assumed
    /// to last as long as the longest of them.
    private var steps: [Int64] = []
    private var lastCutTrackMs: Int64?
    private(set) var skippedVideo = 0
    private(set) var skippedAudio = 0

    init(
        headers: [FLVTag], options: HLSOptions, stream: HLSStream, recording: HLSRecording? = nil,
        now: @escaping () -> Date = Date.init, requestKeyframe: @escaping () -> Void
    ) {
        self.headers = headers
        self.options = options
        self.stream = stream
        self.recording = recording
        self.now = now
        self.requestKeyframe = requestKeyframe
        hasVideo = headers.contains { $0.kind == .video && $0.isSequenceHeader }
        fragment.reserveCapacity(256 * 1024)
    }

    private var stepMs: Int64 { steps.max() ?? (hasVideo ? 34 : 22) }

    /// Packages one tag (sequence headers and data tags are skipped).
    func write(_ tag: FLVTag) throws(OutputIOError) {
        guard !tag.isSequenceHeader, tag.kind != .script else { return }
        let ms = Int64(tag.timestampMs)
        if let last = lastMs, ms < last - 1000 || ms > last + 10_000 {
            if !starting { try endSegment(atMs: last + stepMs) }
            muxer = nil
            starting = true
            discontinuity = true
            clock = nil
            steps.removeAll()
            lastCutTrackMs = nil
            lastMs = nil
        }
        let cutsHere = tag.kind == .video || !hasVideo
        if starting {
            guard !hasVideo || (tag.kind == .video && tag.isKeyframe) else {
                if tag.kind == .video { skippedVideo += 1 } else { skippedAudio += 1 }
                if !keyframeRequested {
                    keyframeRequested = true
                    requestKeyframe()
                }
                return
            }
            if muxer == nil { try startMuxer() }
            clock = clock ?? (ms, now())
            openSegment(atMs: ms)
            starting = false
            discontinuity = false
        } else if cutsHere {
            if let previous = lastCutTrackMs, ms > previous, ms - previous < 1000 {
                if steps.count == 8 { steps.removeFirst() }
                steps.append(ms - previous)
            }
            let step = stepMs
            let keyframe = !hasVideo || tag.isKeyframe
            // Due within half a frame of the target; the keyframe asked for when none came then ends it too.
            let due = ms - segmentStartMs >= options.segmentMs - step / 2
            if keyframe && (due || (hasVideo && keyframeRequested)) {
                try endSegment(atMs: ms)
                openSegment(atMs: ms)
            } else {
                if ms + step - partStartMs > (options.partMs ?? options.segmentMs * 4) {
                    try cutPart(atMs: ms, nextIndependent: keyframe)
                }
                if due && !keyframeRequested {
                    keyframeRequested = true
                    requestKeyframe()
                }
            }
        }
        if cutsHere { lastCutTrackMs = ms }
        lastMs = max(lastMs ?? ms, ms)
        try muxer?.write(tag)
    }

    /// Closes what is open; the stream is then ended by the owner.
    func finish() throws(OutputIOError) {
        if let last = lastMs, !starting { try endSegment(atMs: last + stepMs) }
        stream.dropEmptyOpenSegment()
        try recording?.finish()
    }

    private func startMuxer() throws(OutputIOError) {
        let made = try ProgrammeMuxer(io: try MuxerIO.memory(sink), container: .cmaf, headers: headers)
        initIndex += 1
        var bytes: [UInt8] = []
        sink.take(into: &bytes)
        stream.setInit(initIndex, bytes: bytes)
        try recording?.writeInit(initIndex, bytes)
        muxer = made
    }

    private func openSegment(atMs ms: Int64) {
        let date = clock.map { $0.date.addingTimeInterval(Double(ms - $0.ms) / 1000) } ?? now()
        stream.openSegment(initIndex: initIndex, discontinuity: discontinuity, programDate: date)
        recording?.openSegment(initIndex: initIndex, discontinuity: discontinuity, programDate: date)
        segmentStartMs = ms
        partStartMs = ms
        partIndependent = true
        keyframeRequested = false
    }

    private func cutPart(atMs ms: Int64, nextIndependent: Bool) throws(OutputIOError) {
        guard let muxer else { return }
        try muxer.flushFragment()
        fragment.removeAll(keepingCapacity: true)
        sink.take(into: &fragment)
        if !fragment.isEmpty {
            stream.addPart(fragment, durationMs: ms - partStartMs, independent: partIndependent)
            try recording?.append(fragment)
        }
        partStartMs = ms
        partIndependent = nextIndependent
    }

    private func endSegment(atMs ms: Int64) throws(OutputIOError) {
        try cutPart(atMs: ms, nextIndependent: true)
        stream.closeSegment(durationMs: ms - segmentStartMs)
        try recording?.closeSegment(durationMs: ms - segmentStartMs)
    }
}
