import CVPX

/// libvpx failures as `CodecError`s carrying `vpx_codec_error` and `vpx_codec_error_detail`.
enum VPXError {
    static func error(_ ctx: UnsafeMutablePointer<vpx_codec_ctx_t>, _ what: String) -> CodecError {
        var message = what
        if let e = vpx_codec_error(ctx) { message += ": " + String(cString: e) }
        if let d = vpx_codec_error_detail(ctx) { message += " (" + String(cString: d) + ")" }
        return CodecError(library: "vpx", message: message)
    }

    static func error(_ status: vpx_codec_err_t, _ what: String) -> CodecError {
        let text = vpx_codec_err_to_string(status).map { String(cString: $0) } ?? "error \(status.rawValue)"
        return CodecError(library: "vpx", message: "\(what): \(text)")
    }

    static func error(_ message: String) -> CodecError { CodecError(library: "vpx", message: message) }
}
