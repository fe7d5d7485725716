/// Rows printed in aligned columns, two spaces apart: what a person reads (scripts use `--json`).
public struct Table: Sendable {
    public var header: [String]?
    public private(set) var rows: [[String]] = []

    /// `header` nil: a key–value block, no header line.
    public init(_ header: [String]? = nil) { self.header = header }

    public mutating func add(_ row: [String]) { rows.append(row) }

    /// Each column as wide as its widest cell; the last column is not padded, so no line ends in spaces.
    public func render() -> String {
        let all = (header.map { [$0] } ?? []) + rows
        let columns = all.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in all {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
        }
        return all.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
