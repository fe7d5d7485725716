/// Keyframe requests for one sender on behalf of all its receivers: any number of wishes (slots starting or
/// switching, receivers' PLI and FIR) become at most one request per `intervalMs`, and a wish made while the
/// interval runs is kept for its end, not lost. Time is passed in. Pure; confined to its owner.
public struct KeyframeCoalescer: Sendable {
    public static let defaultIntervalMs: Int64 = 300
    private let intervalMs: Int64
    private var wanted = false
    private var lastRequestMs: Int64?
    /// Wishes made, and requests sent.
    public private(set) var wishes = 0
    public private(set) var requests = 0

    public init(intervalMs: Int64 = defaultIntervalMs) { self.intervalMs = intervalMs }

    public mutating func want() {
        wanted = true
        wishes += 1
    }

    /// Whether a request goes to the sender now.
    public mutating func take(nowMs: Int64) -> Bool {
        guard wanted, lastRequestMs.map({ nowMs - $0 >= intervalMs }) ?? true else { return false }
        wanted = false
        lastRequestMs = nowMs
        requests += 1
        return true
    }
}
