/// A refused setting or config file. The message names the source to fix (flag, environment
/// variable, or file key and line) and never contains a secret.
public struct ServeConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
