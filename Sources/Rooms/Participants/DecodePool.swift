import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One participant's queued video, as the decode threads see it.
protocol DecodeJob: AnyObject, Sendable {
    /// Decodes (or skips) the next queued frame; true when more are queued, so the job goes back in line.
    func decodeNext() -> Bool
}

/// The threads that decode participants' video, so the UDP receive thread only parses, decrypts and routes: a
/// slow or hostile sender costs decode time, never another participant's packets.
///
/// A job waits in one line, first come first served, and gets one frame per turn: a sender with a backlog goes
/// back to the end of the line, so everyone's next frame is decoded before its second. Its owner schedules a job
/// only when its queue becomes non-empty and it is not in line already. Threads start with the first job and end
/// with `stop()`, which the pool's owner calls when it goes. One lock: `condition`.
final class DecodePool: @unchecked Sendable {
    let threadCount: Int
    private let condition = NSCondition()
    /// Jobs in line from `head` on; the consumed prefix is dropped in place now and then (no allocation once the
    /// capacity has grown to the most jobs ever waiting).
    private var line: [any DecodeJob] = []
    private var head = 0
    private var running = 0
    private var started = false
    private var stopped = false

    /// `threads`: at least 1.
    init(threads: Int) {
        threadCount = max(1, threads)
        line.reserveCapacity(64)
    }

    static let niceness: Int32 = 10

    /// One thread per core, and at least two: one decoder can never stall the other.
    static var defaultThreads: Int { max(2, ProcessInfo.processInfo.activeProcessorCount) }

    /// Puts `job` at the end of the line.
    func schedule(_ job: any DecodeJob) {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else { return }
        if !started {
            started = true
            startThreads()
        }
        enqueue(job)
    }

    /// Under `condition`.
    private func enqueue(_ job: any DecodeJob) {
        if head > 32, head * 2 > line.count {
            line.removeFirst(head)
            head = 0
        }
        line.append(job)
        condition.signal()
    }

    /// Blocks until no job is waiting or being decoded.
    func waitUntilIdle() {
        condition.lock()
        defer { condition.unlock() }
        while head < line.count || running > 0 { condition.wait() }
    }

    /// Ends the threads once their current frame is done; jobs still waiting are dropped.
    func stop() {
        condition.lock()
        stopped = true
        line.removeAll()
        head = 0
        condition.broadcast()
        condition.unlock()
    }

    private func startThreads() {
        for index in 0..<threadCount {
            let thread = Thread { [self] in
                // Decoding is the work that can wait: under load the receive thread and the rooms' clocks come
                // first (nice 10 weighs a tenth of nice 0), so a costly camera slows only pictures, never packets.
                // On Linux the nice value is per thread, and `who` 0 is the calling one.
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceness)
                while let job = next() {
                    let more = job.decodeNext()
                    finished(job, more: more)
                }
            }
            thread.name = "cohost-decode-\(index)"
            thread.start()
        }
    }

    private func next() -> (any DecodeJob)? {
        condition.lock()
        defer { condition.unlock() }
        while !stopped && head == line.count { condition.wait() }
        guard !stopped else { return nil }
        let job = line[head]
        head += 1
        running += 1
        return job
    }

    private func finished(_ job: any DecodeJob, more: Bool) {
        condition.lock()
        defer { condition.unlock() }
        running -= 1
        if more && !stopped {
            enqueue(job)
        } else {
            // `waitUntilIdle` may be waiting for this.
            condition.broadcast()
        }
    }
}
