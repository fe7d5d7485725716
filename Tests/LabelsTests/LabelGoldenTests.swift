import Codecs
import Foundation
import Labels
import Media
import Testing

/// Labels rendered with the system fonts, compared with the PNGs in Tests/LabelsTests/Golden (each label blended
/// over mid-grey). FreeType or HarfBuzz updates may move a pixel's antialiasing, so the match is within a tolerance:
/// a mean absolute difference of at most 2.0 in each of Y, U and V, and at most 1 % of samples off by more than 40.
/// `COHOST_UPDATE_GOLDEN=1 swift test --filter LabelGoldenTests` rewrites the PNGs; look at them before committing.
@Suite struct LabelGoldenTests {
    struct Sample: CustomTestStringConvertible, Sendable {
        let name: String
        let text: String
        var testDescription: String { name }
    }

    static let samples = [
        Sample(name: "latin", text: "Ann Lee"),
        Sample(name: "cjk", text: "安娜"),
        Sample(name: "mixed", text: "安娜 Ann"),
        Sample(name: "arabic", text: "مرحبا"),
        Sample(name: "emoji", text: "Ann 😀"),
    ]

    static let sourceDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Golden")

    @Test(arguments: samples)
    func labelMatchesItsGoldenImage(_ sample: Sample) throws {
        let fonts = try FontSet.system()
        let style = LabelStyle(
            size: 24, color: RGBA(r: 255, g: 255, b: 255, a: 255), background: try #require(RGBA(hex: "#00000099")))
        let label = try #require(fonts.render(sample.text, style: style, maxWidth: 400))
        let snapshot = LabelSnapshot(label)
        if ProcessInfo.processInfo.environment["COHOST_UPDATE_GOLDEN"] == "1" {
            try Data(snapshot.png()).write(to: Self.sourceDirectory.appendingPathComponent("\(sample.name).png"))
            return
        }
        let url = try #require(
            Bundle.module.url(forResource: sample.name, withExtension: "png", subdirectory: "Golden"))
        let golden = try PNGDecoder.decode([UInt8](Data(contentsOf: url)))
        let difference = try #require(snapshot.difference(from: golden.picture), "size \(label.width)x\(label.height)")
        #expect(difference.meanY <= 2.0)
        #expect(difference.meanU <= 2.0)
        #expect(difference.meanV <= 2.0)
        #expect(difference.farShare <= 0.01)
    }
}
