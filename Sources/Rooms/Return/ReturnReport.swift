import CohostAPI

extension ReturnReport {
    /// A return stream's counters and its receiver's last report.
    init(kind: String, codec: String, stream: OutboundRTP, feedback: ReceiverFeedback) {
        let (packets, bytes) = stream.sent
        self.init(kind: kind, codec: codec, ssrc: stream.ssrc, packetsSent: packets, bytesSent: bytes)
        let heard = feedback.snapshot
        if heard.reports > 0 {
            lossPercent = heard.lossPercent
            cumulativeLost = heard.cumulativeLost
            jitterMs = (heard.jitterMs * 10).rounded() / 10
        }
        roundTripMs = heard.roundTripMs
    }
}
