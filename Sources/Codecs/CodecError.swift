/// A failure inside one of the codec libraries, carrying that library's own message
/// (`opus_strerror`, `vpx_codec_error_detail`, `av_strerror`, or a description of the refused input).
public struct CodecError: Error, CustomStringConvertible, Equatable, Sendable {
    /// Which library (or wrapper) failed: "opus", "vpx", "x264", "avcodec", "libyuv", or "codecs" for input checks.
    public let library: String
    public let message: String

    public init(library: String, message: String) {
        self.library = library
        self.message = message
    }

    public var description: String { "\(library): \(message)" }
}
