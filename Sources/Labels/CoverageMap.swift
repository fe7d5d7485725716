import Media

/// The text's coverage (0 = none, 255 = full) over the label's box, before colour is applied.
struct CoverageMap {
    let width: Int
    let height: Int
    /// `width · height` values, rows top to bottom.
    private(set) var values: [UInt8]

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        values = [UInt8](repeating: 0, count: width * height)
    }

    /// Overlapping glyphs (joined Arabic letters, marks) keep the stronger coverage instead of summing to a blot.
    mutating func add(x: Int, y: Int, value: UInt8) {
        guard x >= 0, x < width, y >= 0, y < height else { return }
        let i = y * width + x
        if value > values[i] { values[i] = value }
    }

    /// A hollow rectangle with a 1-pixel outline: the box drawn for text no font has.
    mutating func strokeBox(_ box: Rect) {
        guard !box.isEmpty else { return }
        for x in box.x..<box.maxX {
            add(x: x, y: box.y, value: 255)
            add(x: x, y: box.maxY - 1, value: 255)
        }
        for y in box.y..<box.maxY {
            add(x: box.x, y: y, value: 255)
            add(x: box.maxX - 1, y: y, value: 255)
        }
    }

    /// The bounding box of every non-zero value; empty when there is none.
    var inkBox: Rect {
        var minX = width, minY = height, maxX = -1, maxY = -1
        for y in 0..<height {
            let row = y * width
            for x in 0..<width where values[row + x] != 0 {
                minX = min(minX, x)
                maxX = max(maxX, x)
                minY = min(minY, y)
                maxY = max(maxY, y)
            }
        }
        guard maxX >= 0 else { return Rect(x: 0, y: 0, width: 0, height: 0) }
        return Rect(x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1)
    }
}
