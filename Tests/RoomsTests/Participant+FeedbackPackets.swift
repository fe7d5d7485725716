import RTP
@testable import Rooms

extension Participant {
    /// `feedback(nowMs:serverSSRC:reportDue:blocks:into:)` parsed back into packets, so tests compare values (and the
    /// bytes the server sends must parse).
    func feedback(nowMs: Int64, serverSSRC: UInt32, reportDue: Bool) throws -> [RTCPPacket] {
        var bytes: [UInt8] = []
        var blocks: [ReceptionReport] = []
        feedback(nowMs: nowMs, serverSSRC: serverSSRC, reportDue: reportDue, blocks: &blocks, into: &bytes)
        return bytes.isEmpty ? [] : try parseCompoundRTCP(bytes)
    }
}
