// console-editor-model.js — what the layout editor's controls do to its state: the boxes shown now, the selected
// region, z-order, the big/small swap, a new region. Each takes the editor (console-editor.js: `state`, `server`,
// `status`, change(), render()).

import {
    cloneRegions,
    drawOrder,
    effectiveAnchor,
    normaliseZ,
    placements,
    region,
    roundEven,
} from "./console-layout.js";

export function presentUsers(ed) {
    return ed.server.users.slice();
}

export function currentAnchor(ed, users = presentUsers(ed)) {
    return effectiveAnchor(ed.state.anchor, ed.server.roomAnchor, users);
}

/** What the boxes are now: the custom regions, or the grid/pip placements for the people present. */
export function currentBoxes(ed) {
    const { state } = ed;
    if (state.mode === "custom") return state.regions;
    const layout = { mode: state.mode, anchor: state.anchor };
    return placements(layout, presentUsers(ed), state.width, state.height, ed.server.roomAnchor);
}

export function selectedRegion(ed) {
    const { state } = ed;
    return state.mode === "custom" && state.selected !== null ? state.regions[state.selected] || null : null;
}

/** Moves the selected region `step` places in the drawing order (±Infinity: to the top or the bottom). */
export function moveZ(ed, step) {
    const { state } = ed;
    normaliseZ(state.regions);
    const order = drawOrder(state.regions);
    const rank = order.indexOf(state.selected);
    let target = rank + step;
    if (step === Infinity) target = order.length - 1;
    if (step === -Infinity) target = 0;
    target = Math.max(0, Math.min(order.length - 1, target));
    if (target === rank) return;
    order.splice(rank, 1);
    order.splice(target, 0, state.selected);
    order.forEach((index, z) => {
        state.regions[index].z = z;
    });
}

/** In grid or pip mode, touching a box makes the layout custom, starting from where everyone is now. Returns the
 *  box's index among the custom regions. */
export function ensureCustom(ed, index) {
    const { state } = ed;
    if (state.mode === "custom") return index;
    const list = currentBoxes(ed);
    const userId = list[index] && list[index].userId;
    state.regions = cloneRegions(list);
    state.mode = "custom";
    state.dirty = true;
    ed.status.info("The layout is now custom, starting from where everyone was. Apply to use it.");
    return state.regions.findIndex((r) => r.userId === userId);
}

/** Big/small: `guest` takes the anchor's place and size, the anchor the guest's (in pip mode: the guest becomes the
 *  anchor). */
export function swapWithAnchor(ed, guest) {
    const { state } = ed;
    const anchor = currentAnchor(ed, presentUsers(ed));
    if (!guest || !anchor || guest === anchor) {
        ed.status.error("Choose a guest other than the anchor to swap.");
        return;
    }
    if (state.mode === "pip") {
        ed.change(() => (state.anchor = guest));
        return;
    }
    if (state.mode === "grid") {
        state.regions = currentBoxes(ed);
        state.mode = "custom";
    }
    const a = state.regions.findIndex((r) => r.userId === anchor);
    const g = state.regions.findIndex((r) => r.userId === guest);
    if (a < 0 || g < 0) {
        ed.status.error(`Both ${anchor} and ${guest} need a region to swap.`);
        ed.render();
        return;
    }
    ed.change(() => {
        const A = state.regions[a];
        const G = state.regions[g];
        for (const key of ["x", "y", "width", "height", "z", "fit"]) [A[key], G[key]] = [G[key], A[key]];
        state.anchor = guest;
        state.selected = null;
    });
}

/** A new region for `userId`, a third of the canvas, centred, on top, selected. */
export function addRegion(ed, userId) {
    const { state } = ed;
    state.mode = "custom";
    const w = roundEven(state.width / 3);
    const hgt = roundEven(state.height / 3);
    const top = Math.max(-1, ...state.regions.map((r) => r.z || 0)) + 1;
    const x = roundEven((state.width - w) / 2);
    const y = roundEven((state.height - hgt) / 2);
    state.regions.push(region(userId, x, y, w, hgt, { z: top }));
    state.selected = state.regions.length - 1;
}
