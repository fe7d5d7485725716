import Labels
import Media
import Testing

/// The label's box, colours, cutting and hostile input, checked on the rendered picture itself.
@Suite struct LabelRenderTests {
    static let opaque = LabelStyle(
        size: 24, color: RGBA(r: 255, g: 255, b: 255, a: 255), background: RGBA(r: 0, g: 0, b: 0, a: 255))

    @Test func capitalsInkAboutOneCapHeightInsideTheBox() throws {
        let label = try #require(try FontSet.system().render("ANN", style: LabelStyle(), maxWidth: 400))
        let ink = label.inkBox
        #expect(!ink.isEmpty)
        #expect(ink.x >= 0 && ink.y >= 0 && ink.maxX <= label.width && ink.maxY <= label.height)
        #expect(Double(ink.height) >= 0.5 * 24 && Double(ink.height) <= 1.2 * 24)
        // Padding: size/3 = 8 each side, size/5 = 4 above and below the line.
        #expect(ink.x >= 8 - 1 && ink.maxX <= label.width - 8 + 1)
    }

    @Test func boxIsTheLineHeightPlusPaddingAndEven() throws {
        let fonts = try FontSet.system()
        let label = try #require(fonts.render("Ann Lee", style: LabelStyle(), maxWidth: 400))
        #expect(label.width % 2 == 0 && label.height % 2 == 0)
        // Noto Sans CJK at 24 px: ascender 28, descender 7, plus 2 × 4 padding = 43, rounded up to even.
        #expect(label.height == 44)
        let cjk = try #require(fonts.render("安娜", style: LabelStyle(), maxWidth: 400))
        #expect(cjk.height == 44)
    }

    @Test func whiteTextOnAnOpaqueBlackBoxIsBrightOnDark() throws {
        let label = try #require(try FontSet.system().render("█", style: Self.opaque, maxWidth: 400))
        let ink = label.inkBox
        let centre = label.image.picture.pixel(x: ink.x + ink.width / 2, y: ink.y + ink.height / 2)
        #expect(centre.y > 200)
        #expect(centre.y == 235)
        #expect(label.image.alpha(x: ink.x + ink.width / 2, y: ink.y + ink.height / 2) == 255)
        let corner = label.image.picture.pixel(x: 0, y: 0)
        #expect(corner.y < 40)
        #expect(corner == YUVColor(y: 16, u: 128, v: 128))
        #expect(label.image.alpha(x: 0, y: 0) == 255)
    }

    @Test func translucentBoxKeepsItsAlphaAndTextIsOpaque() throws {
        let label = try #require(try FontSet.system().render("█", style: LabelStyle(), maxWidth: 400))
        let ink = label.inkBox
        #expect(label.image.alpha(x: 0, y: 0) == 0x99)
        #expect(label.image.picture.pixel(x: 0, y: 0) == YUVColor(y: 16, u: 128, v: 128))
        #expect(label.image.alpha(x: ink.x + ink.width / 2, y: ink.y + ink.height / 2) == 255)
        #expect(label.image.picture.pixel(x: ink.x + ink.width / 2, y: ink.y + ink.height / 2).y == 235)
        #expect(!label.image.isOpaque)
    }

    @Test func colouredTextConvertsWithBT601() throws {
        let red = LabelStyle(
            size: 24, color: RGBA(r: 255, g: 0, b: 0, a: 255), background: RGBA(r: 0, g: 0, b: 255, a: 255))
        let label = try #require(try FontSet.system().render("█", style: red, maxWidth: 400))
        let ink = label.inkBox
        // Chroma is per 2×2 block: sample an even position well inside the ink and the box's corner.
        let x = (ink.x + ink.width / 2) & ~1, y = (ink.y + ink.height / 2) & ~1
        #expect(label.image.picture.pixel(x: x, y: y) == YUVColor(r: 255, g: 0, b: 0))
        #expect(label.image.picture.pixel(x: 0, y: 0) == YUVColor(r: 0, g: 0, b: 255))
    }

    @Test func textWiderThanMaxWidthEndsInAnEllipsis() throws {
        let fonts = try FontSet.system()
        let text = "Annabelle Leeworthington-Smythe the Third"
        let label = try #require(fonts.render(text, style: LabelStyle(), maxWidth: 200))
        #expect(label.width <= 200)
        let (kept, next) = try #require(Self.cut(of: label, text: text, fonts: fonts))
        #expect(kept.hasSuffix("…"))
        #expect(kept.count > 2)
        // One more cluster would not have fitted.
        let longer = try #require(fonts.render(next, style: LabelStyle(), maxWidth: 10_000))
        #expect(longer.width > 200)
    }

    @Test func tenThousandCharactersAreCutToMaxWidth() throws {
        let fonts = try FontSet.system()
        let text = String(repeating: "W", count: 10_000)
        let label = try #require(fonts.render(text, style: LabelStyle(), maxWidth: 400))
        #expect(label.width <= 400)
        #expect(label.width > 300)
        let (kept, _) = try #require(Self.cut(of: label, text: String(text.prefix(60)), fonts: fonts))
        #expect(kept.hasSuffix("W…"))
    }

    @Test func renderingTwiceGivesTheSameBytes() throws {
        let fonts = try FontSet.system()
        let first = try #require(fonts.render("安娜 Ann مرحبا 😀", style: LabelStyle(), maxWidth: 400))
        let second = try #require(fonts.render("安娜 Ann مرحبا 😀", style: LabelStyle(), maxWidth: 400))
        #expect(Self.bytes(first) == Self.bytes(second))
        #expect(first.inkBox == second.inkBox)
    }

    @Test func threadsRenderingAtOnceGetTheSameBytes() async throws {
        let fonts = try FontSet.system()
        let expected = try #require(fonts.render("Ann Lee", style: LabelStyle(size: 30), maxWidth: 400))
        let results = await withTaskGroup(of: [UInt8]?.self) { group in
            for i in 0..<8 {
                group.addTask {
                    // Other sizes in between: each render must set its own size under the lock.
                    _ = fonts.layout("安娜", size: 10 + i)
                    return fonts.render("Ann Lee", style: LabelStyle(size: 30), maxWidth: 400).map(Self.bytes)
                }
            }
            var all: [[UInt8]?] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 8)
        #expect(results.allSatisfy { $0 == Self.bytes(expected) })
    }

    @Test func emptyTextRendersNothing() throws {
        #expect(try FontSet.system().render("", style: LabelStyle(), maxWidth: 400) == nil)
    }

    @Test func maxWidthBelowThePaddingRendersNothing() throws {
        let fonts = try FontSet.system()
        // Size 24: 8 pixels of padding each side.
        #expect(fonts.render("Ann", style: LabelStyle(), maxWidth: 15) == nil)
        let bare = try #require(fonts.render("Ann", style: LabelStyle(), maxWidth: 16))
        #expect(bare.width == 16)
        #expect(bare.inkBox.isEmpty)
    }

    @Test func sizeOutsideTheRangeIsClamped() throws {
        let fonts = try FontSet.system()
        let huge = try #require(fonts.render("Ann", style: LabelStyle(size: 10_000), maxWidth: 4000))
        let largest = try #require(fonts.render("Ann", style: LabelStyle(size: 128), maxWidth: 4000))
        #expect(Self.bytes(huge) == Self.bytes(largest))
        let tiny = try #require(fonts.render("Ann", style: LabelStyle(size: -5), maxWidth: 4000))
        let smallest = try #require(fonts.render("Ann", style: LabelStyle(size: 8), maxWidth: 4000))
        #expect(Self.bytes(tiny) == Self.bytes(smallest))
    }

    @Test func controlOnlyTextIsAnEmptyBox() throws {
        let label = try #require(try FontSet.system().render("\u{7}\u{1B}[2J", style: LabelStyle(), maxWidth: 400))
        // "[2J" still draws: only the two control characters vanish.
        #expect(!label.inkBox.isEmpty)
        let bare = try #require(try FontSet.system().render("\u{7}\u{0}\r\n", style: LabelStyle(), maxWidth: 400))
        #expect(bare.inkBox.isEmpty)
        #expect(bare.width == 16)
    }

    @Test func missingFontFileThrowsNamingIt() {
        #expect {
            _ = try FontSet(files: [("/nonexistent.ttf", 0)])
        } throws: { error in
            (error as? LabelError)?.description.contains("/nonexistent.ttf") == true
        }
    }

    @Test func faceIndexBeyondTheFileThrowsNamingFileAndIndex() {
        #expect {
            _ = try FontSet(files: [("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 5)])
        } throws: { error in
            (error as? LabelError)?.description.hasPrefix(
                "cannot open font /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf (face 5): ") == true
        }
        #expect(throws: LabelError.self) { _ = try FontSet(files: []) }
    }

    static func bytes(_ label: LabelImage) -> [UInt8] {
        label.image.picture.y + label.image.picture.u + label.image.picture.v + label.image.alpha
    }

    /// The prefix of `text` plus "…" whose uncut rendering is byte for byte `label`, and the same with one cluster
    /// more; nil when no prefix matches.
    static func cut(of label: LabelImage, text: String, fonts: FontSet) -> (kept: String, next: String)? {
        let clusters = Array(text)
        let target = bytes(label)
        for count in 0..<clusters.count {
            var prefix = String(clusters[..<count])
            while prefix.last?.isWhitespace == true { prefix.removeLast() }
            guard let candidate = fonts.render(prefix + "…", style: LabelStyle(), maxWidth: 10_000),
                candidate.width == label.width, bytes(candidate) == target
            else { continue }
            return (prefix + "…", String(clusters[...count]) + "…")
        }
        return nil
    }
}
