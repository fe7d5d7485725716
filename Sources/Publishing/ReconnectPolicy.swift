/// When an output retries after losing (or failing to make) its connection, and when it gives up.
///
/// Waits are randomised inside a window that grows with each consecutive retry, so that many outputs
/// cut off together (a server restart) do not all come back at the same instant. With the default
/// options the windows are 0–2 s, 2–4 s, 4–6 s, then 6–10 s for every later retry.
/// The random source is injected so tests can pin exact waits.
public struct ReconnectPolicy: Sendable {
    public let backoff: BackoffOptions
    public let maxRetries: Int?
    /// Uniform in 0..<1.
    private let random: @Sendable () -> Double

    public init(options: OutputOptions, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        backoff = options.backoff
        maxRetries = options.maxRetries
        self.random = random
    }

    /// The wait window in milliseconds before retry number `retry` (1-based).
    ///
    /// Window n is [(n−1)·s, n·s] with s = `initialMaxMs` while n·s stays within 60 % of `maxMs`;
    /// after that it is [min((n−1)·s, 60 % of maxMs), maxMs]: still random, never longer than `maxMs`.
    public func window(forRetry retry: Int) -> ClosedRange<Int> {
        let step = max(1, backoff.initialMaxMs)
        let steadyLow = backoff.maxMs * 3 / 5
        // Past steadyLow / step + 2 every window is the steady one: clamp so the products cannot overflow.
        let n = min(max(1, retry), steadyLow / step + 2)
        if n * step <= steadyLow { return (n - 1) * step...n * step }
        return min((n - 1) * step, steadyLow)...backoff.maxMs
    }

    /// Whether retry number `retry` (1-based) is allowed.
    public func allows(retry: Int) -> Bool {
        guard let maxRetries else { return true }
        return retry <= maxRetries
    }

    /// The wait in milliseconds before retry `retry`; nil when `maxRetries` does not allow it.
    public func delayMs(beforeRetry retry: Int) -> Int? {
        guard allows(retry: retry) else { return nil }
        let window = window(forRetry: retry)
        let unit = min(max(random(), 0), 0.999_999_999)
        return window.lowerBound + Int(Double(window.upperBound - window.lowerBound) * unit)
    }
}
