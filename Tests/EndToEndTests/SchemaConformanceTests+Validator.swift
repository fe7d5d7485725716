import Foundation
import Testing

extension EndToEnd {
    /// `scripts/validate-against-schemas.py` can fail: each deliberately wrong record is refused with a message
    /// naming the problem, and the same records made right pass.
    @Suite struct SchemaValidatorTests {
        static let time = "2025-01-31T12:00:00.000Z"

        static func http(
            _ method: String, _ path: String, _ status: Int, _ body: String, type: String = "application/json"
        ) -> String {
            let record: [String: Any] = [
                "kind": "http", "method": method, "path": path, "status": status, "contentType": type, "body": body,
            ]
            return String(decoding: try! JSONSerialization.data(withJSONObject: record), as: UTF8.self)
        }

        static func event(_ body: String) -> String {
            String(
                decoding: try! JSONSerialization.data(withJSONObject: ["kind": "event", "body": body]), as: UTF8.self)
        }

        @Test func recordsTrueToTheSchemasPass() throws {
            let outcome = try SchemaValidator.run(jsonLines: [
                Self.http(
                    "GET", "/v1/rooms/r1", 401, #"{"error":{"code":"token_expired","message":"token has expired"}}"#),
                Self.http("PUT", "/v1/rooms/r1/layout", 200, #"{"mode":"grid","regions":[]}"#),
                Self.http("DELETE", "/v1/rooms/r1", 204, ""),
                Self.event(
                    #"{"type":"participant_left","room":"r1","time":"\#(Self.time)","userId":"a","reason":"kicked"}"#),
                Self.event(
                    #"{"type":"voice_levels","room":"r1","time":"\#(Self.time)","levels":{"a":40,"b":0},"activeSpeaker":"a"}"#
                ),
                Self.event(#"{"type":"active_speaker","room":"r1","time":"\#(Self.time)","userId":"alice"}"#),
            ])
            #expect(outcome.status == 0, "\(outcome.stderr)")
            #expect(outcome.stdout.contains("schemas ok: 3 responses, 3 events"))
        }

        /// Deliberately wrong records, each with the words its refusal must contain.
        static let wrongRecords: [(record: String, expected: String)] = [
            (
                SchemaValidatorTests.event(
                    #"{"type":"participant_joined","room":"r1","time":"\#(SchemaValidatorTests.time)","userId":"a","extra":1}"#
                ), "'extra' was unexpected"
            ),
            (
                SchemaValidatorTests.event(
                    #"{"type":"participant_left","room":"r1","time":"\#(SchemaValidatorTests.time)","userId":"a","reason":"bored"}"#
                ), "'bored' is not one of"
            ),
            (
                SchemaValidatorTests.event(
                    #"{"type":"voice_levels","room":"r1","time":"\#(SchemaValidatorTests.time)","levels":{"a":101}}"#),
                "101 is greater than the maximum of 100"
            ),
            (
                SchemaValidatorTests.event(#"{"type":"room_closed","room":"r1","time":"yesterday"}"#),
                "'yesterday' does not match"
            ),
            (
                SchemaValidatorTests.event(
                    #"{"type":"active_speaker","room":"r1","time":"\#(SchemaValidatorTests.time)","userId":null}"#),
                "None is not of type 'string'"
            ),
            (
                SchemaValidatorTests.event(
                    #"{"type":"party_started","room":"r1","time":"\#(SchemaValidatorTests.time)"}"#),
                "is not valid under any of the given schemas"
            ),
            (
                SchemaValidatorTests.http("PUT", "/v1/rooms/r1/layout", 200, #"{"mode":"grid","regions":"none"}"#),
                "'none' is not of type 'array'"
            ),
            (SchemaValidatorTests.http("GET", "/v1/rooms/r1", 418, "{}"), "status 418 is not documented"),
            (
                SchemaValidatorTests.http(
                    "GET", "/v1/rooms/r1", 401, #"{"error":{"code":"forbidden","message":"m"}}"#),
                "'forbidden' is not one of"
            ),
            (
                SchemaValidatorTests.http("GET", "/v1/rooms/r1", 404, #"{"error":{"code":"not_found"}}"#),
                "'message' is a required property"
            ),
            (SchemaValidatorTests.http("DELETE", "/v1/rooms/r1", 204, "surprise"), "documented without a body"),
            (
                SchemaValidatorTests.http("GET", "/v1/rooms/r1/snapshot", 200, "", type: "image/jpeg"),
                "content type 'image/jpeg' is not documented"
            ),
            (SchemaValidatorTests.http("GET", "/v2/things", 200, "{}"), "path is not in openapi.yaml"),
        ]

        /// One run over all of them (the script starts in about a second): each record is refused on its own line,
        /// `record N: …`, with its own message.
        @Test func eachWrongRecordFailsValidationWithItsOwnMessage() throws {
            let outcome = try SchemaValidator.run(jsonLines: Self.wrongRecords.map(\.record))
            #expect(outcome.status == 1)
            let lines = outcome.stderr.split(separator: "\n").map(String.init)
            for (i, wrong) in Self.wrongRecords.enumerated() {
                let own = lines.filter { $0.hasPrefix("record \(i + 1): ") }
                #expect(own.contains { $0.contains(wrong.expected) }, "record \(i + 1): \(own)")
            }
        }
    }
}
