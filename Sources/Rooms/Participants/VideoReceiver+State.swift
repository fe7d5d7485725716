import Codecs
import Ingest
import RTP
import Playout

extension VideoReceiver {
    /// What the receiver keeps behind its lock (`VideoReceiver`).
    struct State {
        let stream: InboundStream
        var presenter: VideoPresenter<DecodedPicture>
        /// Complete frames waiting for the decoder (capacity reserved once), and whether this receiver is in the
        /// pool's line or being decoded.
        var queue: [EncodedFrame] = []
        var queuedBytes = 0
        var scheduled = false
        /// A frame was dropped on a full queue: the interframes after it wait for a keyframe (set and cleared on the
        /// packet path, so a decode finishing meanwhile cannot undo it).
        var dropUntilKeyframe = false
        var budget: DecodeBudget
        /// The sender's pictures are larger than the room allows: frames are refused until a keyframe that fits.
        var refusedSize: (width: Int, height: Int)?
        /// Frames skipped by the budget while no keyframe has restarted decoding.
        var skippedForBudget = false
        /// The first picture was decoded; the room announces it at its next tick (`drain`).
        var firstPicture: (width: Int, height: Int)?
        var firstPictureAnnounced = false
        var sync = LipSyncController()
        /// Set by a decode error: the next feedback round asks for a keyframe.
        var decoderWantsKeyframe = false
        var waitingForKeyframe = true
        var framesDecoded = 0
        var decodeErrors = 0
        var framesTooLarge = 0
        var framesOverBudget = 0
        var framesQueueFull = 0
        var rates = StreamRates()
        /// The decode time of the picture whose ahead-of-sound figure was last reported (`currentFrame`).
        var aheadReportedForMs: Int64 = -1
        /// The FIR command sequence number (RFC 5104 §4.3.1.1): one more for every new request.
        var firSequence: UInt8 = 0
        /// The picture size the last keyframe declared, decoded or not (0 until one came): how simulcast layers
        /// are told apart.
        var keyframeWidth = 0
        var keyframeHeight = 0
        var lastPacketMs: Int64?
    }
}
