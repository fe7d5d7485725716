import Foundation

/// What a stream publisher's worker needs from outside itself: connections, a clock and waiting.
///
/// `LibRTMPEnvironment` and `SRTEnvironment` are the real ones. The seam exists so the reconnect state machine, the attempt
/// numbers and the backoff schedule can be tested exactly, without servers or real sleeps.
protocol PublisherEnvironment: Sendable {
    /// Why `url` cannot be published to, nil when it looks usable (checked once, before the worker starts).
    func urlProblem(_ url: String) -> String?
    /// Connects and issues `publish`; blocks. A refusal that retrying cannot fix throws with `isFinal`.
    func connect(url: String) throws(OutputIOError) -> any PublishingConnection
    /// Monotonic seconds.
    func now() -> Double
    /// Waits `seconds`, or less when a stop is requested on `core`; false when the stop came first.
    func wait(seconds: Double, core: OutputCore) -> Bool
}

extension PublisherEnvironment {
    func urlProblem(_ url: String) -> String? { OutputURL.rtmpProblem(url) }
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

/// SRT callers through libavformat's srt protocol (libsrt), the programme in MPEG-TS: the same reconnect machine
/// as RTMP. The host is checked against the destination rules at every connect.
struct SRTEnvironment: PublisherEnvironment {
    var destinations = DestinationPolicy()

    func urlProblem(_ url: String) -> String? { OutputURL.srtProblem(url) }

    func connect(url: String) throws(OutputIOError) -> any PublishingConnection {
        let host = OutputURL.srtHost(url)
        // Whether a name resolves, and why a connection failed, is network knowledge: told only for hosts the
        // operator listed.
        let told = destinations.allows(host: host)
        let vague = OutputIOError(description: "cannot connect to \(host):\(OutputURL.srtPort(url))")
        let address: String
        do { address = try SRTOutputConnection.resolve(host) } catch { throw told ? error : vague }
        // The address libsrt will connect to, checked here: a name cannot resolve into a refused network between
        // the check and the connect.
        if let refusal = destinations.refusal(host: host, addresses: IPAddress(address).map { [$0] } ?? []) {
            throw OutputIOError(description: vague.description, detail: refusal)
        }
        do { return try SRTOutputConnection(url: url, address: address) } catch { throw told ? error : vague }
    }

    func now() -> Double { ProcessInfo.processInfo.systemUptime }

    func wait(seconds: Double, core: OutputCore) -> Bool { core.sleep(seconds: seconds) }
}
