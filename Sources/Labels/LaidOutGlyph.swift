/// One glyph placed on a label's line: its face (-1 for the hollow box), glyph id and cluster, and its position
/// in 26.6 pixels from the line's left end and the baseline (y up).
struct LaidOutGlyph {
    var face: Int
    var glyph: UInt32
    var cluster: Int
    var x: Int
    var y: Int
}
