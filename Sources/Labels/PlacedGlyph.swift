/// One glyph of a label as laid out, for tests and debugging.
public struct PlacedGlyph: Equatable, Sendable {
    /// Index into `FontSet.familyNames`, or -1 for the hollow box drawn where no font has the text.
    public var face: Int
    /// UTF-8 byte offset in the text of the cluster the glyph belongs to.
    public var cluster: Int
    /// Pixels from the box's left edge to the glyph's origin.
    public var x: Int

    public init(face: Int, cluster: Int, x: Int) {
        self.face = face
        self.cluster = cluster
        self.x = x
    }
}
