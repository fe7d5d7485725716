import Codecs
import Mixing
import SRTP

/// One participant's return audio: the stream that carries the room's mix-minus to them, the encoder of their own
/// mix-minus (made the first time they talk), its limiter, and what their receiver reports. Confined to the room's
/// queue (the feedback and the counters have locks of their own).
final class ReturnAudio {
    /// Blocks a talker keeps their own encode after their voice left the mix (200 ms): the gaps inside a phrase do
    /// not flip them between encoders.
    static let holdBlocks = 10

    /// Opus bitrate of the return audio.
    static func bitrate(channels: Int) -> Int { channels == 2 ? 64_000 : 32_000 }

    /// libopus's effort for mono return audio: the encodes are most of a voice room's cost (docs/return-path.md has
    /// the figures). Stereo (music) keeps libopus's default.
    static let monoComplexity = 1

    /// An encoder as the return audio uses them: VoIP tuning and DTX; mono at wideband (SILK alone, half the
    /// cost of the hybrid mode a 32 kbit/s voice otherwise gets) and `monoComplexity`.
    static func makeEncoder(channels: Int) throws(CodecError) -> OpusEncoder {
        let encoder = try OpusEncoder(channels: channels, bitrate: bitrate(channels: channels), voice: true)
        try encoder.setDTX(true)
        if channels == 1 {
            try encoder.setComplexity(monoComplexity)
            try encoder.limitToWideband()
        }
        return encoder
    }

    let channels: Int
    let rtp: OutboundRTP
    let feedback: ReceiverFeedback
    /// The participant's own SSRC on a line it only receives on (its RTCP comes from it).
    let receiverSSRC: UInt32?
    private var encoder: OpusEncoder?
    var limiter = SoftLimiter()
    /// Blocks left on the participant's own encode.
    var holdLeft = 0
    /// Whether the last block went out from the participant's own encoder.
    var lastWasOwn = false
    /// No packet went out for the last block (DTX, or none yet): the next one starts a talkspurt (marker bit).
    var paused = true
    /// The loss protection the own encoder is set to, percent.
    var lossPercent = 0
    /// The own encode's packet (reused).
    var packet: [UInt8] = []
    /// Blocks encoded for this participant alone, and blocks sent from the room's shared encode.
    private(set) var ownBlocks = 0
    private(set) var sharedBlocks = 0

    init(_ offer: ReturnOffer, cname: String, lateKeys: TransportKeys?) throws(SRTPError) {
        channels = offer.channels
        rtp = try OutboundRTP(offer, clockRate: 48_000, cname: cname, lateKeys: lateKeys)
        feedback = ReceiverFeedback(clockRate: 48_000)
        receiverSSRC = offer.receiverSSRC
        packet.reserveCapacity(1500)
    }

    /// The participant's own encoder, made on first use (a listener who never talks never costs one).
    func ownEncoder() throws(CodecError) -> OpusEncoder {
        if let encoder { return encoder }
        let made = try Self.makeEncoder(channels: channels)
        encoder = made
        return made
    }

    var hasOwnEncoder: Bool { encoder != nil }

    func countBlock(own: Bool) {
        if own { ownBlocks += 1 } else { sharedBlocks += 1 }
    }
}
