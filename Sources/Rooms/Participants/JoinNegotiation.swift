import RTP
import SRTP

/// One inbound stream accepted from an offer.
struct NegotiatedStream: Sendable, Equatable {
    enum Kind: Sendable { case audio, video }
    var kind: Kind
    var ssrc: UInt32
    var payloadType: UInt8
    var clockRate: Int
    var codec: String
    /// SRTP master key and salt from the offer's `a=crypto`, when the m= line is RTP/SAVP(F).
    var srtp: (profile: SRTPProfile, key: [UInt8])?
    /// The key of the answer's `a=crypto`, protecting the RTCP feedback Cohost sends back.
    var serverKey: [UInt8]?
    /// How this sender wants keyframes asked for: FIR only when its offer lists `ccm fir` but not `nack pli`.
    var keyframeRequest: KeyframeRequestKind = .pli
    /// RFC 4588 retransmissions on their own SSRC and payload type, when the offer has them.
    var retransmission: (ssrc: UInt32, payloadType: UInt8)?
    /// A WebRTC line that listed no `a=ssrc`: `ssrc` is a stand-in that never appears on the wire, and the real
    /// one is learnt from the first packet carrying this `a=mid` in its MID header extension.
    var learnFromMID: String?
    /// The offer's `a=fmtp` for the chosen payload type (what forwarding matches H.264 profiles on).
    var fmtp: String?
    /// Simulcast (RFC 8853): the layers in the offer's order, each on SSRCs learnt from the RID header extension of
    /// its first packets; `ssrc` is then the first layer's stand-in. Empty for a single stream.
    var layers: [SimulcastLayer] = []
    /// The offer's ids of the RID and repaired-RID header extensions (RFC 8852), for a simulcast stream.
    var ridExtension: UInt8?
    var repairedRidExtension: UInt8?
    /// The line's `a=mid` and the offer's MID extension id, when it has both: a layer's packets are told from
    /// another line's layer of the same RID by it.
    var mid: String?
    var midExtension: UInt8?

    static func == (a: Self, b: Self) -> Bool {
        a.kind == b.kind && a.ssrc == b.ssrc && a.payloadType == b.payloadType && a.codec == b.codec
            && a.srtp?.profile == b.srtp?.profile && a.srtp?.key == b.srtp?.key && a.layers == b.layers
    }
}

/// One simulcast layer as negotiated: its RID and the stand-in SSRCs of its media and retransmissions, which never
/// appear on the wire (the real ones are learnt).
struct SimulcastLayer: Sendable, Equatable {
    var rid: String
    var ssrc: UInt32
    var repairSSRC: UInt32?
}

/// The RTCP message that asks a sender for a keyframe.
enum KeyframeRequestKind: Sendable, Equatable { case pli, fir }

/// What Cohost sends a participant on one `m=` line (the return path): the room's mix-minus on an audio line,
/// the room view on a video line.
struct ReturnOffer: Sendable {
    var kind: NegotiatedStream.Kind
    /// The answer's payload type and codec for this line (the same one Cohost receives on, when it does).
    var payloadType: UInt8
    var codec: String
    /// Audio: 2 when the offer asked for stereo (`stereo=1`), else 1.
    var channels: Int
    /// Cohost's SSRC on this line, announced in the answer.
    var ssrc: UInt32
    /// The answer's SDES key, protecting what Cohost sends on this line.
    var srtp: (profile: SRTPProfile, key: [UInt8])?
    /// The participant's own SSRC on a line it only receives on (`a=ssrc` of a `recvonly` line): the RTCP it
    /// sends about what it receives comes from it. nil on lines it also sends on (that SSRC is the stream's).
    var receiverSSRC: UInt32?
    /// SRTP key of the offer for that receiver-only SSRC's SRTCP.
    var receiverSRTP: (profile: SRTPProfile, key: [UInt8])?
}

/// The outcome of reading an offer: what Cohost will receive and send back, and the answer text.
struct Negotiation: Sendable {
    var audio: NegotiatedStream?
    var video: NegotiatedStream?
    var returnAudio: ReturnOffer?
    var returnVideo: ReturnOffer?
    /// Receive slots: further `recvonly` video lines, filled with other participants' videos.
    var slots: [SlotOffer] = []
    /// The screen share: a video line the participant sends on, marked `a=content:slides` (RFC 4796).
    var screen: NegotiatedStream?
    var answer: String
    /// The ICE and DTLS parameters of a WebRTC offer; nil for plain RTP and SDES-SRTP.
    var webRTC: WebRTCParameters?
}

/// What a WebRTC participant's transport needs from the offer and the answer.
struct WebRTCParameters: Sendable, Equatable {
    var localUfrag: String
    var localPassword: String
    var remoteUfrag: String
    var remotePassword: String
    /// The offer's `a=fingerprint`: the hash's SDP name and the digest.
    var fingerprint: MediaDescription.Fingerprint
    /// Cohost's DTLS role: server (`a=setup:passive` in the answer) unless the offer is `passive`.
    var dtlsServer: Bool
    /// The offer's MID header extension id and which `a=mid` is which kind: SSRCs the offer does not list are
    /// learnt from it.
    var midExtension: UInt8?
    var midKinds: [String: NegotiatedStream.Kind]
}

/// Cohost's side of every WebRTC answer: its certificate's fingerprint and where it listens.
public struct WebRTCIdentity: Sendable {
    /// `sha-256 AB:CD:…`
    public var fingerprint: String
    /// The host candidates' addresses (the public IPs), tried in this order.
    public var addresses: [String]
    /// The ICE-TCP port at the same addresses; nil offers UDP only.
    public var tcpPort: Int?

    public init(fingerprint: String, addresses: [String], tcpPort: Int? = nil) {
        self.fingerprint = fingerprint
        self.addresses = addresses
        self.tcpPort = tcpPort
    }
}
