import COpus
import Media

/// An Opus encoder (libopus, 48 kHz, 20 ms frames): used by tests and benchmarks to make real packets.
///
/// `@unchecked Sendable`: the encoder state is not thread-safe; an instance is confined to one thread or
/// serial queue at a time.
public final class OpusEncoder: @unchecked Sendable {
    public let channels: Int
    private let handle: OpaquePointer
    /// Reused output buffer (the largest packet libopus recommends reserving).
    private var scratch = [UInt8](repeating: 0, count: 4000)

    public init(channels: Int, bitrate: Int) throws(CodecError) {
        guard channels == 1 || channels == 2 else {
            throw OpusError.error("Opus channels must be 1 or 2, not \(channels)")
        }
        guard (6_000...510_000).contains(bitrate) else { throw OpusError.error("Opus bitrate \(bitrate) out of range") }
        self.channels = channels
        var status: Int32 = 0
        guard
            let handle = opus_encoder_create(
                Int32(AudioFormat.sampleRate), Int32(channels), OPUS_APPLICATION_AUDIO, &status),
            status == OPUS_OK
        else { throw OpusError.error(status, "opus_encoder_create") }
        self.handle = handle
        let set = cohost_opus_set_bitrate(handle, Int32(bitrate))
        // Fully initialised here, so a throw runs deinit, which destroys the encoder.
        guard set == OPUS_OK else { throw OpusError.error(set, "OPUS_SET_BITRATE") }
    }

    deinit { opus_encoder_destroy(handle) }

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
