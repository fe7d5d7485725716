import Media
import Testing

@Suite struct RGBATests {
    @Test func hexParsesSixAndEightDigitsInEitherCase() {
        #expect(RGBA(hex: "#FFa0B1") == RGBA(r: 255, g: 160, b: 177, a: 255))
        #expect(RGBA(hex: "#11223344") == RGBA(r: 0x11, g: 0x22, b: 0x33, a: 0x44))
        #expect(RGBA(hex: "#00000099") == RGBA(r: 0, g: 0, b: 0, a: 0x99))
    }

    @Test func hexRefusesAnythingElse() {
        let refused = ["", "#", "#123", "112233", "#1122334", "#112233445", "#GG0000", "#11 233", "#１１２２３３", "#+12233"]
        for text in refused {
            #expect(RGBA(hex: text) == nil, "\(text)")
        }
    }

    @Test func hexIsLowercaseWithAlpha() {
        #expect(RGBA(r: 255, g: 160, b: 177, a: 255).hex == "#ffa0b1ff")
        #expect(RGBA(r: 0, g: 1, b: 0xAB, a: 0).hex == "#0001ab00")
        #expect(RGBA(hex: RGBA(r: 18, g: 52, b: 86, a: 120).hex) == RGBA(r: 18, g: 52, b: 86, a: 120))
    }
}
