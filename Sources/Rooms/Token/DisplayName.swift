import Layout

/// A participant's display name (a token's `name`, or `?name=` at join): shown in labels, cards and lists, so it
/// follows a label's text rules (`LabelSpec.textProblem`).
public enum DisplayName {
    public static let rule = "a display name is 1…64 characters, at most 256 bytes, with no control characters"

    public static func isValid(_ name: String) -> Bool { LabelSpec.textProblem(name) == nil }
}
