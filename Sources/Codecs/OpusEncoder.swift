import COpus
import Media

/// An Opus encoder (libopus, 48 kHz, 20 ms frames): the return path's voice, and real packets for tests and benchmarks.
///
/// `@unchecked Sendable`: the encoder state is not thread-safe; an instance is confined to one thread or
/// serial queue at a time.
public final class OpusEncoder: @unchecked Sendable {
    public let channels: Int
    private let handle: OpaquePointer
    /// Reused output buffer (the largest packet libopus recommends reserving).
    private var scratch = [UInt8](repeating: 0, count: 4000)

    /// `voice`: tuned for speech (VoIP application), as a conference's return audio is.
    public init(channels: Int, bitrate: Int, voice: Bool = false) throws(CodecError) {
        guard channels == 1 || channels == 2 else {
            throw OpusError.error("Opus channels must be 1 or 2, not \(channels)")
        }
        guard (6_000...510_000).contains(bitrate) else { throw OpusError.error("Opus bitrate \(bitrate) out of range") }
        self.channels = channels
        var status: Int32 = 0
        guard
            let handle = opus_encoder_create(
                Int32(AudioFormat.sampleRate), Int32(channels),
                voice ? OPUS_APPLICATION_VOIP : OPUS_APPLICATION_AUDIO, &status),
            status == OPUS_OK
        else { throw OpusError.error(status, "opus_encoder_create") }
        self.handle = handle
        let set = cohost_opus_set_bitrate(handle, Int32(bitrate))
        // Fully initialised here, so a throw runs deinit, which destroys the encoder.
        guard set == OPUS_OK else { throw OpusError.error(set, "OPUS_SET_BITRATE") }
    }

    deinit { opus_encoder_destroy(handle) }

    /// Whether DTX is on (the last `setDTX`).
    public private(set) var dtx = false

    /// Discontinuous transmission: silence comes out as packets of at most 2 bytes, which a sender does not send.
    public func setDTX(_ on: Bool) throws(CodecError) {
        let status = cohost_opus_set_dtx(handle, on ? 1 : 0)
        guard status == OPUS_OK else { throw OpusError.error(status, "OPUS_SET_DTX") }
        dtx = on
    }

    /// In-band FEC (each packet also carries a coarse copy of the one before) for a receiver losing
    /// `lossPercent` % of packets; off with `lossPercent` 0.
    public func setLossProtection(lossPercent: Int) throws(CodecError) {
        let percent = Int32(min(max(lossPercent, 0), 100))
        var status = cohost_opus_set_inband_fec(handle, percent > 0 ? 1 : 0)
        if status == OPUS_OK { status = cohost_opus_set_packet_loss_perc(handle, percent) }
        guard status == OPUS_OK else { throw OpusError.error(status, "OPUS_SET_INBAND_FEC") }
    }

    /// The encoder's effort, 0…10 (libopus's default 10): lower costs less CPU for a little quality.
    public func setComplexity(_ complexity: Int) throws(CodecError) {
        let status = cohost_opus_set_complexity(handle, Int32(min(max(complexity, 0), 10)))
        guard status == OPUS_OK else { throw OpusError.error(status, "OPUS_SET_COMPLEXITY") }
    }

    /// Keeps the encoder at wideband (8 kHz of audio, SILK alone): speech loses nothing a call needs, and the
    /// hybrid and CELT modes, the expensive ones, are never used.
    public func limitToWideband() throws(CodecError) {
        let status = cohost_opus_set_max_bandwidth_wideband(handle)
        guard status == OPUS_OK else { throw OpusError.error(status, "OPUS_SET_MAX_BANDWIDTH") }
    }

    /// Forgets the signal so far: the next packet starts afresh.
    public func reset() {
        _ = cohost_opus_encoder_reset(handle)
    }

    /// Encodes 960 frames × `channels` interleaved samples from `pcm` into `out` (resized to the packet,
    /// capacity kept: no allocation once `out` has held a large packet).
    public func encode(_ pcm: UnsafeBufferPointer<Float>, into out: inout [UInt8]) throws(CodecError) {
        let frames = AudioFormat.blockFrames
        guard pcm.count >= frames * channels, let src = pcm.baseAddress else {
            throw OpusError.error("expected \(frames * channels) samples, got \(pcm.count)")
        }
        let handle = self.handle
        let size = scratch.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let dst = buffer.baseAddress else { return OPUS_BAD_ARG }
            return opus_encode_float(handle, src, Int32(frames), dst, Int32(buffer.count))
        }
        guard size > 0 else { throw OpusError.error(size, "opus_encode_float") }
        out.removeAll(keepingCapacity: true)
        out.append(contentsOf: scratch[0..<Int(size)])
    }

    /// Encodes exactly 960 frames × `channels` interleaved samples into one packet.
    public func encode(_ interleaved: [Float]) throws(CodecError) -> [UInt8] {
        let frames = AudioFormat.blockFrames
        guard interleaved.count == frames * channels else {
            throw OpusError.error("expected \(frames * channels) samples, got \(interleaved.count)")
        }
        let handle = self.handle
        let size = interleaved.withUnsafeBufferPointer { pcm in
            scratch.withUnsafeMutableBufferPointer { out -> Int32 in
                guard let src = pcm.baseAddress, let dst = out.baseAddress else { return OPUS_BAD_ARG }
                return opus_encode_float(handle, src, Int32(frames), dst, Int32(out.count))
            }
        }
        guard size > 0 else { throw OpusError.error(size, "opus_encode_float") }
        return Array(scratch[0..<Int(size)])
    }
}
