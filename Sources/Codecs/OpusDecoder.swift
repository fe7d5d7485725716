import COpus
import Media

/// An Opus decoder (libopus) for one inbound audio stream, producing 48 kHz interleaved Float32 with
/// `channels` channels: 2 (the internal format; mono streams are upmixed by libopus) or 1 (stereo streams
/// are downmixed by libopus), for rooms whose programme is mono anyway.
///
/// `@unchecked Sendable`: the decoder state is not thread-safe; its owner serialises every call (a
/// participant's lock: the room's queue decodes at its pull, the UDP thread when the pending ring is full).
public final class OpusDecoder: @unchecked Sendable {
    /// Channels of the decoded output, 1 or 2.
    public let channels: Int
    private let handle: OpaquePointer

    /// A mono decoder costs ≈30 % less than a stereo one on the same mono voice stream (libopus keeps,
    /// synthesises and shifts its history per output channel).
    public init(channels: Int = 2) throws(CodecError) {
        guard channels == 1 || channels == 2 else {
            throw OpusError.error("Opus output channels must be 1 or 2, not \(channels)")
        }
        var status: Int32 = 0
        guard let handle = opus_decoder_create(Int32(AudioFormat.sampleRate), Int32(channels), &status),
            status == OPUS_OK
        else { throw OpusError.error(status, "opus_decoder_create") }
        self.channels = channels
        self.handle = handle
    }

    deinit { opus_decoder_destroy(handle) }

    /// Decodes one packet into `output`, which ends up holding exactly frames × `channels` samples. `output` is the
    /// caller's reused block buffer: it is resized only when the packet duration changes.
    /// Returns frames per channel.
    public func decode(_ packet: [UInt8], into output: inout [Float]) throws(CodecError) -> Int {
        guard !packet.isEmpty else { throw OpusError.error("empty Opus packet (use conceal for a lost one)") }
        guard packet.count <= 1275 * 3 + 7 else {
            throw OpusError.error("Opus packet of \(packet.count) bytes is too long")
        }
        // Non-empty arrays always have a base address; OPUS_BAD_ARG stands in for the impossible nil.
        let frames = packet.withUnsafeBufferPointer { p -> Int32 in
            guard let base = p.baseAddress else { return OPUS_BAD_ARG }
            return opus_packet_get_nb_samples(base, Int32(p.count), Int32(AudioFormat.sampleRate))
        }
        guard frames >= 0 else { throw OpusError.error(frames, "opus_packet_get_nb_samples") }
        guard frames > 0 else { throw OpusError.error(OPUS_INVALID_PACKET, "Opus packet with no frames") }
        guard Int(frames) <= OpusError.maxFrames else {
            throw OpusError.error("Opus packet of \(frames) frames exceeds 120 ms")
        }
        resize(&output, frames: Int(frames))
        let decoded = packet.withUnsafeBufferPointer { p in
            output.withUnsafeMutableBufferPointer { o -> Int32 in
                guard let out = o.baseAddress else { return OPUS_BAD_ARG }
                return opus_decode_float(handle, p.baseAddress, Int32(p.count), out, frames, 0)
            }
        }
        guard decoded >= 0 else { throw OpusError.error(decoded, "opus_decode_float") }
        resize(&output, frames: Int(decoded))
        return Int(decoded)
    }

    /// Packet loss concealment for `frames` (a multiple of 2.5 ms, e.g. 960): `opus_decode` with no data.
    /// `output` ends up holding exactly frames × `channels` samples. Returns frames per channel.
    public func conceal(frames: Int, into output: inout [Float]) throws(CodecError) -> Int {
        guard (1...OpusError.maxFrames).contains(frames) else {
            throw OpusError.error("cannot conceal \(frames) frames (1...\(OpusError.maxFrames))")
        }
        resize(&output, frames: frames)
        let decoded = output.withUnsafeMutableBufferPointer { o -> Int32 in
            guard let out = o.baseAddress else { return OPUS_BAD_ARG }
            return opus_decode_float(handle, nil, 0, out, Int32(frames), 0)
        }
        guard decoded >= 0 else { throw OpusError.error(decoded, "opus_decode_float (concealment)") }
        resize(&output, frames: Int(decoded))
        return Int(decoded)
    }

    /// Recovers the `frames` lost right before `nextPacket` from that packet's in-band FEC (RFC 6716
    /// §2.1.7, `decode_fec=1`); libopus falls back to concealment when the packet carries no FEC.
    /// `output` ends up holding exactly frames × `channels` samples. Returns frames per channel.
    public func recover(frames: Int, from nextPacket: [UInt8], into output: inout [Float]) throws(CodecError) -> Int {
        guard (1...OpusError.maxFrames).contains(frames) else {
            throw OpusError.error("cannot recover \(frames) frames (1...\(OpusError.maxFrames))")
        }
        guard !nextPacket.isEmpty, nextPacket.count <= 1275 * 3 + 7 else {
            return try conceal(frames: frames, into: &output)
        }
        resize(&output, frames: frames)
        let decoded = nextPacket.withUnsafeBufferPointer { p in
            output.withUnsafeMutableBufferPointer { o -> Int32 in
                guard let out = o.baseAddress else { return OPUS_BAD_ARG }
                return opus_decode_float(handle, p.baseAddress, Int32(p.count), out, Int32(frames), 1)
            }
        }
        guard decoded >= 0 else { throw OpusError.error(decoded, "opus_decode_float (FEC)") }
        resize(&output, frames: Int(decoded))
        return Int(decoded)
    }

    /// Resets the decoder state, e.g. after the stream restarts.
    public func reset() throws(CodecError) {
        let status = cohost_opus_decoder_reset(handle)
        guard status == OPUS_OK else { throw OpusError.error(status, "OPUS_RESET_STATE") }
    }

    /// Sets `output.count` to frames × channels, keeping its storage when the size already matches.
    private func resize(_ output: inout [Float], frames: Int) {
        let count = frames * channels
        if output.count > count {
            output.removeLast(output.count - count)
        } else if output.count < count {
            output.append(contentsOf: repeatElement(0, count: count - output.count))
        }
    }
}
