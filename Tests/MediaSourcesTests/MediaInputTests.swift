import Foundation
import MediaSources
import Testing
import TestSupport

/// libavformat's reader (`MediaInput`) on real files written by ffmpeg, and on a server that never answers.
@Suite struct MediaInputTests {
    /// One second of a 160×90 H.264 picture and a 48 kHz AAC tone in MP4, as a camera recording would be.
    static func recording() throws -> String {
        let path = NSTemporaryDirectory() + "cohost-input-\(UUID().uuidString).mp4"
        let result = try run(
            "ffmpeg",
            [
                "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                "testsrc2=s=160x90:r=15", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "1",
                "-c:v", "libx264", "-g", "15", "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "1", path,
            ], timeout: 60)
        guard result.status == 0 else { throw TestSupportError.failed("ffmpeg: \(result.stderr)") }
        return path
    }

    @Test func aRecordingIsReadStreamByStreamWithItsTimestampsAndKeyframesToItsEnd() throws {
        let path = try Self.recording()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let input = try MediaInput(url: path)
        #expect(input.formatName.contains("mp4"))
        let video = try #require(input.streams.first { $0.kind == .video })
        let audio = try #require(input.streams.first { $0.kind == .audio })
        #expect(video.codec == "h264" && video.width == 160 && video.height == 90)
        #expect(audio.codec == "aac" && audio.sampleRate == 48000 && audio.channels == 1)
        var packets: [(MediaInput.PacketInfo, Int)] = []
        while try input.read({ info, bytes in packets.append((info, bytes.count)) }) {}
        let pictures = packets.filter { $0.0.streamIndex == video.index }
        #expect(pictures.count == 15)
        #expect(pictures.first?.0.isKeyframe == true && pictures.allSatisfy { $0.1 > 0 })
        let times = pictures.compactMap(\.0.pts).sorted()
        #expect(times.count == 15)
        #expect(abs(times[1] - times[0] - 1.0 / 15) < 0.001)
        // AAC: 1024 samples a packet, so about 47 in a second (the encoder's priming adds one).
        #expect((46...49).contains(packets.filter { $0.0.streamIndex == audio.index }.count))
        #expect(try input.read({ _, _ in }) == false)
    }

    @Test func aMissingFileIsRefusedWithTheLibrarysMessage() {
        #expect {
            try MediaInput(url: NSTemporaryDirectory() + "cohost-none-\(UUID().uuidString).mp4")
        } throws: { error in
            (error as? MediaInputError)?.message == "cannot open the input: No such file or directory"
        }
    }

    @Test func aURLsPasswordIsInNoError() throws {
        // A closed port: the connection is refused at once.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(Loopback.bind(fd, port: 0))
        let port = try #require(Loopback.localPort(fd))
        close(fd)
        #expect {
            try MediaInput(url: "rtsp://admin:s3cret-pw@127.0.0.1:\(port)/stream", timeoutMs: 2000)
        } throws: { error in
            guard let error = error as? MediaInputError else { return false }
            return !"\(error)".contains("s3cret") && error.message.hasPrefix("cannot open the input")
        }
    }

    @Test func aServerThatNeverAnswersIsGivenUpAtTheDeadline() throws {
        // It accepts (the kernel completes the handshake) and says nothing.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        #expect(Loopback.bind(fd, port: 0) && listen(fd, 4) == 0)
        let port = try #require(Loopback.localPort(fd))
        let started = Date()
        #expect {
            try MediaInput(url: "rtsp://127.0.0.1:\(port)/stream", options: ["rtsp_transport": "tcp"], timeoutMs: 500)
        } throws: { error in
            (error as? MediaInputError)?.message == "cannot open the input: timed out or cancelled"
        }
        // Not hung: given up about when the deadline passed.
        #expect(Date().timeIntervalSince(started) < 5)
    }
}
