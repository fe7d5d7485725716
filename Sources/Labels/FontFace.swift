import CFreeType
import CHarfBuzz

/// One font face: the owner of its `FT_Face` and of the HarfBuzz font that shapes with it.
///
/// `@unchecked Sendable`: neither handle is thread-safe and the pixel size is part of the face's state, so a
/// face is confined to the lock of the `FontSet` that opened it.
final class FontFace: @unchecked Sendable {
    let familyName: String
    /// Held so the library outlives the face.
    private let library: FreeTypeLibrary
    private let face: FT_Face
    /// `hb_font_t`, which holds its own reference to `face`.
    private let font: OpaquePointer
    private var pixelSize = 0

    init(library: FreeTypeLibrary, path: String, index: Int) throws(LabelError) {
        var opened: FT_Face?
        let status = FT_New_Face(library.handle, path, FT_Long(index), &opened)
        guard status == 0, let face = opened else {
            throw LabelError("cannot open font \(path) (face \(index)): \(FreeTypeLibrary.message(status))")
        }
        guard face.pointee.face_flags & FT_Long(FT_FACE_FLAG_SCALABLE) != 0 else {
            FT_Done_Face(face)
            throw LabelError("font \(path) (face \(index)) is not scalable")
        }
        // Glyph lookups below are by Unicode scalar.
        let charmap = FT_Select_Charmap(face, FT_ENCODING_UNICODE)
        guard charmap == 0 else {
            FT_Done_Face(face)
            throw LabelError("font \(path) (face \(index)) has no Unicode charmap: \(FreeTypeLibrary.message(charmap))")
        }
        guard let font = hb_ft_font_create_referenced(face) else {
            FT_Done_Face(face)
            throw LabelError("hb_ft_font_create_referenced failed for \(path) (face \(index))")
        }
        self.library = library
        self.face = face
        self.font = font
        familyName = face.pointee.family_name.map { String(cString: $0) } ?? ""
    }

    deinit {
        hb_font_destroy(font)
        FT_Done_Face(face)
    }

    /// Sets the pixel size for the metrics, shaping and drawing that follow; false when FreeType refuses it.
    func setPixelSize(_ size: Int) -> Bool {
        guard size != pixelSize else { return true }
        guard FT_Set_Pixel_Sizes(face, 0, FT_UInt(size)) == 0 else { return false }
        // hb-ft reads the scale from the face only when told it changed.
        hb_ft_font_changed(font)
        pixelSize = size
        return true
    }

    /// Ascender and descender (positive, below the baseline) in whole pixels at the current size.
    var verticalMetrics: (ascender: Int, descender: Int) {
        guard let size = face.pointee.size else { return (pixelSize, 0) }
        // FreeType rounds the scaled metrics of a scalable face to whole pixels (ceiling and floor).
        return (Int(size.pointee.metrics.ascender) >> 6, -(Int(size.pointee.metrics.descender) >> 6))
    }

    /// Capital height in pixels at the current size, from the OS/2 table; 0.7 em when the font lacks it.
    var capHeight: Int {
        let units = Int(face.pointee.units_per_EM)
        if units > 0, let table = FT_Get_Sfnt_Table(face, FT_SFNT_OS2) {
            let os2 = table.assumingMemoryBound(to: TT_OS2.self).pointee
            if os2.version >= 2, os2.sCapHeight > 0 {
                return (Int(os2.sCapHeight) * pixelSize + units / 2) / units
            }
        }
        return (pixelSize * 7 + 5) / 10
    }

    func hasGlyph(_ scalar: Unicode.Scalar) -> Bool {
        FT_Get_Char_Index(face, FT_ULong(scalar.value)) != 0
    }

    /// Shapes `length` bytes at `offset` of `utf8` (the whole text, so shaping sees the context around the run);
    /// glyphs come out in visual order with whole-text byte offsets as clusters, positions in 26.6 pixels.
    func shape(_ utf8: [UInt8], offset: Int, length: Int, rightToLeft: Bool) -> [ShapedGlyph] {
        guard let buffer = hb_buffer_create() else { return [] }
        defer { hb_buffer_destroy(buffer) }
        utf8.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { text in
                hb_buffer_add_utf8(buffer, text.baseAddress, Int32(text.count), UInt32(offset), Int32(length))
            }
        }
        hb_buffer_guess_segment_properties(buffer)
        hb_buffer_set_direction(buffer, rightToLeft ? HB_DIRECTION_RTL : HB_DIRECTION_LTR)
        hb_shape(font, buffer, nil, 0)
        var count: UInt32 = 0
        guard let infos = hb_buffer_get_glyph_infos(buffer, &count) else { return [] }
        guard let positions = hb_buffer_get_glyph_positions(buffer, &count) else { return [] }
        var glyphs: [ShapedGlyph] = []
        glyphs.reserveCapacity(Int(count))
        for i in 0..<Int(count) {
            glyphs.append(
                ShapedGlyph(
                    glyph: infos[i].codepoint, cluster: Int(infos[i].cluster), advance: Int(positions[i].x_advance),
                    xOffset: Int(positions[i].x_offset), yOffset: Int(positions[i].y_offset)))
        }
        return glyphs
    }

    /// Rasterises `glyph` at the current size and adds its coverage to `coverage` with its origin at
    /// (`x`, `baseline`), clipped to the map. A glyph FreeType cannot render draws nothing.
    func draw(_ glyph: UInt32, x: Int, baseline: Int, into coverage: inout CoverageMap) {
        guard FT_Load_Glyph(face, glyph, cohost_ft_load_render_normal()) == 0, let slot = face.pointee.glyph else {
            return
        }
        let bitmap = slot.pointee.bitmap
        guard let buffer = bitmap.buffer else { return }
        let rows = Int(bitmap.rows), columns = Int(bitmap.width), pitch = Int(bitmap.pitch)
        let mode = FT_Pixel_Mode(UInt32(bitmap.pixel_mode))
        guard mode == FT_PIXEL_MODE_GRAY || mode == FT_PIXEL_MODE_MONO else { return }
        let left = x + Int(slot.pointee.bitmap_left), top = baseline - Int(slot.pointee.bitmap_top)
        for row in 0..<rows {
            let y = top + row
            guard y >= 0, y < coverage.height else { continue }
            // A negative pitch means the rows are stored bottom up.
            let source = pitch >= 0 ? buffer + row * pitch : buffer + (rows - 1 - row) * -pitch
            for column in 0..<columns {
                let value: UInt8
                if mode == FT_PIXEL_MODE_GRAY {
                    value = source[column]
                } else {
                    value = (source[column >> 3] >> (7 - UInt8(column & 7))) & 1 == 1 ? 255 : 0
                }
                coverage.add(x: left + column, y: y, value: value)
            }
        }
    }
}
