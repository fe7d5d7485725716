// console-editor-serialise.js — the layout editor's state to and from the API: the editor's view of the room (GET
// /v1/rooms/{room}), the server's layout loaded into the editor, and Apply → PUT /v1/rooms/{room}/layout.

import { api, errorSentence, isAbort } from "./api.js";
import { cloneRegions, labelForAPI, regionForAPI, visibleOnCanvas } from "./console-layout.js";

export function sameLayout(a, b) {
    return JSON.stringify(a) === JSON.stringify(b);
}

/** What the editor keeps of the room as GET /v1/rooms/{room} gives it. */
export function serverView(info) {
    return {
        layout: info.layout,
        users: info.participants.map((p) => p.userId),
        names: Object.fromEntries(info.participants.filter((p) => p.name).map((p) => [p.userId, p.name])),
        roomAnchor: info.anchor || null,
        pipAnchor: info.pipAnchor || null,
        watermark: info.watermark || null,
    };
}

/** The server's layout into the editor, unless the editor has changes not applied (`force`: even then). */
export function loadLayout(ed, force) {
    const { state } = ed;
    const layout = ed.server.layout;
    if (!layout) return;
    if (state.dirty && !force) return;
    state.mode = layout.mode;
    state.anchor = layout.anchor || null;
    state.label = layout.label && typeof layout.label === "object" ? { ...layout.label } : layout.label || null;
    state.regions = cloneRegions(layout.regions);
    if (state.selected !== null && state.selected >= state.regions.length) state.selected = null;
    state.dirty = false;
    ed.render();
}

/** The PUT body for the editor's layout. */
export function layoutBody(state) {
    const body = { mode: state.mode, regions: state.regions.map(regionForAPI) };
    if (state.anchor) body.anchor = state.anchor;
    const label = labelForAPI(state.label);
    if (label) body.label = label;
    return body;
}

/** Apply: PUTs the layout (refused here when a region is off the canvas), then loads what the server kept. */
export async function applyLayout(ed, button) {
    const { state } = ed;
    const body = layoutBody(state);
    const hidden = body.regions.filter((r) => !visibleOnCanvas(r, state.width, state.height));
    if (hidden.length) {
        ed.status.error(`The region of ${hidden[0].userId} is off the canvas: move it back before applying.`);
        return;
    }
    button.disabled = true;
    try {
        const path = `/v1/rooms/${encodeURIComponent(ed.room)}/layout`;
        const layout = await api("PUT", path, { token: ed.token, json: body, signal: ed.signal });
        ed.server.layout = layout;
        state.dirty = false;
        loadLayout(ed, true);
        ed.status.ok("Layout applied: it is on the programme from the next frame.");
        if (ed.onApplied) ed.onApplied(layout);
    } catch (error) {
        if (isAbort(error)) return;
        if (error.status === 401) {
            ed.onAuthError(error);
            return;
        }
        ed.status.error(errorSentence(error));
    } finally {
        button.disabled = false;
    }
}
