/// Every refusal's body: `{"error":{"code","message"}}`, with the HTTP status (protocol/openapi.yaml `Error`).
public struct ErrorBody: Codable, Sendable, Equatable {
    public struct Detail: Codable, Sendable, Equatable {
        /// Machine-readable, snake_case; clients branch on it.
        public var code: String
        /// For people; may change between versions.
        public var message: String
    }
    public var error: Detail

    public init(code: String, message: String) { error = Detail(code: code, message: message) }
}
