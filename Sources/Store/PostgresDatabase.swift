import CPostgres
import Foundation
import Rooms

/// One connection to PostgreSQL (libpq), its handle owned here: every call sends one statement with text
/// parameters and copies the rows out before the result is freed, so no C pointer leaves this type. Calls hold
/// `lock` (a libpq connection serves one thread at a time). A broken connection is reset once and the statement
/// sent again; errors carry the server's or libpq's message. Every statement is cut off after
/// `statementTimeoutMs` by the server, so a stuck database cannot hold a caller (the heartbeat) for longer.
final class PostgresDatabase: @unchecked Sendable {
    private var connection: OpaquePointer
    private let lock = NSLock()
    static let statementTimeoutMs = 5000

    /// `url`: `postgres://user:password@host:port/database?options` (libpq's connection URI).
    init(url: String) throws(StoreError) {
        guard let connection = PQconnectdb(url) else { throw StoreError("libpq could not allocate a connection") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.message(PQerrorMessage(connection))
            PQfinish(connection)
            throw StoreError("cannot connect to PostgreSQL: \(message)")
        }
        self.connection = connection
        // Not shared yet: no other thread can hold the connection.
        try configure()
    }

    deinit { PQfinish(connection) }

    /// Under `lock`: what each session needs, again after a reset.
    private func configure() throws(StoreError) {
        _ = try send("SET statement_timeout = \(Self.statementTimeoutMs)", [])
    }

    /// Runs one statement with `parameters` bound to $1, $2, … (nil = NULL); returns its rows as text (nil = NULL).
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws(StoreError) -> [[String?]] {
        lock.lock()
        defer { lock.unlock() }
        do { return try send(sql, parameters) } catch {
            guard PQstatus(connection) != CONNECTION_OK else { throw error }
            PQreset(connection)
            guard PQstatus(connection) == CONNECTION_OK else {
                throw StoreError("PostgreSQL connection lost: \(Self.message(PQerrorMessage(connection)))")
            }
            try configure()
            return try send(sql, parameters)
        }
    }

    /// Statements in one transaction (the same connection throughout), rolled back when `body` throws.
    func transaction<T>(
        _ body: (_ run: (String, [String?]) throws(StoreError) -> [[String?]]) throws(StoreError) -> T
    )
        throws(StoreError) -> T
    {
        lock.lock()
        defer { lock.unlock() }
        _ = try send("BEGIN", [])
        do {
            let result = try body { sql, parameters throws(StoreError) in try send(sql, parameters) }
            _ = try send("COMMIT", [])
            return result
        } catch {
            _ = try? send("ROLLBACK", [])
            throw error
        }
    }

    /// Under `lock`.
    private func send(_ sql: String, _ parameters: [String?]) throws(StoreError) -> [[String?]] {
        // strdup'd copies, alive for the call: libpq reads them before PQexecParams returns.
        let values: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.flatMap { strdup($0) } }
        defer { for value in values { free(value) } }
        let result = values.map { UnsafePointer($0) }.withUnsafeBufferPointer { pointers in
            PQexecParams(connection, sql, Int32(parameters.count), nil, pointers.baseAddress, nil, nil, 0)
        }
        guard let result else {
            throw StoreError("PostgreSQL: \(Self.message(PQerrorMessage(connection))) (in: \(sql.prefix(80)))")
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK:
            return []
        case PGRES_TUPLES_OK:
            let rows = PQntuples(result), columns = PQnfields(result)
            return (0..<rows).map { row in
                (0..<columns).map { column in
                    PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
                }
            }
        default:
            throw StoreError("PostgreSQL: \(Self.message(PQresultErrorMessage(result))) (in: \(sql.prefix(80)))")
        }
    }

    private static func message(_ text: UnsafePointer<CChar>?) -> String {
        text.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "unknown error"
    }
}
