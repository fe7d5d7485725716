import Foundation

/// What an RTMP publisher's worker needs from outside itself: connections, a clock and waiting.
///
/// `LibRTMPEnvironment` is the real one. The seam exists so the reconnect state machine, the attempt
/// numbers and the backoff schedule can be tested exactly, without servers or real sleeps.
protocol PublisherEnvironment: Sendable {
    /// Connects and issues `publish`; blocks. A refusal that retrying cannot fix throws with `isFinal`.
    func connect(url: String) throws(OutputIOError) -> any PublishingConnection
    /// Monotonic seconds.
    func now() -> Double
    /// Waits `seconds`, or less when a stop is requested on `core`; false when the stop came first.
    func wait(seconds: Double, core: OutputCore) -> Bool
}

/// One established publishing connection. Used by the worker thread only.
protocol PublishingConnection: AnyObject {
    /// The socket `stop` may shut down to unblock a stuck write; -1 when there is none.
    var socket: Int32 { get }
    func write(_ tag: FLVTag) throws(OutputIOError)
    /// Reads what the server sent (pings, acknowledgements) without blocking; throws when it hung up.
    func serviceIncoming() throws(OutputIOError)
}

/// librtmp connections, the monotonic clock, and waits on the output's condition (so `stop` cuts them short).
struct LibRTMPEnvironment: PublisherEnvironment {
    var destinations = DestinationPolicy()

    func connect(url: String) throws(OutputIOError) -> any PublishingConnection {
        try RTMPSession.connect(url: url, destinations: destinations)
    }

    func now() -> Double { ProcessInfo.processInfo.systemUptime }

    func wait(seconds: Double, core: OutputCore) -> Bool { core.sleep(seconds: seconds) }
}
