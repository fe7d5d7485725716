import Foundation

/// One FLV tag as read back from a file or an RTMP capture: type (8 audio, 9 video, 18 script),
/// timestamp and body, with the flags tests ask about.
public struct FLVTagInfo: Sendable, Equatable {
    public var typeId: UInt8
    public var timestampMs: UInt32
    public var body: [UInt8]
    /// Where the tag ends in its source (file offset, or offset in an RTMP capture).
    public var endOffset: Int

    public init(typeId: UInt8, timestampMs: UInt32, body: [UInt8], endOffset: Int = 0) {
        self.typeId = typeId
        self.timestampMs = timestampMs
        self.body = body
        self.endOffset = endOffset
    }

    public var isAudio: Bool { typeId == 8 }
    public var isVideo: Bool { typeId == 9 }
    public var isScript: Bool { typeId == 18 }

    /// The AVC decoder configuration (codec 7, packet type 0) or the AAC AudioSpecificConfig (format 10, packet type 0).
    public var isSequenceHeader: Bool {
        guard body.count >= 2 else { return false }
        if isVideo { return body[0] & 0x0F == 7 && body[1] == 0 }
        if isAudio { return body[0] >> 4 == 10 && body[1] == 0 }
        return false
    }

    /// Audio or video that is not a sequence header: what a player decodes and presents.
    public var isMedia: Bool { (isAudio || isVideo) && !isSequenceHeader }

    /// A video tag whose frame type is 1 (keyframe).
    public var isKeyframe: Bool { isVideo && (body.first ?? 0) >> 4 == 1 }

    /// A script tag whose first AMF0 value is the string "onMetaData".
    public var isMetadata: Bool { isScript && body.starts(with: [0x02, 0x00, 0x0A] + Array("onMetaData".utf8)) }
}

/// Reads FLV files (FLV spec v10.1, annex E): a 9-byte header, PreviousTagSize0, then tags of an
/// 11-byte header, the body and a 4-byte PreviousTagSize. More exact than ffprobe: timestamps come
/// back in the file's own milliseconds, and sequence headers and script tags are not hidden.
public enum FLVProbe {
    public static func tags(path: String) throws -> [FLVTagInfo] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TestSupportError.failed("cannot read \(path)")
        }
        return try tags(bytes: [UInt8](data))
    }

    /// The complete tags in `bytes`; a tag cut off by the end of the file is left out.
    public static func tags(bytes: [UInt8]) throws -> [FLVTagInfo] {
        guard bytes.count >= 9, bytes.starts(with: Array("FLV".utf8)), bytes[3] == 1 else {
            throw TestSupportError.failed("not an FLV file (\(bytes.count) bytes)")
        }
        var reader = ByteReader(bytes: bytes, offset: 5)
        guard let headerSize = reader.u32(), headerSize >= 9, Int(headerSize) + 4 <= bytes.count else {
            throw TestSupportError.failed("FLV header size is wrong")
        }
        reader.offset = Int(headerSize) + 4  // skip PreviousTagSize0
        var out: [FLVTagInfo] = []
        while reader.remaining >= 11 {
            let start = reader.offset
            guard let type = reader.u8(), let size = reader.u24(), let low = reader.u24(), let high = reader.u8(),
                reader.u24() != nil
            else { break }
            guard type & 0x20 == 0 else { throw TestSupportError.failed("encrypted FLV tag at byte \(start)") }
            guard let body = reader.bytes(Int(size)), let previous = reader.u32() else { break }
            guard previous == size + 11 else {
                throw TestSupportError.failed(
                    "PreviousTagSize \(previous) after a tag of \(size) bytes at byte \(start)")
            }
            out.append(
                FLVTagInfo(
                    typeId: type & 0x1F, timestampMs: UInt32(high) << 24 | low, body: Array(body),
                    endOffset: reader.offset))
        }
        return out
    }
}

/// Timeline checks over a sequence of tags (one file, or one RTMP connection).
public enum FLVTimeline {
    /// Places where a media tag's timestamp is below the one before it (audio and video share one clock).
    public static func regressions(_ tags: [FLVTagInfo]) -> [(index: Int, previousMs: UInt32, ms: UInt32)] {
        var out: [(Int, UInt32, UInt32)] = []
        var last: UInt32?
        for (index, tag) in tags.enumerated() where tag.isMedia {
            if let last, tag.timestampMs < last { out.append((index, last, tag.timestampMs)) }
            last = tag.timestampMs
        }
        return out
    }

    /// Places where a media tag's timestamp is below the one before it of the same kind (the low-latency
    /// interleave: each kind monotonic on its own, pictures sent ahead of their sound).
    /// Data messages (script tags) share the audio lane, as they share its RTMP chunk stream.
    public static func regressionsPerKind(_ tags: [FLVTagInfo]) -> [(index: Int, previousMs: UInt32, ms: UInt32)] {
        var out: [(Int, UInt32, UInt32)] = []
        var lastAudio: UInt32?, lastVideo: UInt32?
        for (index, tag) in tags.enumerated() {
            if tag.isVideo, tag.isMedia {
                if let last = lastVideo, tag.timestampMs < last { out.append((index, last, tag.timestampMs)) }
                lastVideo = tag.timestampMs
            } else if (tag.isAudio && tag.isMedia) || tag.typeId == 18 {
                if let last = lastAudio, tag.timestampMs < last { out.append((index, last, tag.timestampMs)) }
                lastAudio = tag.timestampMs
            }
        }
        return out
    }

    /// The largest (last video timestamp − last audio timestamp) and (audio − video) seen after each media tag,
    /// once both kinds have started: how far each kind ran ahead of the other. Nil when one is missing.
    public static func maxLeads(_ tags: [FLVTagInfo]) -> (video: Int, audio: Int)? {
        var audio: UInt32?, video: UInt32?
        var worst: (video: Int, audio: Int)?
        for tag in tags where tag.isMedia {
            if tag.isAudio { audio = tag.timestampMs } else { video = tag.timestampMs }
            if let audio, let video {
                let d = Int(video) - Int(audio)
                worst = (max(worst?.video ?? 0, d), max(worst?.audio ?? 0, -d))
            }
        }
        return worst
    }

    /// The largest |last audio timestamp − last video timestamp| seen after each media tag, once both kinds have
    /// started: how far one kind ever ran ahead of the other in the stream. Counted only where the other kind was
    /// flowing (its last tag and its next one at most `flowingWithinMs` apart): in a gap of one kind (a canvas the
    /// clock skipped on a stalled machine) the other has nothing to stay together with. Nil when one is missing.
    public static func maxInterleaveSkewMs(_ tags: [FLVTagInfo], flowingWithinMs: Int = .max) -> Int? {
        let media = tags.filter(\.isMedia)
        // The next timestamp of each kind after index i.
        var nextAudio = [UInt32?](repeating: nil, count: media.count + 1)
        var nextVideo = [UInt32?](repeating: nil, count: media.count + 1)
        for i in stride(from: media.count - 1, through: 0, by: -1) {
            nextAudio[i] = media[i].isAudio ? media[i].timestampMs : nextAudio[i + 1]
            nextVideo[i] = media[i].isAudio ? nextVideo[i + 1] : media[i].timestampMs
        }
        func flowing(_ last: UInt32, _ next: UInt32?) -> Bool {
            guard let next else { return true }
            return Int(next) - Int(last) <= flowingWithinMs
        }
        var audio: UInt32?, video: UInt32?
        var worst: Int?
        for (i, tag) in media.enumerated() {
            if tag.isAudio { audio = tag.timestampMs } else { video = tag.timestampMs }
            guard let audio, let video else { continue }
            let other = tag.isAudio ? flowing(video, nextVideo[i + 1]) : flowing(audio, nextAudio[i + 1])
            if other { worst = max(worst ?? 0, abs(Int(audio) - Int(video))) }
        }
        return worst
    }

    /// First media timestamp of each kind.
    public static func firstTimestamps(_ tags: [FLVTagInfo]) -> (audio: UInt32?, video: UInt32?) {
        (tags.first { $0.isMedia && $0.isAudio }?.timestampMs, tags.first { $0.isMedia && $0.isVideo }?.timestampMs)
    }

    /// Last media timestamp of each kind.
    public static func lastTimestamps(_ tags: [FLVTagInfo]) -> (audio: UInt32?, video: UInt32?) {
        (tags.last { $0.isMedia && $0.isAudio }?.timestampMs, tags.last { $0.isMedia && $0.isVideo }?.timestampMs)
    }

    /// Video frames with a timestamp in [fromMs, fromMs + durationMs).
    public static func videoFrames(_ tags: [FLVTagInfo], fromMs: UInt32, durationMs: UInt32) -> Int {
        tags.filter { $0.isMedia && $0.isVideo && $0.timestampMs >= fromMs && $0.timestampMs - fromMs < durationMs }
            .count
    }

    /// How far delivery fell behind the media clock: for each media tag, its arrival time minus its
    /// timestamp; the spread (max − min) of that, in seconds. A stream delivered in real time stays near
    /// 0; a backlog anywhere between encoder and receiver (queues, socket buffers) shows as its length.
    public static func deliveryLagSpreadSeconds(_ tags: [FLVTagInfo], arrival: (FLVTagInfo) -> Double?) -> Double? {
        let lags = tags.filter(\.isMedia).compactMap { tag in arrival(tag).map { $0 - Double(tag.timestampMs) / 1000 } }
        guard let low = lags.min(), let high = lags.max() else { return nil }
        return high - low
    }

    /// The longest gap between consecutive media timestamps of one kind (e.g. audio dropped by a queue).
    public static func longestGapMs(_ tags: [FLVTagInfo], audio: Bool) -> Int {
        let times = tags.filter { $0.isMedia && $0.isAudio == audio }.map(\.timestampMs)
        return zip(times, times.dropFirst()).map { Int($1) - Int($0) }.max() ?? 0
    }
}
