// console-editor-drag.js — moving and resizing the layout editor's boxes: with the pointer (drag a box, or one of
// its corner handles; edges snap to the canvas's edges and centre and to the other boxes; Shift keeps the aspect
// ratio, Alt turns snapping off) and with the keyboard (arrows, Shift+arrows, Alt+arrows, PageUp/PageDown, Delete).

import { MIN_SIZE, roundEven } from "./console-layout.js";
import { ensureCustom, moveZ } from "./console-editor-model.js";
import { boxAt, markSelected, placeBox } from "./console-editor-stage.js";

const SNAP_PX = 7; // screen pixels within which an edge snaps to the canvas's or another box's edge
const KEYS = ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Delete", "Backspace", "PageUp", "PageDown"];

function snapValue(value, targets, threshold) {
    let best = value;
    let bestDistance = threshold;
    for (const t of targets) {
        const d = Math.abs(t - value);
        if (d < bestDistance) {
            best = t;
            bestDistance = d;
        }
    }
    return best;
}

/** The smallest shift that snaps one of `edges` to a target, or 0 when none is near enough. */
function snapShift(edges, targets, threshold) {
    const shifts = edges.map((e) => snapValue(e, targets, threshold) - e).filter((d) => d !== 0);
    return shifts.length ? shifts.reduce((a, b) => (Math.abs(b) < Math.abs(a) ? b : a)) : 0;
}

/** Region `r` moved by (dx, dy) from `s`, snapped by either edge or the centre, kept partly on the canvas. */
function moveBox(state, r, s, dx, dy, snap) {
    let x = s.x + dx;
    let y = s.y + dy;
    const sx = snapShift([x, x + s.width, x + s.width / 2], snap.xs, snap.threshold);
    const sy = snapShift([y, y + s.height, y + s.height / 2], snap.ys, snap.threshold);
    if (sx) x += sx;
    if (sy) y += sy;
    r.x = roundEven(Math.min(state.width - MIN_SIZE, Math.max(MIN_SIZE - s.width, x)));
    r.y = roundEven(Math.min(state.height - MIN_SIZE, Math.max(MIN_SIZE - s.height, y)));
}

/** Region `r` resized from `s` by the corner `handle` ("nw", "se", …) dragged by (dx, dy). */
function resizeBox(r, s, handle, dx, dy, keepAspect, snap) {
    const { xs, ys, threshold } = snap;
    let left = s.x;
    let top = s.y;
    let right = s.x + s.width;
    let bottom = s.y + s.height;
    if (handle.includes("w")) left = snapValue(s.x + dx, xs, threshold);
    if (handle.includes("e")) right = snapValue(s.x + s.width + dx, xs, threshold);
    if (handle.includes("n")) top = snapValue(s.y + dy, ys, threshold);
    if (handle.includes("s")) bottom = snapValue(s.y + s.height + dy, ys, threshold);
    if (keepAspect) {
        // follow the larger change
        const aspect = s.width / s.height;
        const w = right - left;
        const hh = bottom - top;
        if (Math.abs(w - s.width) / s.width > Math.abs(hh - s.height) / s.height) {
            const nh = w / aspect;
            if (handle.includes("n")) top = bottom - nh;
            else bottom = top + nh;
        } else {
            const nw = hh * aspect;
            if (handle.includes("w")) left = right - nw;
            else right = left + nw;
        }
    }
    if (right - left < MIN_SIZE) {
        if (handle.includes("w")) left = right - MIN_SIZE;
        else right = left + MIN_SIZE;
    }
    if (bottom - top < MIN_SIZE) {
        if (handle.includes("n")) top = bottom - MIN_SIZE;
        else bottom = top + MIN_SIZE;
    }
    r.x = roundEven(left);
    r.y = roundEven(top);
    r.width = Math.max(MIN_SIZE, roundEven(right - left));
    r.height = Math.max(MIN_SIZE, roundEven(bottom - top));
}

function dragMove(ed, event) {
    const { drag, state } = ed;
    if (!drag || event.pointerId !== drag.pointerId) return;
    const r = state.regions[drag.index];
    if (!r) return;
    const dx = (event.clientX - drag.startX) / drag.scale;
    const dy = (event.clientY - drag.startY) / drag.scale;
    if (!drag.moved && Math.abs(dx) * drag.scale < 2 && Math.abs(dy) * drag.scale < 2) return;
    drag.moved = true;
    const others = state.regions.filter((_, i) => i !== drag.index);
    const snap = {
        threshold: event.altKey ? 0 : SNAP_PX / drag.scale,
        xs: [0, state.width, state.width / 2, ...others.flatMap((o) => [o.x, o.x + o.width])],
        ys: [0, state.height, state.height / 2, ...others.flatMap((o) => [o.y, o.y + o.height])],
    };
    if (!drag.handle) moveBox(state, r, drag.start, dx, dy, snap);
    else resizeBox(r, drag.start, drag.handle, dx, dy, event.shiftKey, snap);
    state.dirty = true;
    ed.header.dirtyChip.classList.remove("hidden");
    placeBox(ed, drag.box, r);
    ed.form.render();
}

function endDrag(ed, event) {
    const { drag } = ed;
    if (!drag || (event && event.pointerId !== drag.pointerId)) return;
    const { box } = drag;
    const listeners = ed.dragListeners;
    box.removeEventListener("pointermove", listeners.move);
    box.removeEventListener("pointerup", listeners.end);
    box.removeEventListener("pointercancel", listeners.end);
    box.removeEventListener("lostpointercapture", listeners.end);
    box.classList.remove("dragging");
    if (box.hasPointerCapture && box.hasPointerCapture(drag.pointerId)) box.releasePointerCapture(drag.pointerId);
    ed.drag = null;
    ed.render();
    const again = boxAt(ed, ed.state.selected);
    if (again) again.focus({ preventScroll: true });
}

/** The pointer listeners of a drag, one pair per editor (so that adding them twice to a box adds them once). */
export function dragListeners(ed) {
    return { move: (event) => dragMove(ed, event), end: (event) => endDrag(ed, event) };
}

/** pointerdown on box `index`: selects it and follows the pointer until it is released. */
export function startDrag(ed, event, index) {
    if (event.button !== 0) return;
    event.preventDefault();
    const { state } = ed;
    const handle = event.target.closest("[data-handle]");
    const wasAuto = state.mode !== "custom";
    index = ensureCustom(ed, index);
    if (index < 0) return;
    state.selected = index;
    if (wasAuto) ed.render();
    else {
        markSelected(ed, index);
        ed.form.render();
    }
    const box = boxAt(ed, index);
    if (!box) return;
    box.focus({ preventScroll: true });
    const rect = ed.stage.el.getBoundingClientRect();
    const r = state.regions[index];
    ed.drag = {
        pointerId: event.pointerId,
        box,
        index,
        handle: handle ? handle.dataset.handle : null,
        scale: rect.width / state.width,
        startX: event.clientX,
        startY: event.clientY,
        start: { x: r.x, y: r.y, width: r.width, height: r.height },
        moved: false,
    };
    const listeners = ed.dragListeners;
    box.setPointerCapture(event.pointerId);
    box.classList.add("dragging");
    box.addEventListener("pointermove", listeners.move);
    box.addEventListener("pointerup", listeners.end);
    box.addEventListener("pointercancel", listeners.end);
    box.addEventListener("lostpointercapture", listeners.end);
}

/** keydown on box `index`: arrows move it 2 px (Shift: 20), Alt+arrows resize, PageUp/PageDown restack, Delete
 *  removes. */
export function keyOnBox(ed, event, index) {
    if (!KEYS.includes(event.key)) return;
    event.preventDefault();
    const { state } = ed;
    index = ensureCustom(ed, index);
    if (index < 0) return;
    state.selected = index;
    const r = state.regions[index];
    const step = event.shiftKey ? 20 : 2;
    const dx = event.key === "ArrowLeft" ? -step : event.key === "ArrowRight" ? step : 0;
    const dy = event.key === "ArrowUp" ? -step : event.key === "ArrowDown" ? step : 0;
    ed.change(() => {
        if (event.key === "Delete" || event.key === "Backspace") {
            state.regions.splice(index, 1);
            state.selected = null;
        } else if (event.key === "PageUp") {
            moveZ(ed, +1);
        } else if (event.key === "PageDown") {
            moveZ(ed, -1);
        } else if (event.altKey) {
            r.width = Math.max(MIN_SIZE, r.width + dx);
            r.height = Math.max(MIN_SIZE, r.height + dy);
        } else {
            r.x += dx;
            r.y += dy;
        }
    });
    const again = boxAt(ed, state.selected);
    if (again) again.focus({ preventScroll: true });
}
