import Foundation

/// One complete RTMP message from a publisher: its type (8 audio, 9 video, 18 AMF0 data,
/// 20 AMF0 command, 1–6 protocol control), timestamp, message stream id and body.
public struct RTMPMessage: Sendable, Equatable {
    public var typeId: UInt8
    public var timestampMs: UInt32
    public var streamId: UInt32
    public var body: [UInt8]
    /// The offset just past the message's last byte in the captured bytes (when it was complete).
    public var endOffset: Int
}

/// Reassembles the messages a client sent on one RTMP connection from the raw bytes (as captured by
/// `ThrottledTCPRelay`): the handshake (C0, C1, C2), then the chunk stream.
///
/// Timestamps are read the way nginx-rtmp (and librtmp, which writes them) do: type 0 chunks carry an
/// absolute time, types 1 and 2 a delta to the previous message on the same chunk stream, type 3 keeps
/// the previous time; an extended timestamp (field 0xFFFFFF) is absolute. Set Chunk Size from the client
/// is honoured. A message cut off by the end of the capture (connection killed mid-write) is left out.
public enum RTMPChunkReader {
    static let handshakeBytes = 1 + 1536 + 1536

    /// The complete messages in `bytes`, in the order their last chunk arrived.
    public static func messages(clientBytes bytes: [UInt8]) throws -> [RTMPMessage] {
        guard bytes.count >= handshakeBytes else { return [] }
        guard bytes[0] == 3 else { throw TestSupportError.failed("RTMP C0 is \(bytes[0]), expected version 3") }
        var reader = ByteReader(bytes: bytes, offset: handshakeBytes)
        var streams: [UInt32: ChunkStreamState] = [:]
        var chunkSize = 128
        var out: [RTMPMessage] = []
        while reader.remaining > 0 {
            guard let first = reader.u8() else { break }
            let format = first >> 6
            var csid = UInt32(first & 0x3F)
            if csid == 0 {
                guard let b = reader.u8() else { break }
                csid = 64 + UInt32(b)
            } else if csid == 1 {
                guard let b0 = reader.u8(), let b1 = reader.u8() else { break }
                csid = 64 + UInt32(b0) + 256 * UInt32(b1)
            }
            var state = streams[csid] ?? ChunkStreamState()
            if format <= 2 {
                guard let field = reader.u24() else { break }
                if format <= 1 {
                    guard let length = reader.u24(), let type = reader.u8() else { break }
                    state.length = Int(length)
                    state.typeId = type
                    if format == 0 {
                        guard let sid = reader.u32le() else { break }
                        state.streamId = sid
                    }
                }
                if field == 0xFF_FFFF {
                    guard let extended = reader.u32() else { break }
                    state.timestamp = extended
                } else if format == 0 {
                    state.timestamp = field
                } else {
                    state.timestamp &+= field
                }
            } else if !state.started {
                throw TestSupportError.failed("RTMP type 3 chunk on chunk stream \(csid) with no previous header")
            }
            state.started = true
            let wanted = min(chunkSize, state.length - state.partial.count)
            guard wanted >= 0, let payload = reader.bytes(wanted) else { break }
            state.partial.append(contentsOf: payload)
            if state.partial.count == state.length {
                let message = RTMPMessage(
                    typeId: state.typeId, timestampMs: state.timestamp, streamId: state.streamId,
                    body: state.partial, endOffset: reader.offset)
                state.partial.removeAll(keepingCapacity: true)
                if message.typeId == 1, message.body.count >= 4 {
                    let size = message.body.prefix(4).reduce(0) { $0 << 8 | Int($1) } & 0x7FFF_FFFF
                    guard size > 0 else { throw TestSupportError.failed("RTMP Set Chunk Size of 0") }
                    chunkSize = size
                }
                out.append(message)
            }
            streams[csid] = state
        }
        return out
    }

    /// The audio, video and data messages of a publishing connection as FLV tags
    /// (a data message's `@setDataFrame` wrapper is removed, as a server storing it would).
    public static func flvTags(clientBytes bytes: [UInt8]) throws -> [FLVTagInfo] {
        try messages(clientBytes: bytes).compactMap { message in
            switch message.typeId {
            case 8, 9:
                FLVTagInfo(
                    typeId: message.typeId, timestampMs: message.timestampMs, body: message.body,
                    endOffset: message.endOffset)
            case 18:
                FLVTagInfo(
                    typeId: 18, timestampMs: message.timestampMs, body: strippingSetDataFrame(message.body),
                    endOffset: message.endOffset)
            default: nil
            }
        }
    }

    /// AMF0 string "@setDataFrame" (marker 2, length 13).
    static let setDataFramePrefix: [UInt8] = [0x02, 0x00, 0x0D] + Array("@setDataFrame".utf8)

    static func strippingSetDataFrame(_ body: [UInt8]) -> [UInt8] {
        body.starts(with: setDataFramePrefix) ? Array(body.dropFirst(setDataFramePrefix.count)) : body
    }

    private struct ChunkStreamState {
        var started = false
        var timestamp: UInt32 = 0
        var length = 0
        var typeId: UInt8 = 0
        var streamId: UInt32 = 0
        var partial: [UInt8] = []
    }
}

/// Big-endian reads that return nil at the end of the bytes instead of trapping.
struct ByteReader {
    let bytes: [UInt8]
    var offset: Int

    var remaining: Int { bytes.count - offset }

    mutating func u8() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u24() -> UInt32? {
        guard remaining >= 3 else { return nil }
        defer { offset += 3 }
        return UInt32(bytes[offset]) << 16 | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2])
    }

    mutating func u32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        defer { offset += 4 }
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    mutating func u32le() -> UInt32? {
        guard remaining >= 4 else { return nil }
        defer { offset += 4 }
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(
            bytes[offset + 3]) << 24
    }

    mutating func bytes(_ n: Int) -> ArraySlice<UInt8>? {
        guard n >= 0, remaining >= n else { return nil }
        defer { offset += n }
        return bytes[offset..<offset + n]
    }
}
