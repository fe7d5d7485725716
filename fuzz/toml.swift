/// The `cohost serve` config file (`TOMLReader`): no crash and no hang on any text; an accepted file gives each of
/// its keys a line that exists in the text.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTOML(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let file = try? ConfigFile.parse(text, path: "fuzz.toml") else { return 0 }
    // Counted in bytes: to Swift "\r\n" is one Character, so splitting the String on "\n" would miss those lines.
    let lineCount = text.utf8.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
    for (key, entry) in file.entries {
        if let line = entry.line { require((1...lineCount).contains(line), "key \(key) placed on line \(line)") }
    }
    return 0
}
