import Logging
import Publishing
import RTP

/// Sends the programme's own H.264, as the room's encoder made it for its outputs, to every viewer (WHEP): each
/// picture packetized once, sent to each viewer on its own SSRC with sequence numbers that follow the shared packet
/// index (as `RoomViewSender` does for the room view). A viewer starts at a keyframe; NACKs are answered from the send
/// history, keyframe requests passed on to the programme's encoder at most every 500 ms. Nothing is encoded here.
/// Confined to the room's queue.
final class ProgrammeVideoSender {
    typealias Transport = MixMinusSender.Transport

    static let keyframeIntervalMs: Int64 = 500

    private let packetizer = H264Packetizer()
    private var history = SendHistory()
    private let transport: Transport
    private var nacks: [UInt16] = []
    private var lastRequestMs: Int64?
    private(set) var framesSent = 0

    init(transport: @escaping Transport) { self.transport = transport }

    /// One canvas tick: requests answered, `tag` (the picture the programme encoded this tick, or nil) sent, and,
    /// when `reportDue`, sender reports mapping `reportTimestamp` to now. Returns whether the programme's encoder
    /// should make its next picture a keyframe.
    func tick(
        tag: FLVTag?, parameterSets: (sps: [UInt8], pps: [UInt8])?, viewers: [Participant], rtpTimestamp: UInt32,
        reportTimestamp: UInt32, reportDue: Bool, nowMs: Int64
    ) -> Bool {
        var wantsKeyframe = false
        for p in viewers {
            guard let back = p.returnVideo else { continue }
            nacks.removeAll(keepingCapacity: true)
            if back.takeRequests(nacks: &nacks) || back.first == nil { wantsKeyframe = true }
            back.retransmit(nacks, from: history) { transport(p, .video, $0) }
        }
        if let tag, tag.kind == .video, !tag.isSequenceHeader, tag.body.count > 5 {
            send(tag, parameterSets: parameterSets, viewers: viewers, timestamp: rtpTimestamp)
        }
        if reportDue {
            let ntp = NTPTime.now()
            for p in viewers {
                guard let back = p.returnVideo else { continue }
                back.retransmissionBudget = RoomViewSender.retransmissionsPerSecond
                back.rtp.sendReport(ntp: ntp, rtpTimestamp: reportTimestamp) { transport(p, .video, $0) }
            }
        }
        guard wantsKeyframe, lastRequestMs.map({ nowMs - $0 >= Self.keyframeIntervalMs }) ?? true else { return false }
        lastRequestMs = nowMs
        return true
    }

    private func send(
        _ tag: FLVTag, parameterSets: (sps: [UInt8], pps: [UInt8])?, viewers: [Participant], timestamp: UInt32
    ) {
        let firstIndex = history.nextIndex
        // [frame type | codec] [AVC packet type] [composition time] AVCC…
        tag.body.withUnsafeBytes { body in
            let avcc = UnsafeRawBufferPointer(rebasing: body[5...])
            packetizer.packetize(avcc: avcc, parameterSets: tag.isKeyframe ? parameterSets : nil) {
                prefix, count, rest, last in
                history.record(timestamp: timestamp, marker: last) { out in
                    if count > 0 { out.append(prefix.0) }
                    if count > 1 { out.append(prefix.1) }
                    out.append(contentsOf: rest)
                }
            }
        }
        framesSent += 1
        let end = history.nextIndex
        guard end > firstIndex else { return }
        for p in viewers {
            guard let back = p.returnVideo else { continue }
            back.send(firstIndex..<end, from: history, startsAtKeyframe: tag.isKeyframe) { transport(p, .video, $0) }
        }
    }
}
