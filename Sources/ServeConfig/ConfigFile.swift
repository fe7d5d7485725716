import Foundation

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

    /// Parses TOML `text` (`TOMLReader`); `path` only names the file in errors.
    public static func parse(_ text: String, path: String) throws(ServeConfigError) -> ConfigFile {
        guard text.utf8.count <= maxBytes else {
            throw ServeConfigError("config file \(path) is larger than \(maxBytes) bytes")
        }
        let keys: [TOMLReader.TopLevel]
        do { keys = try TOMLReader.read(text) } catch {
            throw ServeConfigError("config file \(path) line \(error.line), column \(error.column): \(error.message)")
        }
        var entries: [String: Entry] = [:]
        for key in keys { entries[key.key] = Entry(value: key.value, line: key.line) }
        return ConfigFile(path: path, entries: entries)
    }
}
