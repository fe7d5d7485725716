import Foundation

// The API's answers are CohostAPI's types, the server's own; `--json` prints the answer itself.

extension Decodable {
    /// Decodes an API answer; a body that does not fit says so as a refusal of the server's (exit 1), not a crash.
    public static func decoded(from data: Data) throws -> Self {
        do { return try JSONDecoder().decode(Self.self, from: data) } catch {
            throw ClientError.refused(
                status: 200, code: "unexpected_answer",
                message: "the server's answer does not read as \(Self.self): \(error)")
        }
    }
}
