/// A failure from libsrtp2 (its `srtp_err_status_t` value) or from checks done before calling it.
///
/// Checks made in Swift reuse libsrtp's codes so callers have one thing to switch on:
/// `2` (bad_param) for packets or keys of the wrong shape, `21` (parse_err) for malformed SDES key params.
public struct SRTPError: Error, CustomStringConvertible, Equatable {
    /// The libsrtp2 status code (`srtp_err_status_t`).
    public let status: Int32
    /// What went wrong, for logs and error responses.
    public let message: String

    public init(status: Int32, message: String) {
        self.status = status
        self.message = message
    }

    /// The packet failed authentication (tampered, wrong key, or not SRTP at all).
    public var isAuthFailure: Bool { status == Self.authFail }
    /// The packet index was already seen or is older than the replay window.
    public var isReplay: Bool { status == Self.replayFail || status == Self.replayOld }

    public var description: String { "SRTP error \(status): \(message)" }

    static let fail: Int32 = 1
    static let badParam: Int32 = 2
    static let authFail: Int32 = 7
    static let replayFail: Int32 = 9
    static let replayOld: Int32 = 10
    static let parseError: Int32 = 21

    /// Wraps a libsrtp status with a readable message (libsrtp2 has no strerror of its own).
    init(libsrtp status: UInt32, during operation: String) {
        let code = Int32(bitPattern: status)
        self.init(status: code, message: "\(operation): \(Self.describe(code))")
    }

    static func badParameter(_ message: String) -> SRTPError { .init(status: badParam, message: message) }
    static func parse(_ message: String) -> SRTPError { .init(status: parseError, message: message) }

    static func describe(_ code: Int32) -> String {
        switch code {
        case 0: "ok"
        case 1: "unspecified failure"
        case 2: "unsupported parameter"
        case 3: "could not allocate memory"
        case 4: "could not deallocate"
        case 5: "could not initialise"
        case 6: "cannot process that much data"
        case 7: "authentication failure"
        case 8: "cipher failure"
        case 9: "replayed packet (index already seen)"
        case 10: "replayed packet (index older than the replay window)"
        case 11: "algorithm failed its self-test"
        case 12: "unsupported operation"
        case 13: "no matching context"
        case 14: "unable to perform the check"
        case 15: "key expired"
        case 16: "socket error"
        case 17: "signal error"
        case 18: "bad nonce"
        case 19: "read failure"
        case 20: "write failure"
        case 21: "parse error"
        case 22: "encode error"
        case 23: "semaphore error"
        case 24: "pfkey error"
        case 25: "invalid MKI"
        case 26: "packet index too old"
        case 27: "packet index advanced, reset needed"
        default: "unknown libsrtp status"
        }
    }
}
