/// A font that cannot be loaded or used, with FreeType's or HarfBuzz's reason.
public struct LabelError: Error, CustomStringConvertible, Sendable {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
