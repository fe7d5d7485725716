import Foundation

/// The first video frame at `seekSeconds` (or the start) of a file or stream, scaled to
/// `width`×`height`, as packed RGB24 (`width * height * 3` bytes).
public func decodeFirstVideoFrameRGB(
    path: String, width: Int, height: Int, seekSeconds: Double? = nil,
    timeout: Double = 15
) throws -> [UInt8] {
    var arguments = ["-hide_banner", "-loglevel", "error", "-nostdin"]
    if let seekSeconds { arguments += ["-ss", String(seekSeconds)] }
    arguments += [
        "-i", path, "-frames:v", "1", "-vf", "scale=\(width):\(height)", "-pix_fmt", "rgb24",
        "-f", "rawvideo", "-",
    ]
    let result = try run("ffmpeg", arguments, timeout: timeout)
    let expected = width * height * 3
    guard result.status == 0, result.stdout.count == expected else {
        throw TestSupportError.failed(
            "ffmpeg gave \(result.stdout.count) of \(expected) bytes (status \(result.status)): \(result.stderr)")
    }
    return result.stdout
}

/// Same as `decodeFirstVideoFrameRGB(path:...)`; a URL (rtmp://, file path) works as the input.
public func decodeFirstVideoFrameRGB(
    url: String, width: Int, height: Int, seekSeconds: Double? = nil,
    timeout: Double = 15
) throws -> [UInt8] {
    try decodeFirstVideoFrameRGB(path: url, width: width, height: height, seekSeconds: seekSeconds, timeout: timeout)
}

/// `seconds` of the first audio stream, downmixed to mono 48 kHz signed 16-bit.
public func decodeAudioS16Mono(url: String, seconds: Double, timeout: Double = 15) throws -> [Int16] {
    let arguments = [
        "-hide_banner", "-loglevel", "error", "-nostdin", "-i", url, "-t", String(seconds),
        "-vn", "-ac", "1", "-ar", "48000", "-f", "s16le", "-",
    ]
    let result = try run("ffmpeg", arguments, timeout: timeout)
    guard result.status == 0 else {
        throw TestSupportError.failed("ffmpeg audio decode failed (status \(result.status)): \(result.stderr)")
    }
    let bytes = result.stdout
    return (0..<(bytes.count / 2)).map { Int16(bitPattern: UInt16(bytes[2 * $0]) | UInt16(bytes[2 * $0 + 1]) << 8) }
}

/// The streams ffprobe finds: codec name, codec type ("video"/"audio"/"data") and the picture size of video.
public func ffprobeStreams(
    url: String, timeout: Double = 15
) throws -> [(codec: String, type: String, width: Int?, height: Int?)] {
    let result = try run("ffprobe", ["-v", "error", "-of", "json", "-show_streams", url], timeout: timeout)
    guard result.status == 0 else {
        throw TestSupportError.failed("ffprobe failed (status \(result.status)): \(result.stderr)")
    }
    guard let root = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any],
        let streams = root["streams"] as? [[String: Any]]
    else {
        throw TestSupportError.failed("ffprobe printed no streams: \(String(decoding: result.stdout, as: UTF8.self))")
    }
    return streams.map { stream in
        (
            codec: stream["codec_name"] as? String ?? "",
            type: stream["codec_type"] as? String ?? "",
            width: stream["width"] as? Int,
            height: stream["height"] as? Int
        )
    }
}

/// Every video frame of a file resampled to `fps` and scaled to `width`×`height`, each as packed RGB24.
public func decodeVideoFramesRGB(
    path: String, width: Int, height: Int, fps: Int, timeout: Double = 30
) throws -> [[UInt8]] {
    let result = try run(
        "ffmpeg",
        [
            "-hide_banner", "-loglevel", "error", "-nostdin", "-i", path,
            "-vf", "fps=\(fps),scale=\(width):\(height)", "-pix_fmt", "rgb24", "-f", "rawvideo", "-",
        ],
        timeout: timeout)
    guard result.status == 0 else {
        throw TestSupportError.failed("ffmpeg frame decode failed (status \(result.status)): \(result.stderr)")
    }
    let size = width * height * 3
    return stride(from: 0, to: result.stdout.count - size + 1, by: size).map { Array(result.stdout[$0..<$0 + size]) }
}

/// ffmpeg's decode of PNG bytes as packed RGB24 at the picture's own size (an independent decoder to check ours).
public func decodePNGWithFFmpeg(_ png: [UInt8], timeout: Double = 15) throws -> [UInt8] {
    let path = NSTemporaryDirectory() + "cohost-png-\(UUID().uuidString).png"
    try Data(png).write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let result = try run(
        "ffmpeg",
        [
            "-hide_banner", "-loglevel", "error", "-nostdin", "-i", path,
            "-f", "rawvideo", "-pix_fmt", "rgb24", "-",
        ], timeout: timeout)
    guard result.status == 0 else {
        throw TestSupportError.failed("ffmpeg could not decode the PNG (status \(result.status)): \(result.stderr)")
    }
    return result.stdout
}
