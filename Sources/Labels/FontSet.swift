import Media
import Synchronization

/// The fonts labels are set in, in fallback order, and the renderer that sets them.
///
/// Thread-safe: one lock is held around every use of FreeType and HarfBuzz, whose faces carry the current
/// pixel size and are not thread-safe. Rendering happens once per text change, never per frame.
public final class FontSet: @unchecked Sendable {
    /// Text beyond this many Unicode scalars is never shaped, so hostile names cost a bounded amount of work.
    static let maxScalars = 256
    static let ellipsis = "\u{2026}"

    public let familyNames: [String]
    private let faces: [FontFace]
    private let lock = Mutex(())

    /// Noto Sans CJK SC (Latin, Chinese, Japanese, Korean) first, then DejaVu Sans (Arabic, Hebrew, Cyrillic,
    /// Greek, symbols), from Debian's packages.
    public static func system() throws(LabelError) -> FontSet {
        let files: [(path: String, index: Int, family: String, package: String)] = [
            ("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", 2, "Noto Sans CJK SC", "fonts-noto-cjk"),
            ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 0, "DejaVu Sans", "fonts-dejavu-core"),
        ]
        let library = try FreeTypeLibrary()
        var faces: [FontFace] = []
        for file in files {
            let face: FontFace
            do {
                face = try FontFace(library: library, path: file.path, index: file.index)
            } catch {
                throw LabelError("\(error.description) (install the Debian package \(file.package))")
            }
            // The collection's order decides which CJK variant the shared Han characters take.
            guard face.familyName == file.family else {
                throw LabelError(
                    "font \(file.path) face \(file.index) is \(face.familyName), not \(file.family) "
                        + "(package \(file.package))")
            }
            faces.append(face)
        }
        return FontSet(faces: faces)
    }

    /// Faces by file and index within the file (a TrueType collection holds several), first choice first.
    public convenience init(files: [(path: String, index: Int)]) throws(LabelError) {
        guard !files.isEmpty else { throw LabelError("a font set needs at least one font file") }
        let library = try FreeTypeLibrary()
        var faces: [FontFace] = []
        for file in files {
            faces.append(try FontFace(library: library, path: file.path, index: file.index))
        }
        self.init(faces: faces)
    }

    /// The faces keep their FreeType library alive.
    private init(faces: [FontFace]) {
        self.faces = faces
        familyNames = faces.map(\.familyName)
    }

    /// Renders `text` in `style` on its box: padding size/3 left and right and size/5 top and bottom around a
    /// line as tall as the first face's ascender and descender. Text wider than `maxWidth` (box included) is cut
    /// at a grapheme cluster boundary and ended with "…". Width and height are even (I420) and at least 2.
    /// nil for empty text or a `maxWidth` narrower than the padding. A size outside `LabelStyle.sizes` is clamped.
    public func render(_ text: String, style: LabelStyle, maxWidth: Int) -> LabelImage? {
        guard !text.isEmpty else { return nil }
        let size = Self.clamped(style.size)
        let padX = size / 3, padY = size / 5
        guard maxWidth >= max(2, 2 * padX) else { return nil }
        return lock.withLock { _ -> LabelImage? in
            guard faces.allSatisfy({ $0.setPixelSize(size) }) else { return nil }
            let metrics = faces[0].verticalMetrics
            let height = Self.evenCeiling(max(2, metrics.ascender + metrics.descender + 2 * padY))
            func boxWidth(_ advance: Int) -> Int { Self.evenCeiling(max(2, 2 * padX + Self.pixels(advance))) }
            let (bounded, cut) = Self.bounded(text)
            var line = typeset(bounded, size: size)
            if cut || boxWidth(line.advance) > maxWidth {
                line = fitted(bounded, cut: cut, size: size) { boxWidth($0) <= maxWidth }
            }
            var coverage = CoverageMap(width: boxWidth(line.advance), height: height)
            let baseline = padY + metrics.ascender
            let tofu = tofuBox(size: size)
            for glyph in line.glyphs {
                let x = padX + Self.pixels(glyph.x)
                if glyph.face >= 0 {
                    faces[glyph.face].draw(
                        glyph.glyph, x: x, baseline: baseline - Self.pixels(glyph.y), into: &coverage)
                } else {
                    coverage.strokeBox(
                        Rect(x: x + tofu.gap, y: baseline - tofu.height, width: tofu.width, height: tofu.height))
                }
            }
            guard let picture = LabelPainter.paint(coverage, style: style) else { return nil }
            return LabelImage(image: picture, inkBox: coverage.inkBox)
        }
    }

    /// Glyphs as laid out for `text` at `size` (clamped), uncut: face index into `familyNames` (-1 for the hollow
    /// box of text no face has), cluster as a UTF-8 byte offset in `text`, x in pixels from the box's left edge.
    public func layout(_ text: String, size: Int) -> [PlacedGlyph] {
        let size = Self.clamped(size)
        return lock.withLock { _ -> [PlacedGlyph] in
            guard faces.allSatisfy({ $0.setPixelSize(size) }) else { return [] }
            let padX = size / 3
            return typeset(Self.bounded(text).text, size: size).glyphs.map {
                PlacedGlyph(face: $0.face, cluster: $0.cluster, x: padX + Self.pixels($0.x))
            }
        }
    }

    /// Shapes `text` run by run and places the runs left to right in display order; `advance` is the line's
    /// width in 26.6 pixels. Called with the lock held and the faces at `size`.
    private func typeset(_ text: String, size: Int) -> (glyphs: [LaidOutGlyph], advance: Int) {
        let segmenter = TextSegmenter(hasGlyph: { self.faces[$0].hasGlyph($1) }, faceCount: faces.count)
        let (runs, rightToLeft) = segmenter.runs(of: text)
        let utf8 = Array(text.utf8)
        let tofu = tofuBox(size: size)
        var glyphs: [LaidOutGlyph] = []
        var pen = 0
        for run in TextSegmenter.visualOrder(runs, rightToLeft: rightToLeft) {
            guard run.face >= 0 else {
                glyphs.append(LaidOutGlyph(face: -1, glyph: 0, cluster: run.start, x: pen, y: 0))
                pen += tofu.advance << 6
                continue
            }
            let shaped = faces[run.face].shape(
                utf8, offset: run.start, length: run.length, rightToLeft: run.rightToLeft)
            for glyph in shaped {
                glyphs.append(
                    LaidOutGlyph(
                        face: run.face, glyph: glyph.glyph, cluster: glyph.cluster, x: pen + glyph.xOffset,
                        y: glyph.yOffset))
                pen += glyph.advance
            }
        }
        return (glyphs, pen)
    }

    /// The longest prefix of whole grapheme clusters that fits with "…" after it (trailing spaces dropped);
    /// "…" alone when no cluster fits, and nothing when even that does not. At most one shaping per halving of
    /// the bounded text.
    private func fitted(
        _ text: String, cut: Bool, size: Int, fits: (Int) -> Bool
    ) -> (glyphs: [LaidOutGlyph], advance: Int) {
        let clusters = Array(text)
        func candidate(_ count: Int) -> (glyphs: [LaidOutGlyph], advance: Int) {
            var prefix = clusters[..<count]
            while let last = prefix.last, last.isWhitespace { prefix = prefix.dropLast() }
            return typeset(String(prefix) + Self.ellipsis, size: size)
        }
        // A cut text may keep every cluster that was shaped; an uncut one that does not fit loses at least one.
        var low = 0, high = cut ? clusters.count : clusters.count - 1
        var best = candidate(0)
        guard fits(best.advance) else { return ([], 0) }
        while low < high {
            let middle = (low + high + 1) / 2
            let line = candidate(middle)
            if fits(line.advance) {
                low = middle
                best = line
            } else {
                high = middle - 1
            }
        }
        return best
    }

    /// The hollow box for text no face has: about 0.6 em wide and cap height tall, with a gap each side.
    private func tofuBox(size: Int) -> (width: Int, height: Int, gap: Int, advance: Int) {
        let width = max(3, (size * 6 + 5) / 10), gap = max(1, size / 12)
        return (width, max(3, faces[0].capHeight), gap, width + 2 * gap)
    }

    /// The whole clusters within the first `maxScalars` scalars of `text`, and whether any were left out.
    static func bounded(_ text: String) -> (text: String, cut: Bool) {
        var scalars = 0
        var end = text.startIndex
        for index in text.indices {
            scalars += text[index].unicodeScalars.count
            guard scalars <= maxScalars else { return (String(text[..<end]), true) }
            end = text.index(after: index)
        }
        return (text, false)
    }

    static func clamped(_ size: Int) -> Int { min(max(size, LabelStyle.sizes.lowerBound), LabelStyle.sizes.upperBound) }

    /// 26.6 fixed point to whole pixels, rounded half up.
    static func pixels(_ value: Int) -> Int { (value + 32) >> 6 }

    static func evenCeiling(_ value: Int) -> Int { value + (value & 1) }
}
