import Foundation
import Testing
@testable import Publishing

/// Hands out the given values in order (then repeats the last): pins the "random" part of each wait.
final class FixedRandom: @unchecked Sendable {  // guarded by lock
    private let lock = NSLock()
    private var values: [Double]

    init(_ values: [Double]) { self.values = values }

    var source: @Sendable () -> Double {
        { [self] in lock.withLock { values.count > 1 ? values.removeFirst() : values.first ?? 0 } }
    }
}

@Suite("Reconnect policy and output options")
struct ReconnectPolicyTests {
    @Test("default windows grow 0–2, 2–4, 4–6 s, then stay at 6–10 s")
    func defaultWindows() {
        let policy = ReconnectPolicy(options: OutputOptions())
        #expect(
            (1...5).map(policy.window(forRetry:)) == [0...2000, 2000...4000, 4000...6000, 6000...10_000, 6000...10_000])
        #expect(policy.window(forRetry: 1_000_000) == 6000...10_000)
        #expect(policy.window(forRetry: .max) == 6000...10_000)
    }

    @Test("custom bounds: windows of initialMaxMs until 60 % of maxMs, then 60–100 % of maxMs")
    func customWindows() {
        let policy = ReconnectPolicy(options: OutputOptions(backoff: BackoffOptions(initialMaxMs: 500, maxMs: 3000)))
        #expect((1...5).map(policy.window(forRetry:)) == [0...500, 500...1000, 1000...1500, 1500...3000, 1800...3000])
        let flat = ReconnectPolicy(options: OutputOptions(backoff: BackoffOptions(initialMaxMs: 5000, maxMs: 5000)))
        #expect((1...3).map(flat.window(forRetry:)) == [0...5000, 3000...5000, 3000...5000])
    }

    @Test("the wait is the window's start plus its width times the random value")
    func exactDelays() {
        let random = FixedRandom([0, 0.5, 0.999, 0.25, 1.0])
        let policy = ReconnectPolicy(options: OutputOptions(), random: random.source)
        #expect((1...5).map { policy.delayMs(beforeRetry: $0) } == [0, 3000, 5998, 7000, 9999])
    }

    @Test("maxRetries bounds the retries; nil never gives up; 0 allows none")
    func retryLimits() {
        let two = ReconnectPolicy(options: OutputOptions(maxRetries: 2), random: { 0.5 })
        #expect([1, 2, 3].map { two.delayMs(beforeRetry: $0) } == [1000, 3000, nil])
        let none = ReconnectPolicy(options: OutputOptions(maxRetries: 0), random: { 0.5 })
        #expect(none.delayMs(beforeRetry: 1) == nil)
        let forever = ReconnectPolicy(options: OutputOptions(), random: { 0.5 })
        #expect(forever.delayMs(beforeRetry: 100_000) == 8000)
    }

    @Test("with the system random source, waits fall inside their window and vary")
    func realRandomness() {
        let policy = ReconnectPolicy(options: OutputOptions())
        for retry in 1...5 {
            let delays = (0..<200).compactMap { _ in policy.delayMs(beforeRetry: retry) }
            #expect(delays.count == 200)
            #expect(delays.allSatisfy { policy.window(forRetry: retry).contains($0) })
            #expect(Set(delays).count > 100)  // randomised, not a fixed step
        }
    }

    @Test("each out-of-range option is refused with its field and limit")
    func validation() {
        let cases: [(OutputOptions, String)] = [
            (OutputOptions(queueLimitMs: 99), "queueMs must be within 100...10000, got 99"),
            (OutputOptions(queueLimitMs: 10_001), "queueMs must be within 100...10000, got 10001"),
            (OutputOptions(maxRetries: -1), "maxRetries must be within 0...100000, got -1"),
            (
                OutputOptions(backoff: BackoffOptions(initialMaxMs: 50)),
                "backoff.initialMaxMs must be within 100...60000, got 50"
            ),
            (
                OutputOptions(backoff: BackoffOptions(maxMs: 700_000)),
                "backoff.maxMs must be within 100...600000, got 700000"
            ),
            (
                OutputOptions(backoff: BackoffOptions(initialMaxMs: 3000, maxMs: 2000)),
                "backoff.maxMs must be at least backoff.initialMaxMs (3000), got 2000"
            ),
        ]
        for (options, message) in cases {
            #expect(throws: OutputOptionsError.self) { try options.validate() }
            do { try options.validate() } catch { #expect(error.message == message) }
        }
        #expect(throws: Never.self) { try OutputOptions(queueLimitMs: 100, maxRetries: 0).validate() }
    }
}
