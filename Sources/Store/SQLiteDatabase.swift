import CSQLite
import Foundation
import Rooms

/// One SQLite database file, its handle owned here: statements are prepared, bound, stepped and finalized inside
/// each call, so no C pointer leaves this type. Every call holds `lock` (SQLite's handle is used by one thread at
/// a time); errors carry SQLite's own message.
final class SQLiteDatabase: @unchecked Sendable {
    enum Value: Equatable {
        case integer(Int64)
        case text(String)
        case blob([UInt8])
        case null
    }

    private let handle: OpaquePointer
    private let lock = NSLock()
    let path: String

    /// Opens (creating) the file; WAL, so a reader never waits for the writer, and a 5 s busy wait for another
    /// process holding the lock.
    init(path: String) throws(StoreError) {
        var db: OpaquePointer?
        let status = sqlite3_open_v2(
            path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_close(db)
            throw StoreError("cannot open the SQLite store \(path): \(message)")
        }
        handle = db
        self.path = path
        // Readable by the server alone; SQLite gives its WAL and shared-memory files the database's mode.
        _ = chmod(path, 0o600)
        sqlite3_busy_timeout(db, 5000)
        try execute("PRAGMA journal_mode=WAL")
        try execute("PRAGMA synchronous=NORMAL")
        try execute("PRAGMA foreign_keys=ON")
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs one statement (or a `;`-separated script without parameters).
    func execute(_ sql: String) throws(StoreError) {
        lock.lock()
        defer { lock.unlock() }
        do {
            var error: UnsafeMutablePointer<CChar>?
            guard sqlite3_exec(handle, sql, nil, nil, &error) == SQLITE_OK else {
                let message = error.map { String(cString: $0) } ?? lastError
                sqlite3_free(error)
                throw StoreError("SQLite: \(message) (in: \(sql.prefix(80)))")
            }
        }
    }

    /// Runs one statement with `parameters` bound to ?1, ?2, …; returns its rows.
    @discardableResult
    func query(_ sql: String, _ parameters: [Value] = []) throws(StoreError) -> [[Value]] {
        lock.lock()
        defer { lock.unlock() }
        do {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
                throw StoreError("SQLite: \(lastError) (in: \(sql.prefix(80)))")
            }
            defer { sqlite3_finalize(statement) }
            for (i, value) in parameters.enumerated() {
                let index = Int32(i + 1)
                let status: Int32
                switch value {
                case .integer(let v): status = sqlite3_bind_int64(statement, index, v)
                case .text(let v): status = cohost_sqlite3_bind_text(statement, index, v, -1)
                case .blob(let v):
                    status = v.withUnsafeBytes {
                        cohost_sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count))
                    }
                case .null: status = sqlite3_bind_null(statement, index)
                }
                guard status == SQLITE_OK else { throw StoreError("SQLite: \(lastError) (binding ?\(index))") }
            }
            var rows: [[Value]] = []
            while true {
                let step = sqlite3_step(statement)
                if step == SQLITE_DONE { break }
                guard step == SQLITE_ROW else { throw StoreError("SQLite: \(lastError) (in: \(sql.prefix(80)))") }
                rows.append((0..<sqlite3_column_count(statement)).map { column(statement, $0) })
            }
            return rows
        }
    }

    /// `body` in one transaction, rolled back when it throws.
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    private func column(_ statement: OpaquePointer, _ i: Int32) -> Value {
        switch sqlite3_column_type(statement, i) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, i))
        case SQLITE_TEXT: return .text(String(cString: sqlite3_column_text(statement, i)))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, i))
            guard count > 0, let bytes = sqlite3_column_blob(statement, i) else { return .blob([]) }
            return .blob([UInt8](UnsafeRawBufferPointer(start: bytes, count: count)))
        default: return .null
        }
    }

    /// Under `lock`.
    private var lastError: String { String(cString: sqlite3_errmsg(handle)) }
}
