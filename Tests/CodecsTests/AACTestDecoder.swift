import CAVCodec
import Codecs

/// libavcodec's AAC decoder, for tests that check what `AACEncoder` wrote: raw AAC frames plus their
/// AudioSpecificConfig in, the two channels' samples out.
enum AACTestDecoder {
    static func decode(_ frames: [EncodedAudio], audioSpecificConfig: [UInt8]) throws -> (left: [Float], right: [Float])
    {
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_AAC) else { throw Failure("no AAC decoder") }
        var ctx = avcodec_alloc_context3(codec)
        defer { avcodec_free_context(&ctx) }
        guard let context = ctx else { throw Failure("avcodec_alloc_context3 failed") }
        guard let extradata = av_mallocz(audioSpecificConfig.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
            throw Failure("av_mallocz failed")
        }
        extradata.copyMemory(from: audioSpecificConfig, byteCount: audioSpecificConfig.count)
        context.pointee.extradata = extradata.assumingMemoryBound(to: UInt8.self)
        context.pointee.extradata_size = Int32(audioSpecificConfig.count)
        guard avcodec_open2(context, codec, nil) >= 0 else { throw Failure("avcodec_open2(aac decoder) failed") }
        var packet = av_packet_alloc(), frame = av_frame_alloc()
        defer {
            av_packet_free(&packet)
            av_frame_free(&frame)
        }
        guard let packet, let frame else { throw Failure("av_packet_alloc/av_frame_alloc failed") }
        var left: [Float] = [], right: [Float] = []
        func receive() throws {
            while avcodec_receive_frame(context, frame) >= 0 {
                defer { av_frame_unref(frame) }
                guard frame.pointee.format == AV_SAMPLE_FMT_FLTP.rawValue, frame.pointee.ch_layout.nb_channels == 2,
                    let l = frame.pointee.extended_data[0], let r = frame.pointee.extended_data[1]
                else {
                    throw Failure("decoded frame is not planar float stereo")
                }
                let n = Int(frame.pointee.nb_samples)
                left += UnsafeBufferPointer(start: UnsafeRawPointer(l).assumingMemoryBound(to: Float.self), count: n)
                right += UnsafeBufferPointer(start: UnsafeRawPointer(r).assumingMemoryBound(to: Float.self), count: n)
            }
        }
        for encoded in frames {
            guard av_new_packet(packet, Int32(encoded.data.count)) >= 0, let data = packet.pointee.data else {
                throw Failure("av_new_packet failed")
            }
            data.update(from: encoded.data, count: encoded.data.count)
            let status = avcodec_send_packet(context, packet)
            av_packet_unref(packet)
            guard status >= 0 else { throw Failure("avcodec_send_packet: \(status)") }
            try receive()
        }
        _ = avcodec_send_packet(context, nil)
        try receive()
        return (left, right)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
