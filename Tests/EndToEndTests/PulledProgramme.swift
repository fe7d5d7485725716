import Foundation
import Testing
import TestSupport

/// Pulls `seconds` of a programme from the RTMP server into a temporary FLV file (stream copy).
func pullProgramme(url: String, seconds: Int, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("cohost-pull-\(UUID().uuidString).flv")
        .path
    let result = try run(
        "ffmpeg",
        [
            "-hide_banner", "-loglevel", "error", "-rw_timeout", "10000000", "-i", url,
            "-t", "\(seconds)", "-c", "copy", "-y", path,
        ], timeout: Double(seconds) + 15)
    #expect(result.status == 0, "ffmpeg pull failed: \(result.stderr)", sourceLocation: sourceLocation)
    return path
}

/// Expects the pixel at (x, y) of a packed RGB24 picture `width` pixels wide to be within ±40 per
/// channel of `expected` (codec and scaling error).
func expectColour(
    _ rgb: [UInt8], width: Int, x: Int, y: Int, _ expected: (Int, Int, Int), _ what: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let i = (y * width + x) * 3
    guard i >= 0, i + 2 < rgb.count else {
        Issue.record("\(what): pixel (\(x),\(y)) outside the frame", sourceLocation: sourceLocation)
        return
    }
    let got = (Int(rgb[i]), Int(rgb[i + 1]), Int(rgb[i + 2]))
    let close = abs(got.0 - expected.0) <= 40 && abs(got.1 - expected.1) <= 40 && abs(got.2 - expected.2) <= 40
    #expect(close, "\(what) at (\(x),\(y)): got \(got), expected \(expected)", sourceLocation: sourceLocation)
}
