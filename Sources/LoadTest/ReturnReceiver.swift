import Foundation

/// Reads what the server sends back to every participant (the mix-minus, the room view, RTCP) from one thread,
/// polling all sockets. Participants are added while it runs; the hand-off is the only state shared.
final class ReturnReceiver: @unchecked Sendable {
    private let handoff = ParticipantHandoff()

    init() {
        let thread = Thread { [self] in loop() }
        thread.name = "load-test receiver"
        thread.start()
    }

    func add(_ participant: LoadParticipant) { handoff.add(participant) }

    /// Stops reading and waits for the thread to end (the participants' `received` counters are final after).
    func stop() {
        handoff.stop()
    }

    private func loop() {
        var participants: [LoadParticipant] = []
        var polled: [pollfd] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        while true {
            guard let joined = handoff.take() else { break }
            for participant in joined {
                participants.append(participant)
                polled.append(pollfd(fd: participant.fd, events: Int16(POLLIN), revents: 0))
            }
            guard !polled.isEmpty else {
                usleep(20_000)
                continue
            }
            let ready = poll(&polled, nfds_t(polled.count), 100)
            guard ready > 0 else { continue }
            for i in polled.indices where polled[i].revents & Int16(POLLIN) != 0 {
                let participant = participants[i]
                while true {
                    let n = buffer.withUnsafeMutableBytes { recv(participant.fd, $0.baseAddress, $0.count, 0) }
                    guard n > 0 else { break }
                    buffer.withUnsafeBytes { participant.count(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                }
            }
        }
        handoff.workerEnded()
    }
}
