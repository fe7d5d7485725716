/// One glyph out of HarfBuzz: its id in its face, its cluster (UTF-8 byte offset in the text) and its
/// position, all in 26.6 fixed-point pixels.
struct ShapedGlyph {
    var glyph: UInt32
    var cluster: Int
    var advance: Int
    var xOffset: Int
    var yOffset: Int
}
