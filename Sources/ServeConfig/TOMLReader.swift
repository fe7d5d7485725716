/// Reads a `cohost serve` config file: TOML 1.0, every construct of it checked, with the top-level keys kept as
/// `ConfigFile.Value`s (strings, integers, booleans, arrays of them) and everything else kept only as its type name
/// (a table, a float, a date), which `ServeSettings.resolve` then refuses with the key's line.
///
/// Cohost reads TOML itself: TOMLKit 0.6 (over toml++ 3.4), the Swift TOML library at hand, aborts the process on
/// some malformed files (a failed assertion, e.g. on `[#`) instead of reporting them, and leaks on every file.
/// Bounded: nesting deeper than `maxDepth` is an error, so no input can exhaust the stack.
struct TOMLReader {
    struct SyntaxError: Error, Equatable {
        let line: Int
        let column: Int
        let message: String
    }

    /// One top-level key, with its value and the line it was first defined on.
    struct TopLevel: Equatable {
        var key: String
        var value: ConfigFile.Value
        var line: Int
    }

    static let maxDepth = 32

    private let bytes: [UInt8]
    private var i = 0
    private var line = 1
    private var lineStart = 0

    private init(_ text: String) {
        bytes = Array(text.utf8)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {  // a UTF-8 byte order mark
            i = 3
            lineStart = 3
        }
    }

    static func read(_ text: String) throws(SyntaxError) -> [TopLevel] {
        var reader = TOMLReader(text)
        return try reader.document()
    }

    // MARK: document

    private enum Kind { case value, table, header, arrayOfTables }

    private mutating func document() throws(SyntaxError) -> [TopLevel] {
        var out: [TopLevel] = []
        var kinds: [String: Kind] = [:]
        var headers: Set<[String]> = []
        var inTable = false
        while let c = peek() {
            switch c {
            case 0x20, 0x09: i += 1
            case 0x23: try comment()
            case 0x0A, 0x0D: try newline()
            case 0x5B:  // [
                let headerLine = line
                i += 1
                let isArray = peek() == 0x5B
                if isArray { i += 1 }
                skipBlanks()
                let path = try keyPath()
                skipBlanks()
                try expect(0x5D, "expected ']' to close the table header")
                if isArray { try expect(0x5D, "expected ']]' to close the array of tables header") }
                let top = path[0]
                switch (kinds[top], isArray) {
                case (nil, false):
                    kinds[top] = path.count == 1 ? .header : .table
                    out.append(TopLevel(key: top, value: .other(typeName: "table"), line: headerLine))
                case (nil, true):
                    kinds[top] = path.count == 1 ? .arrayOfTables : .table
                    let type = path.count == 1 ? "array of tables" : "table"
                    out.append(TopLevel(key: top, value: .other(typeName: type), line: headerLine))
                case (.value?, _):
                    throw error("'\(top)' is already a value; it cannot be a table", line: headerLine)
                case (.arrayOfTables?, _) where path.count == 1 && isArray: break
                case (.arrayOfTables?, _) where path.count > 1: break
                case (.arrayOfTables?, _):
                    throw error("'\(top)' is already an array of tables", line: headerLine)
                case (_, true) where path.count == 1:
                    throw error("'\(top)' is already a table", line: headerLine)
                default: break
                }
                if !isArray {
                    guard headers.insert(path).inserted else {
                        throw error("table [\(path.joined(separator: "."))] is defined twice", line: headerLine)
                    }
                }
                inTable = true
                try endOfLine()
            default:
                let keyLine = line
                let path = try keyPath()
                skipBlanks()
                try expect(0x3D, "expected '=' after the key")
                skipBlanks()
                let value = try self.value(depth: 0)
                if !inTable {
                    let top = path[0]
                    switch kinds[top] {
                    case nil:
                        kinds[top] = path.count == 1 ? .value : .table
                        out.append(
                            TopLevel(
                                key: top, value: path.count == 1 ? value : .other(typeName: "table"), line: keyLine))
                    case .table? where path.count > 1: break
                    default: throw error("'\(top)' is defined twice", line: keyLine)
                    }
                }
                try endOfLine()
            }
        }
        return out
    }

    // MARK: keys

    private mutating func keyPath() throws(SyntaxError) -> [String] {
        var path = [try simpleKey()]
        while true {
            let mark = i
            skipBlanks()
            guard peek() == 0x2E else {  // .
                i = mark
                return path
            }
            i += 1
            skipBlanks()
            path.append(try simpleKey())
        }
    }

    private mutating func simpleKey() throws(SyntaxError) -> String {
        guard let c = peek() else { throw error("expected a key, found the end of the file") }
        if c == 0x22 || c == 0x27 {
            if peek(1) == c && peek(2) == c { throw error("a key cannot be a multi-line string") }
            return try c == 0x22 ? basicString() : literalString()
        }
        let start = i
        while let b = peek(), Self.isBareKeyByte(b) { i += 1 }
        guard i > start else { throw error("expected a key, found \(describe(c))") }
        return String(decoding: bytes[start..<i], as: UTF8.self)
    }

    private static func isBareKeyByte(_ b: UInt8) -> Bool {
        (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || (0x30...0x39).contains(b) || b == 0x5F
            || b == 0x2D
    }

    // MARK: values

    private mutating func value(depth: Int) throws(SyntaxError) -> ConfigFile.Value {
        guard depth < Self.maxDepth else { throw error("values are nested more than \(Self.maxDepth) deep") }
        guard let c = peek() else { throw error("expected a value, found the end of the file") }
        switch c {
        case 0x22:
            if peek(1) == 0x22 && peek(2) == 0x22 { return .string(try multiLineString(literal: false)) }
            return .string(try basicString())
        case 0x27:
            if peek(1) == 0x27 && peek(2) == 0x27 { return .string(try multiLineString(literal: true)) }
            return .string(try literalString())
        case 0x5B: return try array(depth: depth)
        case 0x7B:
            try inlineTable(depth: depth)
            return .other(typeName: "table")
        case 0x74, 0x66:  // t f
            if matchWord("true") { return .boolean(true) }
            if matchWord("false") { return .boolean(false) }
            throw error("expected a value, found \(describe(c))")
        case 0x69, 0x6E, 0x2B, 0x2D, 0x30...0x39:  // i n + - digits
            return try numberOrDate()
        default:
            throw error("expected a value, found \(describe(c))")
        }
    }

    private mutating func array(depth: Int) throws(SyntaxError) -> ConfigFile.Value {
        i += 1
        var items: [ConfigFile.Value] = []
        while true {
            try skipBlanksNewlinesAndComments()
            if peek() == 0x5D {
                i += 1
                return .array(items)
            }
            items.append(try value(depth: depth + 1))
            try skipBlanksNewlinesAndComments()
            switch peek() {
            case 0x2C: i += 1
            case 0x5D:
                i += 1
                return .array(items)
            case let c?: throw error("expected ',' or ']' in the array, found \(describe(c))")
            case nil: throw error("the array is not closed")
            }
        }
    }

    private mutating func inlineTable(depth: Int) throws(SyntaxError) {
        i += 1
        skipBlanks()
        if peek() == 0x7D {
            i += 1
            return
        }
        var keys: Set<[String]> = []
        while true {
            skipBlanks()
            let path = try keyPath()
            guard keys.insert(path).inserted else {
                throw error("'\(path.joined(separator: "."))' is defined twice in the inline table")
            }
            skipBlanks()
            try expect(0x3D, "expected '=' after the key")
            skipBlanks()
            _ = try value(depth: depth + 1)
            skipBlanks()
            switch peek() {
            case 0x2C: i += 1
            case 0x7D:
                i += 1
                return
            case let c?: throw error("expected ',' or '}' in the inline table, found \(describe(c))")
            case nil: throw error("the inline table is not closed")
            }
        }
    }

    /// Integers become values; floats, dates and times only their type name, once their characters are checked.
    private mutating func numberOrDate() throws(SyntaxError) -> ConfigFile.Value {
        let start = i
        while let b = peek(), !Self.endsToken(b) { i += 1 }
        // A date and a time may be separated by one space.
        if isDate(start..<i), peek() == 0x20, let d1 = peek(1), let d2 = peek(2), let colon = peek(3),
            Self.isDigit(d1), Self.isDigit(d2), colon == 0x3A
        {
            i += 1
            while let b = peek(), !Self.endsToken(b) { i += 1 }
        }
        let token = String(decoding: bytes[start..<i], as: UTF8.self)
        let column = start - lineStart + 1
        if isDate(start..<i) || isTime(start..<i) {
            let allowed = Set("0123456789-:.TtZz+ ".utf8)
            guard token.utf8.allSatisfy({ allowed.contains($0) }) else {
                throw SyntaxError(line: line, column: column, message: "'\(token)' is not a date or time")
            }
            let type = isTime(start..<i) ? "time" : token.contains(where: { "Tt ".contains($0) }) ? "date-time" : "date"
            return .other(typeName: type)
        }
        if ["inf", "+inf", "-inf", "nan", "+nan", "-nan"].contains(token) { return .other(typeName: "float") }
        guard Self.underscoresAreBetweenDigits(token) else {
            throw SyntaxError(line: line, column: column, message: "'\(token)' is not a number")
        }
        let plain = token.replacingUnderscores
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where plain.hasPrefix(prefix) {
            guard let value = Int(plain.dropFirst(2), radix: radix), !plain.dropFirst(2).hasPrefix("-"),
                !plain.dropFirst(2).hasPrefix("+")
            else {
                throw SyntaxError(line: line, column: column, message: "'\(token)' is not a number in range")
            }
            return .integer(value)
        }
        let digits = plain.drop { $0 == "+" || $0 == "-" }
        if !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit) {
            guard digits == "0" || !digits.hasPrefix("0") else {
                throw SyntaxError(line: line, column: column, message: "'\(token)' has a leading zero")
            }
            guard let value = Int(plain) else {
                throw SyntaxError(line: line, column: column, message: "'\(token)' is out of the integer range")
            }
            return .integer(value)
        }
        guard let first = digits.first, first.isASCIIDigit, Double(plain) != nil, digits.last?.isASCIIDigit == true
        else { throw SyntaxError(line: line, column: column, message: "'\(token)' is not a number") }
        return .other(typeName: "float")
    }

    private func isDate(_ r: Range<Int>) -> Bool {
        r.count >= 10 && (0..<4).allSatisfy { Self.isDigit(bytes[r.lowerBound + $0]) }
            && bytes[r.lowerBound + 4] == 0x2D
    }

    private func isTime(_ r: Range<Int>) -> Bool {
        r.count >= 5 && Self.isDigit(bytes[r.lowerBound]) && Self.isDigit(bytes[r.lowerBound + 1])
            && bytes[r.lowerBound + 2] == 0x3A
    }

    private static func isDigit(_ b: UInt8) -> Bool { (0x30...0x39).contains(b) }

    private static func endsToken(_ b: UInt8) -> Bool {
        b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x2C || b == 0x5D || b == 0x7D || b == 0x23
    }

    private static func underscoresAreBetweenDigits(_ token: String) -> Bool {
        let chars = Array(token)
        for (k, c) in chars.enumerated() where c == "_" {
            guard k > 0, k + 1 < chars.count, chars[k - 1].isHexDigit, chars[k + 1].isHexDigit else { return false }
        }
        return true
    }

    // MARK: strings

    private mutating func basicString() throws(SyntaxError) -> String {
        i += 1
        var out: [UInt8] = []
        while true {
            guard let c = peek(), c != 0x0A, c != 0x0D else { throw error("the string is not closed on its line") }
            i += 1
            switch c {
            case 0x22: return String(decoding: out, as: UTF8.self)
            case 0x5C: try escape(into: &out)
            default:
                try checkControl(c)
                out.append(c)
            }
        }
    }

    private mutating func literalString() throws(SyntaxError) -> String {
        i += 1
        let start = i
        while true {
            guard let c = peek(), c != 0x0A, c != 0x0D else { throw error("the string is not closed on its line") }
            if c == 0x27 {
                i += 1
                return String(decoding: bytes[start..<(i - 1)], as: UTF8.self)
            }
            try checkControl(c)
            i += 1
        }
    }

    private mutating func multiLineString(literal: Bool) throws(SyntaxError) -> String {
        let quote: UInt8 = literal ? 0x27 : 0x22
        i += 3
        // A newline right after the opening delimiter is not part of the string.
        if peek() == 0x0A {
            try newline()
        } else if peek() == 0x0D, peek(1) == 0x0A {
            try newline()
        }
        var out: [UInt8] = []
        while true {
            guard let c = peek() else { throw error("the multi-line string is not closed") }
            if c == quote, peek(1) == quote, peek(2) == quote {
                i += 3
                // Up to two quotes right before the closing delimiter belong to the string.
                var extra = 0
                while peek() == quote && extra < 2 {
                    out.append(quote)
                    i += 1
                    extra += 1
                }
                return String(decoding: out, as: UTF8.self)
            }
            switch c {
            case 0x0A, 0x0D:
                try newline()
                out.append(0x0A)
            case 0x5C where !literal:
                i += 1
                // A backslash ending a line drops the newline and the blanks after it.
                var j = i
                while let b = peek(j - i), b == 0x20 || b == 0x09 { j += 1 }
                if j < bytes.count, bytes[j] == 0x0A || bytes[j] == 0x0D {
                    i = j
                    while let b = peek(), b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D {
                        if b == 0x0A || b == 0x0D { try newline() } else { i += 1 }
                    }
                } else {
                    try escape(into: &out)
                }
            default:
                try checkControl(c)
                out.append(c)
                i += 1
            }
        }
    }

    /// After a backslash (already consumed).
    private mutating func escape(into out: inout [UInt8]) throws(SyntaxError) {
        guard let e = peek() else { throw error("the string is not closed") }
        i += 1
        switch e {
        case 0x62: out.append(0x08)
        case 0x74: out.append(0x09)
        case 0x6E: out.append(0x0A)
        case 0x66: out.append(0x0C)
        case 0x72: out.append(0x0D)
        case 0x22: out.append(0x22)
        case 0x5C: out.append(0x5C)
        case 0x75, 0x55:  // u XXXX, U XXXXXXXX
            let count = e == 0x75 ? 4 : 8
            guard i + count <= bytes.count,
                let scalar = UInt32(String(decoding: bytes[i..<(i + count)], as: UTF8.self), radix: 16)
                    .flatMap(Unicode.Scalar.init)
            else { throw error("\\\(e == 0x75 ? "u" : "U") needs \(count) hex digits of a Unicode scalar value") }
            i += count
            out.append(contentsOf: Array(String(Character(scalar)).utf8))
        default:
            throw error("unknown escape \\\(describe(e))")
        }
    }

    private func checkControl(_ c: UInt8) throws(SyntaxError) {
        if (c < 0x20 && c != 0x09) || c == 0x7F { throw error("control character \(describe(c)) in a string") }
    }

    // MARK: blanks, comments, line ends

    private func peek(_ ahead: Int = 0) -> UInt8? { i + ahead < bytes.count ? bytes[i + ahead] : nil }

    private mutating func skipBlanks() {
        while let b = peek(), b == 0x20 || b == 0x09 { i += 1 }
    }

    private mutating func skipBlanksNewlinesAndComments() throws(SyntaxError) {
        while let b = peek() {
            switch b {
            case 0x20, 0x09: i += 1
            case 0x0A, 0x0D: try newline()
            case 0x23: try comment()
            default: return
            }
        }
    }

    private mutating func comment() throws(SyntaxError) {
        while let b = peek(), b != 0x0A, b != 0x0D {
            if (b < 0x20 && b != 0x09) || b == 0x7F { throw error("control character \(describe(b)) in a comment") }
            i += 1
        }
    }

    private mutating func newline() throws(SyntaxError) {
        if peek() == 0x0D {
            guard peek(1) == 0x0A else { throw error("a carriage return not followed by a line feed") }
            i += 1
        }
        i += 1
        line += 1
        lineStart = i
    }

    private mutating func endOfLine() throws(SyntaxError) {
        skipBlanks()
        if peek() == 0x23 { try comment() }
        guard let c = peek() else { return }
        guard c == 0x0A || c == 0x0D else { throw error("expected the end of the line, found \(describe(c))") }
        try newline()
    }

    private mutating func expect(_ byte: UInt8, _ message: String) throws(SyntaxError) {
        guard peek() == byte else { throw error(message + (peek().map { ", found \(describe($0))" } ?? "")) }
        i += 1
    }

    private mutating func matchWord(_ word: String) -> Bool {
        let w = Array(word.utf8)
        guard i + w.count <= bytes.count, Array(bytes[i..<(i + w.count)]) == w else { return false }
        if let after = peek(w.count), !Self.endsToken(after) { return false }
        i += w.count
        return true
    }

    private func describe(_ c: UInt8) -> String {
        switch c {
        case 0x0A: return "a line feed"
        case 0x09: return "a tab"
        case 0x20...0x7E: return "'\(Character(Unicode.Scalar(c)))'"
        default: return "byte 0x\(String(c, radix: 16, uppercase: true))"
        }
    }

    private func error(_ message: String, line: Int? = nil) -> SyntaxError {
        SyntaxError(line: line ?? self.line, column: line == nil ? i - lineStart + 1 : 1, message: message)
    }
}

extension String {
    fileprivate var replacingUnderscores: String { String(filter { $0 != "_" }) }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
