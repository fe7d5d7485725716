import COpenSSL

/// A failure inside OpenSSL or a refused handshake; `message` carries OpenSSL's own reason when it gave one.
public struct DTLSError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    /// `during` plus every reason on OpenSSL's (thread-local) error queue, which this empties.
    static func openSSL(_ during: String) -> DTLSError {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return DTLSError(reasons.isEmpty ? during : "\(during): \(reasons.joined(separator: "; "))")
    }

    public var description: String { message }
}
