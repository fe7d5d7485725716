import Foundation
import Media

/// The rules a layout must satisfy, shared by decoding and `validate` so both say the same thing.
enum LayoutRules {
    /// `[A-Za-z0-9_.-]{1,64}`, the user id rule of the token contract.
    static func isValidUserId(_ id: String) -> Bool {
        let bytes = id.utf8
        guard (1...64).contains(bytes.count) else { return false }
        return bytes.allSatisfy { b in
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39)
                || b == 0x5F || b == 0x2E || b == 0x2D
        }
    }

    /// The canvas-independent rules of one region.
    static func check(_ r: Region) throws(LayoutError) {
        guard isValidUserId(r.userId) else {
            throw LayoutError(.invalidUserId, "userId \(quoted(r.userId)) must match [A-Za-z0-9_.-]{1,64}")
        }
        let limit = Layout.coordinateLimit
        for (name, value) in [("x", r.x), ("y", r.y), ("width", r.width), ("height", r.height), ("z", r.z)] {
            guard (-limit...limit).contains(value) else {
                throw LayoutError(.coordinateOutOfRange, "\(name) \(value) is beyond ±\(limit)")
            }
        }
        guard r.width > 0, r.height > 0 else {
            throw LayoutError(.invalidSize, "size \(r.width)x\(r.height) must be positive")
        }
        // The negated range test also refuses NaN, which compares false with everything.
        guard r.alpha.isFinite, r.alpha >= 0, r.alpha <= 1 else {
            throw LayoutError(.invalidAlpha, "alpha \(r.alpha) must be a number from 0 to 1")
        }
        if let border = r.border {
            let range = RegionBorder.widthRange
            guard range.contains(border.width), border.width % 2 == 0 else {
                throw LayoutError(
                    .invalidBorderWidth,
                    "border.width \(border.width) must be even and \(range.lowerBound)…\(range.upperBound)")
            }
            guard border.tileBorder != nil else {
                throw LayoutError(.invalidBorderColor, "border.color \(quoted(border.color)) must be #RRGGBB")
            }
        }
        if let label = r.label, !label.hidden { try label.check() }
    }

    /// The layout's anchor, when given, follows the user id rule.
    static func checkAnchor(_ anchor: String?) throws(LayoutError) {
        guard let anchor else { return }
        guard isValidUserId(anchor) else {
            throw LayoutError(.invalidAnchor, "anchor \(quoted(anchor)) must match [A-Za-z0-9_.-]{1,64}")
        }
    }

    /// Where a region lands on a canvas: clipped to it, then snapped to even pixels (origin floored to
    /// even, far edge floored to even). Empty when nothing is visible.
    static func placedRect(_ rect: Rect, canvasWidth: Int, canvasHeight: Int) -> Rect {
        rect.intersection(Rect(x: 0, y: 0, width: canvasWidth, height: canvasHeight)).evenAligned
    }
}

extension Layout {
    /// Checks everything decoding checks (for layouts built in code) plus the canvas rules: the canvas
    /// has pixels and every region shows at least 2×2 of them once clipped and snapped to even pixels.
    /// Regions are checked in every mode (a grid or pip layout may carry them; they are kept, not used).
    public func validate(canvasWidth: Int, canvasHeight: Int) throws(LayoutError) {
        let limit = Layout.coordinateLimit
        guard (2...limit).contains(canvasWidth), (2...limit).contains(canvasHeight) else {
            throw LayoutError(
                .invalidCanvas, "canvas \(canvasWidth)x\(canvasHeight) must be 2…\(limit) pixels each way")
        }
        try LayoutRules.checkAnchor(anchor)
        if let label, !label.hidden {
            do { try label.check() } catch { throw error.at("label") }
        }
        guard regions.count <= Layout.maxRegions else {
            throw LayoutError(.tooManyRegions, "\(regions.count) regions, at most \(Layout.maxRegions) allowed")
        }
        for (i, region) in regions.enumerated() {
            do {
                try LayoutRules.check(region)
            } catch {
                throw error.at("regions[\(i)]")
            }
            let placed = LayoutRules.placedRect(region.rect, canvasWidth: canvasWidth, canvasHeight: canvasHeight)
            guard !placed.isEmpty else {
                throw LayoutError(
                    .outsideCanvas,
                    "regions[\(i)] (\(region.userId)) at \(region.rect) has no visible "
                        + "pixels on the \(canvasWidth)x\(canvasHeight) canvas once clipped and snapped to even pixels")
            }
        }
    }

    /// Decodes the layout JSON, turning every failure (syntax, missing key, wrong type, broken rule) into a
    /// `LayoutError` with a readable message.
    public static func decode(from data: Data) throws(LayoutError) -> Layout {
        do {
            return try JSONDecoder().decode(Layout.self, from: data)
        } catch let error as LayoutError {
            throw error
        } catch let DecodingError.keyNotFound(key, context) {
            throw LayoutError(.malformed, "missing \(path(context.codingPath + [key]))")
        } catch let DecodingError.typeMismatch(type, context) {
            throw LayoutError(.malformed, "\(path(context.codingPath)) must be \(typeName(type))")
        } catch let DecodingError.valueNotFound(type, context) {
            throw LayoutError(.malformed, "\(path(context.codingPath)) must be \(typeName(type)), not null")
        } catch let DecodingError.dataCorrupted(context) {
            let at = context.codingPath.isEmpty ? "" : " at \(path(context.codingPath))"
            throw LayoutError(.malformed, "not valid layout JSON\(at)")
        } catch {
            throw LayoutError(.malformed, "not valid layout JSON")
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        guard !keys.isEmpty else { return "layout" }
        var out = ""
        for key in keys {
            if let i = key.intValue {
                out += "[\(i)]"
            } else {
                out += out.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return out
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is Int.Type: "an integer"
        case is String.Type: "a string"
        case is Double.Type: "a number"
        default: "a \(type)"
        }
    }
}

extension Layout {
    /// The same layout on another canvas: every region's rect scaled by the change of each side (edges rounded to
    /// even pixels, sizes at least 2), so a region keeps its share of the canvas. Grid and pip re-place themselves.
    public func refitted(fromWidth: Int, fromHeight: Int, toWidth: Int, toHeight: Int) -> Layout {
        guard fromWidth > 0, fromHeight > 0, fromWidth != toWidth || fromHeight != toHeight else { return self }
        func scaled(_ value: Int, _ from: Int, _ to: Int) -> Int {
            let exact = Double(value) * Double(to) / Double(from)
            return Int((exact / 2).rounded()) * 2
        }
        var copy = self
        for i in copy.regions.indices {
            let r = copy.regions[i]
            let x0 = scaled(r.x, fromWidth, toWidth), x1 = scaled(r.x + r.width, fromWidth, toWidth)
            let y0 = scaled(r.y, fromHeight, toHeight), y1 = scaled(r.y + r.height, fromHeight, toHeight)
            copy.regions[i].x = x0
            copy.regions[i].y = y0
            copy.regions[i].width = max(2, x1 - x0)
            copy.regions[i].height = max(2, y1 - y0)
        }
        return copy
    }
}
