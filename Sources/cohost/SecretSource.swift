import Foundation
import ArgumentParser

/// Where a key's secret is read from: exactly one of `--secret` (`cohost token` only: it shows in ps),
/// `--secret-file` and COHOST_SECRET.
struct SecretSource {
    var flag: String?
    var file: String?
    var environment = ProcessInfo.processInfo.environment

    /// Refuses none and more than one; `places` names those the command offers.
    func checkGivenOnce(places: String) throws {
        let given = [flag != nil, file != nil, environment["COHOST_SECRET"] != nil].filter { $0 }.count
        guard given == 1 else { throw ValidationError("give the secret once: \(places)") }
    }

    /// The secret from the one place it was given (a file's trailing newline is not part of it).
    func read() throws -> String {
        if let flag { return flag }
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ValidationError("cannot read the secret file \(file)")
            }
            return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return environment["COHOST_SECRET"] ?? ""
    }
}
