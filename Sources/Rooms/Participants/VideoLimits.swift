/// What one participant's video may cost the server: the largest picture a room decodes (`maxVideoSize`, either
/// orientation, so a phone held upright fits a landscape bound), and the decoder CPU time a second it may use
/// (`decode_budget_ms`, server-wide). See `DecodeBudget` and docs/architecture.md, "Decoding off the packet path".
public struct VideoLimits: Sendable, Equatable {
    public var maxWidth: Int
    public var maxHeight: Int
    public var decodeBudgetMs: Int64

    public init(maxWidth: Int = 1920, maxHeight: Int = 1080, decodeBudgetMs: Int64 = 500) {
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        self.decodeBudgetMs = decodeBudgetMs
    }

    func allows(width: Int, height: Int) -> Bool {
        max(width, height) <= max(maxWidth, maxHeight) && min(width, height) <= min(maxWidth, maxHeight)
    }
}
