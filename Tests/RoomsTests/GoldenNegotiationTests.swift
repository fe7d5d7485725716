import Foundation
import Testing
@testable import Rooms

/// The offers in Tests/WebRTC/samples (Chromium, aiortc and the other stacks in SOURCES.md there; Firefox's,
/// Safari's and OBS's are hand-written to their documented shape) through the negotiator, their answers compared
/// byte for byte with the goldens in Tests/RoomsTests/GoldenAnswers. The random parts (ICE credentials, SSRCs, SDES
/// keys) come from a seeded generator, so an answer changes only when the negotiator does. `COHOST_UPDATE_GOLDEN=1 swift test --filter GoldenNegotiationTests` rewrites them; review
/// the diff before committing it.
@Suite struct GoldenNegotiationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let samples = root.appendingPathComponent("Tests/WebRTC/samples")
    static let goldens = root.appendingPathComponent("Tests/RoomsTests/GoldenAnswers")
    static let identity = WebRTCIdentity(
        fingerprint:
            "sha-256 0F:1E:2D:3C:4B:5A:69:78:87:96:A5:B4:C3:D2:E1:F0:0F:1E:2D:3C:4B:5A:69:78:87:96:A5:B4:C3:D2:E1:F0",
        addresses: ["127.0.0.1"])

    /// SplitMix64: a small, fixed sequence for a fixed seed.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static var offers: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: samples.path)) ?? []
        return names.filter { $0.hasSuffix(".sdp") && $0.contains("-offer") && !$0.hasPrefix("cohost-answer") }.sorted()
    }

    /// The offers whose answer from a running server was recorded beside them.
    static var recorded: [String] {
        offers.filter {
            FileManager.default.fileExists(atPath: samples.appendingPathComponent("cohost-answer-to-\($0)").path)
        }
    }

    /// The answer, or the refusal as `<code>: <message>` (a golden too: an offer Cohost refuses must keep being
    /// refused the same way).
    static func answer(to offer: String) -> String {
        var random = Seeded(state: 20_261_128)
        do {
            return try JoinNegotiator.negotiate(
                offer: offer, address: "127.0.0.1", port: 7882, sessionID: 1, audioOnly: false, webRTC: identity,
                using: &random
            ).answer
        } catch {
            return "\(error.code): \(error.message)\n"
        }
    }

    @Test func theSamplesAreThere() {
        #expect(Self.offers.contains("chromium-offer.sdp") && Self.offers.contains("aiortc-offer.sdp"))
    }

    @Test(arguments: offers) func eachOfferIsAnsweredAsItsGoldenSays(_ name: String) throws {
        let offer = try String(contentsOf: Self.samples.appendingPathComponent(name), encoding: .utf8)
        let answer = Self.answer(to: offer)
        let golden = Self.goldens.appendingPathComponent(name.replacingOccurrences(of: ".sdp", with: ".answer.sdp"))
        if ProcessInfo.processInfo.environment["COHOST_UPDATE_GOLDEN"] == "1" {
            try FileManager.default.createDirectory(at: Self.goldens, withIntermediateDirectories: true)
            try Data(answer.utf8).write(to: golden)
        }
        let expected = try String(contentsOf: golden, encoding: .utf8)
        #expect(answer == expected, "\(name): the answer changed; see GoldenAnswers/README.md")
    }

    /// The answers a running server gave to the same offers when they were recorded (samples/cohost-answer-to-*),
    /// with what differs per run (credentials, SSRCs, keys, ports, the session number) masked: the negotiator's
    /// answer is the one the server sends.
    @Test(arguments: recorded) func aRecordedServerAnswerMatchesOnceItsRandomPartsAreMasked(_ name: String) throws {
        let offer = try String(contentsOf: Self.samples.appendingPathComponent(name), encoding: .utf8)
        let recorded = try String(
            contentsOf: Self.samples.appendingPathComponent("cohost-answer-to-\(name)"), encoding: .utf8)
        #expect(Self.masked(Self.answer(to: offer)) == Self.masked(recorded))
    }

    /// Lines with their run-specific values replaced by `*`.
    static func masked(_ sdp: String) -> [String] {
        let patterns: [(String, String)] = [
            (#"^o=- \d+ \d+"#, "o=- * *"),
            (#"cohost-\d+"#, "cohost-*"),
            (#"^a=ice-ufrag:.*$"#, "a=ice-ufrag:*"),
            (#"^a=ice-pwd:.*$"#, "a=ice-pwd:*"),
            (#"^a=fingerprint:.*$"#, "a=fingerprint:*"),
            (#"^a=ssrc:\d+"#, "a=ssrc:*"),
            (#"inline:[A-Za-z0-9+/=]+"#, "inline:*"),
            (#"^(m=\w+) \d+ "#, "$1 * "),
            (#"^(a=candidate:\S+ \d+ \S+ \d+ \S+) \d+ "#, "$1 * "),
        ]
        return sdp.split(separator: "\r\n", omittingEmptySubsequences: true).map { line in
            var line = String(line)
            for (pattern, template) in patterns {
                line = line.replacingOccurrences(of: pattern, with: template, options: .regularExpression)
            }
            return line
        }
    }
}
