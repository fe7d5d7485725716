import Foundation

/// An HLS output's copy of the show on disk: a directory in the recordings directory with the init sections, every
/// segment, and `index.m3u8` — an EVENT playlist rewritten (atomically) as each segment closes, so a show cut
/// short still plays, and a VOD playlist with `EXT-X-ENDLIST` when the output stops.
///
/// Confined to its output's worker thread.
final class HLSRecording {
    let directory: String
    private let targetDuration: Int
    private let quota: RecordingQuota?
    private var segment: RecordingFile?
    private var lines: [String] = []
    private var currentInit: Int?
    private var pending: (msn: Int, initIndex: Int, discontinuity: Bool, date: Date)?
    private var nextMSN = 0

    /// Creates `directory` (it must not exist).
    init(directory: String, targetDuration: Int, quota: RecordingQuota? = nil) throws(OutputIOError) {
        self.quota = quota
        guard mkdir(directory, 0o700) == 0 else {
            let name = directory.split(separator: "/").last.map(String.init) ?? directory
            throw OutputIOError(
                description: "cannot create the HLS recording \(name): \(String(cString: strerror(errno)))",
                isFinal: true)
        }
        self.directory = directory
        self.targetDuration = targetDuration
    }

    func writeInit(_ index: Int, _ bytes: [UInt8]) throws(OutputIOError) {
        let file = try RecordingFile(path: "\(directory)/init\(index).mp4", quota: quota)
        try file.write(bytes: bytes)
        try file.close()
    }

    func openSegment(initIndex: Int, discontinuity: Bool, programDate: Date) {
        pending = (nextMSN, initIndex, discontinuity, programDate)
        nextMSN += 1
    }

    func append(_ fragment: [UInt8]) throws(OutputIOError) {
        if segment == nil, let pending {
            segment = try RecordingFile(path: "\(directory)/s\(pending.msn).m4s", quota: quota)
        }
        try segment?.write(bytes: fragment)
    }

    func closeSegment(durationMs: Int64) throws(OutputIOError) {
        guard let file = segment, let pending else { return }
        segment = nil
        self.pending = nil
        try file.close()
        if pending.discontinuity && !lines.isEmpty { lines.append("#EXT-X-DISCONTINUITY") }
        if pending.initIndex != currentInit {
            lines.append("#EXT-X-MAP:URI=\"init\(pending.initIndex).mp4\"")
            currentInit = pending.initIndex
        }
        lines.append("#EXT-X-PROGRAM-DATE-TIME:\(HLSPlaylist.date(pending.date))")
        lines.append("#EXTINF:\(HLSPlaylist.seconds(durationMs)),")
        lines.append("s\(pending.msn).m4s")
        try writePlaylist(type: "EVENT", ended: false)
    }

    func finish() throws(OutputIOError) {
        try writePlaylist(type: "VOD", ended: true)
    }

    private func writePlaylist(type: String, ended: Bool) throws(OutputIOError) {
        var text = [
            "#EXTM3U", "#EXT-X-VERSION:6", "#EXT-X-TARGETDURATION:\(targetDuration)", "#EXT-X-PLAYLIST-TYPE:\(type)",
            "#EXT-X-MEDIA-SEQUENCE:0", "#EXT-X-INDEPENDENT-SEGMENTS",
        ]
        text += lines
        if ended { text.append("#EXT-X-ENDLIST") }
        let temporary = "\(directory)/.index.m3u8.\(nextMSN)"
        let file = try RecordingFile(path: temporary, quota: quota)
        try file.write(bytes: Array((text.joined(separator: "\n") + "\n").utf8))
        try file.close()
        guard rename(temporary, "\(directory)/index.m3u8") == 0 else {
            throw OutputIOError(
                description: "cannot write the HLS recording's playlist: \(String(cString: strerror(errno)))",
                isFinal: true)
        }
    }
}
