// console-layout.js — layout geometry for the editor, as the server computes it (Sources/Mixing/LayoutEngine.swift,
// PipLayout.swift), so the editor can show a grid or pip layout as boxes and turn it into custom regions.

export const FITS = ["cover", "contain", "stretch"];
export const MAX_REGIONS = 16;
export const MIN_SIZE = 16; // the editor's smallest box, canvas pixels (the server needs 2×2 visible)

export const floorEven = (v) => Math.floor(v / 2) * 2;
export const roundEven = (v) => Math.round(v / 2) * 2;

function distinct(users) {
    return [...new Set(users)];
}

export function gridShape(n) {
    if (n <= 0) return { columns: 0, rows: 0 };
    let columns = Math.ceil(Math.sqrt(n));
    while (columns * columns < n) columns += 1;
    while (columns > 1 && (columns - 1) * (columns - 1) >= n) columns -= 1;
    return { columns, rows: Math.ceil(n / columns) };
}

/** grid: equal tiles in join order, fit contain, z 0. */
export function gridRegions(users, width, height) {
    const list = distinct(users);
    const { columns, rows } = gridShape(list.length);
    const edge = (i, count, size) => floorEven(Math.floor((i * size) / count));
    return list.map((userId, i) => {
        const col = i % columns;
        const row = Math.floor(i / columns);
        const x0 = edge(col, columns, width);
        const x1 = edge(col + 1, columns, width);
        const y0 = edge(row, rows, height);
        const y1 = edge(row + 1, rows, height);
        return region(userId, x0, y0, x1 - x0, y1 - y0, { z: 0, fit: "contain" });
    });
}

export function pipSlots(width, height) {
    const w = floorEven(Math.floor(width / 4));
    const hgt = floorEven(Math.floor(height / 4));
    const margin = floorEven(Math.max(2, Math.floor(height / 45)));
    if (w <= 0 || hgt <= 0) return [];
    const right = floorEven(width - margin);
    const bottom = floorEven(height - margin);
    const slots = [];
    for (let x = right - w; x >= margin; x -= w + margin) {
        for (let y = bottom - hgt; y >= margin; y -= hgt + margin) slots.push({ x, y, width: w, height: hgt });
    }
    return slots;
}

/** pip: the anchor full-canvas (z 0, cover), the others small from the bottom-right corner (z 1, cover). */
export function pipRegions(anchor, users, width, height) {
    const list = distinct(users);
    if (!anchor) anchor = list[0];
    if (!anchor) return [];
    const out = [region(anchor, 0, 0, floorEven(width), floorEven(height), { z: 0, fit: "cover" })];
    const slots = pipSlots(width, height);
    list.filter((u) => u !== anchor).forEach((userId, i) => {
        if (i < slots.length) {
            const s = slots[i];
            out.push(region(userId, s.x, s.y, s.width, s.height, { z: 1, fit: "cover" }));
        }
    });
    return out;
}

/** Who a pip layout shows full-canvas: the layout's anchor if present, else the room's, else the first to join. */
export function effectiveAnchor(layoutAnchor, roomAnchor, users) {
    if (layoutAnchor && users.includes(layoutAnchor)) return layoutAnchor;
    if (roomAnchor && users.includes(roomAnchor)) return roomAnchor;
    return users[0] || null;
}

export function region(userId, x, y, width, height, extra = {}) {
    return { userId, x, y, width, height, z: 0, fit: "cover", alpha: 1, ...extra };
}

/** A region as the API takes it (only known fields, integers, border only when set). */
export function regionForAPI(r) {
    const out = {
        userId: r.userId,
        x: Math.round(r.x),
        y: Math.round(r.y),
        width: Math.max(1, Math.round(r.width)),
        height: Math.max(1, Math.round(r.height)),
        z: Math.round(r.z || 0),
        fit: FITS.includes(r.fit) ? r.fit : "cover",
        alpha: Math.min(1, Math.max(0, Number.isFinite(r.alpha) ? r.alpha : 1)),
    };
    if (r.border && r.border.color && r.border.width) {
        out.border = { color: r.border.color, width: Math.min(64, Math.max(2, roundEven(r.border.width))) };
    }
    const label = labelForAPI(r.label);
    if (label) out.label = label;
    return out;
}

/** Where a label may sit in its tile (protocol/openapi.yaml, Label). */
export const LABEL_POSITIONS = ["top-left", "top", "top-right", "center", "bottom-left", "bottom", "bottom-right"];

/** A region's or the layout's label as the API takes it: "auto", "none", or an object (no text: the name). */
export function labelForAPI(label) {
    if (label === "auto" || label === "none") return label;
    if (!label || typeof label !== "object") return undefined;
    const out = {};
    const text = typeof label.text === "string" ? label.text.trim().slice(0, 64) : "";
    if (text) out.text = text;
    if (LABEL_POSITIONS.includes(label.position)) out.position = label.position;
    if (Number.isFinite(label.size)) out.size = Math.min(128, Math.max(8, Math.round(label.size)));
    for (const key of ["color", "background"]) {
        if (/^#?([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/.test(label[key] || "")) out[key] = label[key];
    }
    return out;
}

/** What a label shows for `userId`: its own text, else the participant's name (`names`), else the user id. */
export function labelText(label, userId, names = {}) {
    if (!label || label === "none") return null;
    if (typeof label === "object" && label.text) return label.text;
    return names[userId] || userId;
}

export function cloneRegions(regions) {
    return (regions || []).map((r) => ({
        ...r,
        border: r.border ? { ...r.border } : undefined,
        label: r.label && typeof r.label === "object" ? { ...r.label } : r.label,
    }));
}

/** The placements the server would draw for `layout` (regions in custom mode, computed ones otherwise). */
export function placements(layout, users, width, height, roomAnchor) {
    if (!layout) return [];
    if (layout.mode === "grid") return gridRegions(users, width, height);
    if (layout.mode === "pip") {
        return pipRegions(effectiveAnchor(layout.anchor, roomAnchor, users), users, width, height);
    }
    return cloneRegions(layout.regions);
}

/** Rewrites z as 0…n-1 in drawing order (z, then list order), keeping the list order. */
export function normaliseZ(regions) {
    const order = regions.map((r, i) => ({ r, i })).sort((a, b) => (a.r.z || 0) - (b.r.z || 0) || a.i - b.i);
    order.forEach(({ r }, rank) => {
        r.z = rank;
    });
    return regions;
}

/** Drawing order (bottom first) as indexes into `regions`. */
export function drawOrder(regions) {
    return regions
        .map((r, i) => ({ z: r.z || 0, i }))
        .sort((a, b) => a.z - b.z || a.i - b.i)
        .map(({ i }) => i);
}

/** Whether a region shows at least 2×2 canvas pixels, as the server requires. */
export function visibleOnCanvas(r, width, height) {
    const x0 = Math.max(0, r.x);
    const y0 = Math.max(0, r.y);
    const x1 = Math.min(width, r.x + r.width);
    const y1 = Math.min(height, r.y + r.height);
    return floorEven(x1) - floorEven(x0) >= 2 && floorEven(y1) - floorEven(y0) >= 2;
}
