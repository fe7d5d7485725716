import Foundation
import TOMLKit

/// A `cohost serve` config file: its top-level TOML keys, each with its value and line.
///
/// Parsing only turns TOML into plain values; which keys exist and what type each must have is
/// checked by `ServeSettings.resolve`, so a test can build a `ConfigFile` from text alone.
public struct ConfigFile: Sendable, Equatable {
    /// A TOML value, reduced to what settings need; other TOML types keep only their type name.
    public indirect enum Value: Sendable, Equatable {
        case string(String)
        case integer(Int)
        case boolean(Bool)
        case array([Value])
        /// A float, table, date or time: never a valid setting, kept for the error message.
        case other(typeName: String)

        /// The TOML type name, as said in errors ("found integer").
        public var typeName: String {
            switch self {
            case .string: "string"
            case .integer: "integer"
            case .boolean: "boolean"
            case .array: "array"
            case .other(let name): name
            }
        }
    }

    /// One top-level key: its value and the 1-based line it was written on (nil if not found in the text).
    public struct Entry: Sendable, Equatable {
        public let value: Value
        public let line: Int?
        public init(value: Value, line: Int?) {
            self.value = value
            self.line = line
        }
    }

    /// The file's path, as given (used in every message about it).
    public let path: String
    /// Top-level key → entry.
    public let entries: [String: Entry]

    public init(path: String, entries: [String: Entry]) {
        self.path = path
        self.entries = entries
    }

    /// Config files are a few hundred bytes; refuse anything absurd rather than read it all.
    public static let maxBytes = 1 << 20

    /// Reads and parses the file at `path`.
    public static func load(path: String) throws(ServeConfigError) -> ConfigFile {
        let data: Data
        guard FileManager.default.fileExists(atPath: path) else {
            throw ServeConfigError("config file \(path) does not exist")
        }
        do {
            let url = URL(fileURLWithPath: path)
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
            guard size <= maxBytes else {
                throw ServeConfigError("config file \(path) is \(size) bytes; the limit is \(maxBytes)")
            }
            data = try Data(contentsOf: url)
        } catch let error as ServeConfigError {
            throw error
        } catch {
            throw ServeConfigError("cannot read config file \(path): \(error.localizedDescription)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ServeConfigError("config file \(path) is not UTF-8 text")
        }
        return try parse(text, path: path)
    }

    /// Parses TOML `text`; `path` only names the file in errors.
    public static func parse(_ text: String, path: String) throws(ServeConfigError) -> ConfigFile {
        // toml++ reads a C string: a NUL byte would silently end the document early.
        guard !text.utf8.contains(0) else { throw ServeConfigError("config file \(path) contains a NUL byte") }
        guard text.utf8.count <= maxBytes else {
            throw ServeConfigError("config file \(path) is larger than \(maxBytes) bytes")
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ServeConfigError(
                "config file \(path) line \(error.source.begin.line), column \(error.source.begin.column): \(error.description)"
            )
        } catch {
            throw ServeConfigError("config file \(path): \(error)")
        }
        let lines = KeyLines(text)
        var entries: [String: Entry] = [:]
        for (key, value) in table {
            entries[key] = Entry(value: Value(value), line: lines.line(of: key))
        }
        return ConfigFile(path: path, entries: entries)
    }
}

extension ConfigFile.Value {
    init(_ toml: any TOMLValueConvertible) {
        switch toml.type {
        case .string: self = toml.string.map(Self.string) ?? .other(typeName: "string")
        case .int: self = toml.int.map(Self.integer) ?? .other(typeName: "integer")
        case .array: self = .array(toml.array.map { $0.map { Self($0) } } ?? [])
        case .double: self = .other(typeName: "float")
        case .bool: self = toml.bool.map(Self.boolean) ?? .other(typeName: "boolean")
        case .table: self = .other(typeName: "table")
        case .date: self = .other(typeName: "date")
        case .time: self = .other(typeName: "time")
        case .dateTime: self = .other(typeName: "date-time")
        }
    }
}

/// Finds the line where a top-level key is written: TOMLKit keeps no source positions for values,
/// so this scans the text for `key =`, `key.` (a dotted key), `"key" =` or a `[key]` / `[[key]]` header.
/// It ignores keys inside tables, which is enough: every setting is top-level, and an unknown table
/// is reported by its header.
struct KeyLines {
    private var firstLine: [String: Int] = [:]

    init(_ text: String) {
        var inTable = false
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if line.hasPrefix("[") {
                inTable = true
                let name = line.drop { $0 == "[" }.prefix { $0 != "]" && $0 != "." }
                record(Self.unquoted(name), index + 1)
                continue
            }
            guard !inTable, let first = line.first, first != "#" else { continue }
            let key: Substring
            if first == "\"" || first == "'" {
                key = line.dropFirst().prefix { $0 != first }
            } else {
                key = line.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
            }
            if !key.isEmpty { record(String(key), index + 1) }
        }
    }

    private mutating func record(_ key: String, _ line: Int) {
        if firstLine[key] == nil { firstLine[key] = line }
    }

    private static func unquoted(_ name: Substring) -> String {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        if let q = trimmed.first, q == "\"" || q == "'", trimmed.count >= 2, trimmed.last == q {
            return String(trimmed.dropFirst().dropLast())
        }
        return trimmed
    }

    func line(of key: String) -> Int? { firstLine[key] }
}
