import CFreeType

/// The one owner of an `FT_Library`: the faces opened from it keep it alive until they are gone.
///
/// `@unchecked Sendable`: FreeType's library object is not thread-safe; it is confined to the lock of the
/// `FontSet` that made it.
final class FreeTypeLibrary: @unchecked Sendable {
    let handle: FT_Library

    init() throws(LabelError) {
        var library: FT_Library?
        let status = FT_Init_FreeType(&library)
        guard status == 0, let library else { throw LabelError("FT_Init_FreeType: \(Self.message(status))") }
        handle = library
    }

    deinit {
        FT_Done_FreeType(handle)
    }

    /// FreeType's text for an error code. Debian builds FreeType without the error strings, so
    /// `FT_Error_String` returns NULL there and the code is all there is to show.
    static func message(_ status: FT_Error) -> String {
        if let text = FT_Error_String(status) { return String(cString: text) }
        return "FreeType error 0x" + String(UInt32(bitPattern: status), radix: 16)
    }
}
