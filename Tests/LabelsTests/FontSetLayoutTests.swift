import Labels
import Testing

/// Fallback, direction and the box for text no font has, read from `FontSet.layout`.
@Suite struct FontSetLayoutTests {
    @Test func systemFontsAreNotoSansCJKSCThenDejaVuSans() throws {
        #expect(try FontSet.system().familyNames == ["Noto Sans CJK SC", "DejaVu Sans"])
    }

    @Test func arabicIsSetInDejaVuSansRightToLeft() throws {
        let glyphs = try FontSet.system().layout("مرحبا", size: 24)
        // Five letters of two UTF-8 bytes each, drawn left to right from the last to the first.
        #expect(glyphs.map(\.cluster) == [8, 6, 4, 2, 0])
        #expect(glyphs.allSatisfy { $0.face == 1 })
        #expect(zip(glyphs, glyphs.dropFirst()).allSatisfy { $0.x < $1.x })
    }

    @Test func chineseAndLatinBothComeFromNotoSansCJK() throws {
        let glyphs = try FontSet.system().layout("安娜 Ann", size: 24)
        #expect(glyphs.map(\.cluster) == [0, 3, 6, 7, 8, 9])
        #expect(glyphs.allSatisfy { $0.face == 0 })
        #expect(zip(glyphs, glyphs.dropFirst()).allSatisfy { $0.x < $1.x })
    }

    @Test func latinAfterArabicStaysInReadingOrderLeftOfIt() throws {
        // Base direction right to left: "Ann" is drawn first (leftmost) and still reads left to right.
        let glyphs = try FontSet.system().layout("مرحبا Ann", size: 24)
        #expect(glyphs.map(\.cluster) == [11, 12, 13, 10, 8, 6, 4, 2, 0])
        // The space is in Noto Sans CJK, the first face that has it.
        #expect(glyphs.map(\.face) == [0, 0, 0, 0, 1, 1, 1, 1, 1])
        #expect(zip(glyphs, glyphs.dropFirst()).allSatisfy { $0.x < $1.x })
    }

    @Test func emojiNoFontHasBecomesOneBoxWithAnAdvance() throws {
        let fonts = try FontSet.system()
        let glyphs = fonts.layout("Ann 😀 Lee", size: 24)
        let box = try #require(glyphs.firstIndex { $0.face == -1 })
        #expect(glyphs.filter { $0.face == -1 }.count == 1)
        #expect(glyphs[box].cluster == 4)
        // The box advances 0.6 em (14 px at 24) plus a 2-pixel gap each side.
        #expect(glyphs[box + 1].cluster == 8)
        #expect(glyphs[box + 1].x - glyphs[box].x == 18)
        // A family sequence joined by ZWJ is one grapheme cluster: one box.
        let family = fonts.layout("A👩‍👩‍👧B", size: 24)
        #expect(family.map(\.face) == [0, -1, 0])
        #expect(family.map(\.cluster) == [0, 1, 19])
        #expect(family[2].x - family[1].x == 18)
        // DejaVu Sans has a text-style ❤ (drawn), but with VS16 it asks for emoji presentation (a box).
        #expect(fonts.layout("❤", size: 24).map(\.face) == [1])
        #expect(fonts.layout("❤️", size: 24).map(\.face) == [-1])
    }

    @Test func controlCharactersAreDrawnAsNothing() throws {
        let fonts = try FontSet.system()
        let plain = fonts.layout("AB", size: 24)
        let withControls = fonts.layout("A\u{0}\u{7}\nB", size: 24)
        #expect(withControls.map(\.cluster) == [0, 4])
        #expect(withControls.map(\.x) == plain.map(\.x))
    }

    @Test func layoutShapesOnlyTheFirst256Scalars() throws {
        let glyphs = try FontSet.system().layout(String(repeating: "W", count: 10_000), size: 24)
        #expect(glyphs.count == 256)
        #expect(glyphs.last?.cluster == 255)
    }
}
