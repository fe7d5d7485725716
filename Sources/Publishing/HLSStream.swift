import Foundation

/// What an HLS output has packaged, as the HTTP layer serves it: the init segments, a window of segments with
/// their parts, and the playlist made from them. The packager writes (on its output's thread); any number of
/// requests read and wait (blocking playlist reload, a preload-hinted part) without polling: a waiter is resumed
/// by the write that satisfies it, by its timeout, or when the stream ends.
///
/// `@unchecked Sendable`: every mutable field is read and written with `lock` held.
public final class HLSStream: @unchecked Sendable {
    public let options: HLSOptions

    struct Part {
        let range: Range<Int>
        let durationMs: Int64
        let independent: Bool
    }

    struct Segment {
        let msn: Int
        let initIndex: Int
        let discontinuity: Bool
        let programDate: Date
        var bytes: [UInt8] = []
        var parts: [Part] = []
        /// Nil while the segment is being written.
        var durationMs: Int64?
    }

    /// What a request for one of the stream's files gets.
    public enum File: Equatable, Sendable {
        case media(bytes: [UInt8], contentType: String)
        case notFound
    }

    /// How a blocking playlist request ended.
    public enum Wait: Equatable, Sendable {
        case ready
        /// The requested segment is more than two beyond the next one (400 per RFC 8216bis §6.2.5.2).
        case tooFarAhead
        /// Nothing came within three target durations (503).
        case timedOut
    }

    private let lock = NSLock()
    private var inits: [Int: [UInt8]] = [:]
    private var segments: [Segment] = []
    private var nextMSN = 0
    private var discontinuitiesDropped = 0
    private var ended = false
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiter = 0

    private struct Waiter {
        let msn: Int
        let part: Int?
        let continuation: CheckedContinuation<Bool, Never>
        /// Answers with a timeout; cancelled when the waiter is answered first.
        var timer: Task<Void, Never>?
    }

    public init(options: HLSOptions) { self.options = options }

    // MARK: the packager's side

    func setInit(_ index: Int, bytes: [UInt8]) {
        lock.withLock { inits[index] = bytes }
    }

    /// Starts the next segment; the one before must have been closed.
    func openSegment(initIndex: Int, discontinuity: Bool, programDate: Date) {
        lock.withLock {
            segments.append(
                Segment(msn: nextMSN, initIndex: initIndex, discontinuity: discontinuity, programDate: programDate))
            nextMSN += 1
        }
    }

    /// Appends a part (one CMAF fragment) to the open segment.
    func addPart(_ fragment: [UInt8], durationMs: Int64, independent: Bool) {
        let ready: [CheckedContinuation<Bool, Never>] = lock.withLock {
            guard var last = segments.popLast() else { return [] }
            let start = last.bytes.count
            last.bytes.append(contentsOf: fragment)
            last.parts.append(Part(range: start..<last.bytes.count, durationMs: durationMs, independent: independent))
            segments.append(last)
            return takeSatisfiedWaiters()
        }
        for waiter in ready { waiter.resume(returning: true) }
    }

    /// Closes the open segment and drops the oldest beyond the window.
    func closeSegment(durationMs: Int64) {
        let ready: [CheckedContinuation<Bool, Never>] = lock.withLock {
            guard !segments.isEmpty, segments[segments.count - 1].durationMs == nil else { return [] }
            segments[segments.count - 1].durationMs = durationMs
            while segments.filter({ $0.durationMs != nil }).count > options.windowSegments {
                let dropped = segments.removeFirst()
                if dropped.discontinuity { discontinuitiesDropped += 1 }
            }
            let used = Set(segments.map(\.initIndex))
            inits = inits.filter { used.contains($0.key) }
            return takeSatisfiedWaiters()
        }
        for waiter in ready { waiter.resume(returning: true) }
    }

    /// Removes a segment that never got a part (the stream ended or restarted right after opening it).
    func dropEmptyOpenSegment() {
        lock.withLock {
            if let last = segments.last, last.durationMs == nil, last.parts.isEmpty {
                segments.removeLast()
                nextMSN -= 1
            }
        }
    }

    /// The output stopped: every waiter is answered now, and nothing is served any more.
    func end() {
        let all: [CheckedContinuation<Bool, Never>] = lock.withLock {
            ended = true
            segments.removeAll()
            inits.removeAll()
            defer { waiters.removeAll() }
            for waiter in waiters.values { waiter.timer?.cancel() }
            return waiters.values.map(\.continuation)
        }
        for waiter in all { waiter.resume(returning: false) }
    }

    // MARK: the HTTP side

    /// Waits (up to three target durations) until the playlist holds segment `msn` complete, or its part `part`
    /// (RFC 8216bis §6.2.5.2: `_HLS_msn`, `_HLS_part`); a later segment answers too.
    public func waitForPlaylist(msn: Int, part: Int?) async -> Wait {
        let tooFar: Bool = lock.withLock { msn > nextMSN + 1 }
        if tooFar { return .tooFarAhead }
        return await wait(msn: msn, part: part) ? .ready : .timedOut
    }

    /// The file `name` of this stream: `init<k>.mp4`, `s<msn>.m4s`, `p<msn>.<part>.m4s`. The part a preload hint
    /// names is waited for (up to three target durations); anything else not there is `notFound`.
    public func file(named name: String) async -> File {
        guard let parsed = Self.parse(name) else { return .notFound }
        switch parsed {
        case .initSegment(let index):
            return lock.withLock { inits[index].map { .media(bytes: $0, contentType: "video/mp4") } ?? .notFound }
        case .segment(let msn):
            return lock.withLock {
                guard let segment = segments.first(where: { $0.msn == msn }), segment.durationMs != nil else {
                    return .notFound
                }
                return .media(bytes: segment.bytes, contentType: "video/iso.segment")
            }
        case .part(let msn, let index):
            let hinted: Bool = lock.withLock {
                guard let open = segments.last, open.durationMs == nil, !ended else { return false }
                return open.msn == msn && open.parts.count == index
            }
            if hinted { _ = await wait(msn: msn, part: index) }
            return lock.withLock {
                guard let segment = segments.first(where: { $0.msn == msn }), index < segment.parts.count else {
                    return .notFound
                }
                return .media(
                    bytes: Array(segment.bytes[segment.parts[index].range]), contentType: "video/iso.segment")
            }
        }
    }

    /// The media playlist as it is now; nil before the first segment has anything to list. `query` (such as
    /// `token=…`) is appended to every URI in it, for players that cannot send a header.
    public func playlist(query: String? = nil) -> String? {
        lock.withLock {
            guard !ended, segments.contains(where: { !$0.parts.isEmpty }) else { return nil }
            return HLSPlaylist(
                options: options, segments: segments, firstMSN: segments.first?.msn ?? 0,
                discontinuitySequence: discontinuitiesDropped, query: query
            ).text
        }
    }

    // MARK: waiting

    private func isSatisfied(msn: Int, part: Int?) -> Bool {
        if ended { return true }
        guard let part else { return segments.contains { $0.msn >= msn && $0.durationMs != nil } }
        return segments.contains { ($0.msn == msn && $0.parts.count > part) || ($0.msn > msn && !$0.parts.isEmpty) }
    }

    /// Removes and returns the waiters whose condition now holds; call with `lock` held.
    private func takeSatisfiedWaiters() -> [CheckedContinuation<Bool, Never>] {
        var ready: [CheckedContinuation<Bool, Never>] = []
        for (id, waiter) in waiters where isSatisfied(msn: waiter.msn, part: waiter.part) {
            ready.append(waiter.continuation)
            waiter.timer?.cancel()
            waiters[id] = nil
        }
        return ready
    }

    private func resume(waiter id: Int, with value: Bool) {
        let waiter = lock.withLock { waiters.removeValue(forKey: id) }
        waiter?.timer?.cancel()
        waiter?.continuation.resume(returning: value)
    }

    /// True when the condition held within three target durations.
    private func wait(msn: Int, part: Int?) async -> Bool {
        let id: Int = lock.withLock {
            nextWaiter += 1
            return nextWaiter
        }
        let timeout = Duration.seconds(3 * options.targetDuration)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now: Bool? = lock.withLock {
                    if isSatisfied(msn: msn, part: part) { return !ended }
                    waiters[id] = Waiter(msn: msn, part: part, continuation: continuation)
                    return nil
                }
                if let now {
                    continuation.resume(returning: now)
                    return
                }
                let timer = Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    self?.resume(waiter: id, with: false)
                }
                lock.withLock { waiters[id]?.timer = timer }
            }
        } onCancel: {
            resume(waiter: id, with: false)
        }
    }

    // MARK: names

    enum Name: Equatable {
        case initSegment(Int)
        case segment(Int)
        case part(Int, Int)
    }

    static func parse(_ name: String) -> Name? {
        func number(_ text: Substring) -> Int? {
            guard !text.isEmpty, text.count <= 9, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(text)
        }
        if name.hasPrefix("init"), name.hasSuffix(".mp4") {
            return number(name.dropFirst(4).dropLast(4)).map { .initSegment($0) }
        }
        guard name.hasSuffix(".m4s") else { return nil }
        let stem = name.dropLast(4)
        if stem.hasPrefix("s") { return number(stem.dropFirst()).map { .segment($0) } }
        guard stem.hasPrefix("p") else { return nil }
        let pieces = stem.dropFirst().split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count == 2, let msn = number(pieces[0]), let part = number(pieces[1]) else { return nil }
        return .part(msn, part)
    }
}
