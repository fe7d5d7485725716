/// A participant's display name (a token's `name`, or `?name=` at join): shown in labels, cards and lists.
public enum DisplayName {
    public static let rule = "a display name is 1…64 characters, at most 256 bytes, with no control characters"

    /// 1…64 Unicode scalars, at most 256 UTF-8 bytes, no control characters (the label text rule).
    public static func isValid(_ name: String) -> Bool {
        let scalars = name.unicodeScalars
        return !name.isEmpty && scalars.count <= 64 && name.utf8.count <= 256
            && !scalars.contains { $0.properties.generalCategory == .control }
    }
}
