import Compositing
import Labels
import Layout
import Media

/// A room's labels and cards: each name rendered once (FreeType and HarfBuzz, `Labels`) for a tile size and style,
/// kept while the placements keep it, and handed to the compositor as it is every frame. Confined to the room's
/// queue.
final class RoomLabels {
    /// The fonts every room sets its labels in, loaded once; the error says which file or package is missing.
    static let fonts: Result<FontSet, LabelError> = Result { () throws(LabelError) in try FontSet.system() }

    /// Why labels cannot be drawn on this machine; nil when they can.
    static var unavailable: String? {
        if case .failure(let error) = fonts { return error.description }
        return nil
    }

    private struct Key: Hashable {
        var text: String
        var style: LabelStyle
        var position: LabelPosition
        var maxWidth: Int
    }

    /// Rendered labels by what they show; emptied when it grows past `limit` (names and sizes changed a lot).
    private var cache: [Key: TileLabel] = [:]
    static let limit = 64
    /// Texts rendered since the room started (steady while names, styles and tile sizes are).
    private(set) var renders = 0

    /// The label of a tile (nil without one, or when it does not fit the tile).
    func label(_ spec: LabelSpec?, name: String, rect: Rect) -> TileLabel? {
        guard let spec, !spec.hidden else { return nil }
        return render(
            spec.text ?? name, style: Self.style(spec), position: spec.position,
            maxWidth: TileLabel.maxWidth(inTileOf: rect))
    }

    /// The card of a tile with no picture: the label's text (else the name) centred, an eighth of the tile's height
    /// (12…96 px), in the label's colour (white without a label) on no box.
    /// A label of "none" hides the card's name too: the producer wanted no names on that tile.
    func card(_ spec: LabelSpec?, name: String, rect: Rect) -> TileLabel? {
        guard spec?.hidden != true else { return nil }
        let shown = spec?.text ?? name
        let size = min(96, max(12, rect.height / 8))
        let style = LabelStyle(
            size: size, color: spec.flatMap { LabelSpec.rgba($0.color) } ?? RGBA(r: 255, g: 255, b: 255, a: 255),
            background: RGBA(r: 0, g: 0, b: 0, a: 0))
        return render(shown, style: style, position: .center, maxWidth: TileLabel.maxWidth(inTileOf: rect))
    }

    private func render(_ text: String, style: LabelStyle, position: LabelPosition, maxWidth: Int) -> TileLabel? {
        guard maxWidth > 0, case .success(let fonts) = Self.fonts else { return nil }
        let key = Key(text: text, style: style, position: position, maxWidth: maxWidth)
        if let made = cache[key] { return made }
        guard let image = fonts.render(text, style: style, maxWidth: maxWidth) else { return nil }
        if cache.count >= Self.limit { cache.removeAll(keepingCapacity: true) }
        let label = TileLabel(image: image.image, position: position)
        cache[key] = label
        renders += 1
        return label
    }

    static func style(_ spec: LabelSpec) -> LabelStyle {
        // LabelSpec.check has passed: the colours parse.
        let defaults = LabelStyle()
        return LabelStyle(
            size: spec.size, color: LabelSpec.rgba(spec.color) ?? defaults.color,
            background: LabelSpec.rgba(spec.background) ?? defaults.background)
    }
}
