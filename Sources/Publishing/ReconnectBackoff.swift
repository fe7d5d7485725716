/// How long an output waits before its next connection attempt.
///
/// Randomised so that many outputs cut off together (a server restart) do not all return at once.
public enum ReconnectBackoff {
    /// The window for the `attempt`-th consecutive failure (1-based): 0–2 s, 2–4 s, 4–6 s, then 6–10 s.
    public static func range(forAttempt attempt: Int) -> ClosedRange<Double> {
        switch attempt {
        case ...1: 0...2
        case 2: 2...4
        case 3: 4...6
        default: 6...10
        }
    }

    public static func delay(forAttempt attempt: Int) -> Double {
        var generator = SystemRandomNumberGenerator()
        return delay(forAttempt: attempt, using: &generator)
    }

    public static func delay<G: RandomNumberGenerator>(forAttempt attempt: Int, using generator: inout G) -> Double {
        Double.random(in: range(forAttempt: attempt), using: &generator)
    }
}
