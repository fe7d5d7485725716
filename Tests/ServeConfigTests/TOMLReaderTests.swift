import Testing

@testable import ServeConfig

/// The config file's TOML, construct by construct, and the malformed files the fuzzer found aborting the TOML
/// library Cohost used to read it with: each is an error with its line and column now.
@Suite struct TOMLReaderTests {
    func read(_ text: String) throws -> [String: ConfigFile.Value] {
        Dictionary(uniqueKeysWithValues: try TOMLReader.read(text).map { ($0.key, $0.value) })
    }

    func failure(_ text: String) -> TOMLReader.SyntaxError? {
        do {
            _ = try TOMLReader.read(text)
            return nil
        } catch { return error }
    }

    @Test func scalarsOfEveryKindAreRead() throws {
        let values = try read(
            """
            a = "tab\\tquote\\" \\u00E9 \\U0001F600"
            b = 'C:\\path\\no escapes'
            c = -1_000
            d = 0xff
            e = 0o17
            f = 0b101
            g = true
            h = false
            i = +42
            """)
        #expect(values["a"] == .string("tab\tquote\" é 😀"))
        #expect(values["b"] == .string("C:\\path\\no escapes"))
        #expect(values["c"] == .integer(-1000))
        #expect(values["d"] == .integer(255) && values["e"] == .integer(15) && values["f"] == .integer(5))
        #expect(values["g"] == .boolean(true) && values["h"] == .boolean(false) && values["i"] == .integer(42))
    }

    @Test func floatsDatesTablesAndInlineTablesKeepTheirTypeName() throws {
        let values = try read(
            """
            f = 1.5e3
            n = -inf
            dt = 1979-05-27T07:32:00Z
            ds = 1979-05-27 07:32:00
            d = 1979-05-27
            t = 07:32:00.5
            it = { x = 1, y = [2, 3], "z.w" = 'q' }
            dotted.key = 1
            dotted.other = 2
            [table]
            inner = 1
            [[items]]
            [[items]]
            """)
        #expect(values["f"] == .other(typeName: "float") && values["n"] == .other(typeName: "float"))
        #expect(values["dt"] == .other(typeName: "date-time") && values["ds"] == .other(typeName: "date-time"))
        #expect(values["d"] == .other(typeName: "date") && values["t"] == .other(typeName: "time"))
        #expect(values["it"] == .other(typeName: "table") && values["dotted"] == .other(typeName: "table"))
        #expect(values["table"] == .other(typeName: "table") && values["inner"] == nil)
        #expect(values["items"] == .other(typeName: "array of tables"))
    }

    @Test func arraysSpanLinesWithCommentsAndATrailingComma() throws {
        let values = try read("hosts = [\n  \"a\", # first\n\n  'b',\n  [1, 2],\n]\n")
        #expect(values["hosts"] == .array([.string("a"), .string("b"), .array([.integer(1), .integer(2)])]))
    }

    @Test func multiLineStringsTrimTheirFirstNewlineAndLineEndingBackslashes() throws {
        let values = try read("a = \"\"\"\none \\\n    two\nthree\"\"\"\"\nb = '''\nraw \\n'''\n")
        #expect(values["a"] == .string("one two\nthree\""))
        #expect(values["b"] == .string("raw \\n"))
    }

    @Test func eachKeyKeepsTheLineItIsDefinedOnAcrossCRLFAndAByteOrderMark() throws {
        let keys = try TOMLReader.read("\u{FEFF}# c\r\na = 1\r\n\r\n\"b\" = '''\nx\n'''\nc = 2")
        #expect(keys.map { "\($0.key)@\($0.line)" } == ["a@2", "b@4", "c@7"])
    }

    @Test(arguments: [
        // A table header without a key, and one starting with bytes that are not a bare key: the library aborted.
        ("[# Cohost server configuration", 1, 2, "expected a key, found '#'"),
        ("a = 1\n[\u{D2}x]\n", 2, 2, "expected a key, found byte 0xC3"),
        // A date whose time is garbage: the library aborted.
        ("b.c = 1979-05-27T\u{EE}\u{EE}07:32:00Z\n", 1, 7, "'1979-05-27T\u{EE}\u{EE}07:32:00Z' is not a date or time"),
        ("a = 1 2\n", 1, 7, "expected the end of the line, found '2'"),
        ("a = \"open\n", 1, 10, "the string is not closed on its line"),
        ("a = [1, 2\n", 2, 1, "the array is not closed"),
        ("a = 01\n", 1, 5, "'01' has a leading zero"),
        ("a = 1__0\n", 1, 5, "'1__0' is not a number"),
        ("a = 99999999999999999999\n", 1, 5, "'99999999999999999999' is out of the integer range"),
        ("a = \"\\q\"\n", 1, 8, "unknown escape \\'q'"),
        ("a = 1\n[a]\n", 2, 1, "'a' is already a value; it cannot be a table"),
        ("[t]\n[t]\n", 2, 1, "table [t] is defined twice"),
        ("a = { b = 1\n", 1, 12, "expected ',' or '}' in the inline table, found a line feed"),
        ("a = 1\rb = 2\n", 1, 6, "a carriage return not followed by a line feed"),
    ])
    func malformedFilesAreErrorsWithTheirPlace(text: String, line: Int, column: Int, message: String) {
        #expect(failure(text) == TOMLReader.SyntaxError(line: line, column: column, message: message))
    }

    @Test func nestingIsBoundedSoNoFileExhaustsTheStack() {
        let deep = "a = " + String(repeating: "[", count: 100_000)
        #expect(failure(deep)?.message == "values are nested more than 32 deep")
    }
}
