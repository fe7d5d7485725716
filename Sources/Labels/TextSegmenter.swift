/// Splits text into runs of one face and one direction, in logical order, and orders them for display.
///
/// A grapheme cluster goes to the first face that has a glyph for each of its scalars (default-ignorables such
/// as ZWJ and variation selectors need none); a cluster no face has, or one in emoji presentation, becomes a
/// run of its own with face -1. Direction comes from a cluster's first strong scalar: right-to-left scripts'
/// letters are RTL, other letters LTR. Digits are LTR without setting the base direction, so a number stays in
/// reading order inside RTL text; everything else follows the strong cluster before it (the base direction at
/// the start). Control characters and line or paragraph separators are left out: they are drawn as nothing.
struct TextSegmenter {
    /// Whether face `face` has a glyph for `scalar`.
    let hasGlyph: (_ face: Int, _ scalar: Unicode.Scalar) -> Bool
    let faceCount: Int

    /// The runs of `text` in logical order, and whether the base direction (the first strong cluster's) is
    /// right to left.
    func runs(of text: String) -> (runs: [TextRun], rightToLeft: Bool) {
        var base = false
        for cluster in text {
            if let strong = Self.strongDirection(cluster) {
                base = strong
                break
            }
        }
        var runs: [TextRun] = []
        var lastStrong = base
        var offset = 0
        for cluster in text {
            let start = offset, length = cluster.utf8.count
            offset += length
            if cluster.unicodeScalars.contains(where: Self.isDrawnAsNothing) { continue }
            let rightToLeft: Bool
            if let strong = Self.strongDirection(cluster) {
                rightToLeft = strong
                lastStrong = strong
            } else {
                rightToLeft = Self.isNumber(cluster) ? false : lastStrong
            }
            let face = chooseFace(cluster, previous: runs.last?.face)
            if let last = runs.last, face >= 0, last.face == face, last.rightToLeft == rightToLeft,
                last.start + last.length == start
            {
                runs[runs.count - 1].length += length
            } else {
                runs.append(TextRun(start: start, length: length, face: face, rightToLeft: rightToLeft))
            }
        }
        return (runs, base)
    }

    /// Runs in the order they are drawn, left to right: each maximal sequence of runs at or above an embedding
    /// level is reversed, from the highest level down to the lowest odd one (Unicode's rule L2, with two levels).
    static func visualOrder(_ runs: [TextRun], rightToLeft base: Bool) -> [TextRun] {
        let baseLevel = base ? 1 : 0
        let levels = runs.map { $0.rightToLeft == base ? baseLevel : baseLevel + 1 }
        var order = Array(runs.indices)
        guard let highest = levels.max() else { return [] }
        var level = highest
        while level >= 1 {
            var i = 0
            while i < order.count {
                guard levels[order[i]] >= level else {
                    i += 1
                    continue
                }
                var end = i
                while end < order.count && levels[order[end]] >= level { end += 1 }
                order[i..<end].reverse()
                i = end
            }
            level -= 1
        }
        return order.map { runs[$0] }
    }

    private func chooseFace(_ cluster: Character, previous: Int?) -> Int {
        // The faces are monochrome text faces: a cluster that asks for emoji presentation (by default, like 😀,
        // or with VS16) gets the box even where a face has a text-style outline for it, so every emoji looks alike.
        if cluster.unicodeScalars.contains(where: { $0.properties.isEmojiPresentation || $0.value == 0xFE0F }) {
            return -1
        }
        let needed = cluster.unicodeScalars.filter { !$0.properties.isDefaultIgnorableCodePoint }
        // Only invisible scalars: no glyph is needed, so stay in the face around it.
        guard !needed.isEmpty else { return max(previous ?? 0, 0) }
        for face in 0..<faceCount where needed.allSatisfy({ hasGlyph(face, $0) }) {
            return face
        }
        return -1
    }

    private static func isDrawnAsNothing(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }

    /// true for right to left, false for left to right, nil for a cluster with no strong scalar.
    private static func strongDirection(_ cluster: Character) -> Bool? {
        for scalar in cluster.unicodeScalars {
            let category = scalar.properties.generalCategory
            let isLetter: Bool
            switch category {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: isLetter = true
            default: isLetter = false
            }
            if isRightToLeftScript(scalar) {
                if isLetter { return true }
            } else if isLetter {
                return false
            }
        }
        return nil
    }

    private static func isNumber(_ cluster: Character) -> Bool {
        cluster.unicodeScalars.first?.properties.generalCategory == .decimalNumber
    }

    /// Hebrew, Arabic, Syriac, Thaana, N'Ko, Samaritan, Mandaic and their extensions and presentation forms, and
    /// the supplementary planes' right-to-left blocks.
    private static func isRightToLeftScript(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0590...0x08FF, 0xFB1D...0xFDFF, 0xFE70...0xFEFF, 0x10800...0x10FFF, 0x1E800...0x1EFFF: true
        default: false
        }
    }
}
