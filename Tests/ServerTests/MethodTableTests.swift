import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Prometheus
import Rooms
import Testing

@testable import Server

/// Every path answers 405 with `Allow` for the methods it does not take, and every method the table lists is routed.
@Suite(.serialized) struct MethodTableTests {
    static func uri(_ path: String) -> String {
        let concrete = path.split(separator: "/").map { part -> String in
            switch part {
            case ":room": "r1"
            case ":output": "o1"
            case ":user": "u1"
            case ":file": "x.js"
            default: String(part)
            }
        }
        return "/" + concrete.joined(separator: "/")
    }

    @Test func anUnlistedMethodIs405WithTheAllowedOnes() async throws {
        try await withApp(webDirectory: FileManager.default.temporaryDirectory.path) { client, _ in
            for (path, allowed) in MethodTable.api + MethodTable.pages {
                let allow = allowed.map(\.rawValue).joined(separator: ", ")
                for method in MethodTable.methods where !allowed.contains(method) {
                    try await client.execute(uri: Self.uri(path), method: method) {
                        #expect($0.status == .methodNotAllowed, "\(method) \(path)")
                        #expect($0.headers[.allow] == allow, "\(method) \(path)")
                        #expect(String(buffer: $0.body).contains("method_not_allowed"))
                    }
                }
            }
        }
    }

    @Test func everyListedMethodIsRouted() async throws {
        try await withApp(webDirectory: FileManager.default.temporaryDirectory.path) { client, _ in
            for (path, allowed) in MethodTable.api + MethodTable.pages {
                for method in allowed {
                    try await client.execute(uri: Self.uri(path), method: method) {
                        // A handler may refuse (no token, no room), but the router found one: not 405, and not the
                        // router's own 404 ("Not Found").
                        #expect($0.status != .methodNotAllowed, "\(method) \(path)")
                        #expect(
                            !($0.status == .notFound && String(buffer: $0.body).contains(#""message":"Not Found""#)),
                            "\(method) \(path) is not routed")
                    }
                }
            }
        }
    }
}
