// console-editor.js — the layout editor: the canvas to scale with one box per region, dragged and resized with the
// mouse or the keyboard, z-order, fit, alpha, border, grid and pip presets, the big/small swap, and Apply → PUT
// /v1/rooms/{room}/layout. Its parts, each in its own module: the canvas (console-editor-stage.js), dragging
// (console-editor-drag.js), the region form (console-editor-form.js), the controls (console-editor-toolbar.js),
// what they do to the state (console-editor-model.js) and the state to and from the API
// (console-editor-serialise.js).
//
// The editor starts from the room's layout. In grid and pip mode the boxes are where the server puts everyone now;
// moving or resizing one turns the layout into a custom one with those rectangles (Apply to use it).

import { h, messageLine, setText } from "./console-dom.js";
import { dragListeners, keyOnBox, startDrag } from "./console-editor-drag.js";
import { createForm } from "./console-editor-form.js";
import { loadLayout, sameLayout, serverView } from "./console-editor-serialise.js";
import { createStage, fitStage, renderBoxes, renderWatermark } from "./console-editor-stage.js";
import { createToolbar } from "./console-editor-toolbar.js";

/**
 * The editor every part is given:
 *   state          width, height (the canvas), mode, anchor (the layout's), regions (the custom ones, kept in every
 *                  mode), selected (index into regions, custom mode only), dirty (changes not applied)
 *   server         the room as last polled (serverView: layout, users, roomAnchor, pipAnchor, watermark)
 *   speaker        the active speaker; drag: the pointer gesture in progress; pendingRender: a render waits for it
 *   room, token, signal, onAuthError, onApplied   as createEditor was given them
 *   status         the editor's message line
 *   change(fn)     runs fn, marks the layout changed and redraws; render() redraws
 * and its parts: header, stage, toolbar, form, el.
 */
function editorState({ room, token, signal, onAuthError, onApplied }) {
    return {
        room,
        token,
        signal,
        onAuthError,
        onApplied,
        state: {
            width: 1280,
            height: 720,
            mode: "grid",
            anchor: null,
            label: null,
            regions: [],
            selected: null,
            dirty: false,
        },
        server: { layout: null, users: [], names: {}, roomAnchor: null, pipAnchor: null, watermark: null },
        speaker: null,
        drag: null,
        pendingRender: false,
        status: messageLine(),
    };
}

function createHeader() {
    return {
        sizeLabel: h("span", { class: "muted small" }, ""),
        modeLabel: h("span", { class: "chip" }, ""),
        dirtyChip: h("span", { class: "chip warn hidden", dataset: { testid: "layout-dirty" } }, "not applied"),
    };
}

/** Redraws everything from the state; while a box is being dragged, once the drag ends. */
function render(ed) {
    if (ed.drag) {
        ed.pendingRender = true;
        return;
    }
    ed.pendingRender = false;
    const { state, header } = ed;
    fitStage(ed);
    setText(header.sizeLabel, `${state.width}×${state.height}`);
    setText(header.modeLabel, state.mode);
    ed.toolbar.modeSelect.value = state.mode;
    header.dirtyChip.classList.toggle("hidden", !state.dirty);
    ed.el.classList.toggle("dirty", state.dirty);
    renderBoxes(ed, {
        pointerdown: (event, index) => startDrag(ed, event, index),
        keydown: (event, index) => keyOnBox(ed, event, index),
    });
    renderWatermark(ed);
    ed.toolbar.render();
    ed.form.render();
}

/** The room as GET /v1/rooms/{room} gives it: the server's layout when the editor has no changes, else a redraw
 *  when what the boxes stand on changed. */
function update(ed, info) {
    const { state } = ed;
    const sizeChanged = info.canvas.width !== state.width || info.canvas.height !== state.height;
    state.width = info.canvas.width;
    state.height = info.canvas.height;
    const next = serverView(info);
    const layoutChanged = !sameLayout(next.layout, ed.server.layout);
    const usersChanged = next.users.join("\n") !== ed.server.users.join("\n");
    const watermarkChanged = !sameLayout(next.watermark, ed.server.watermark);
    const anchorChanged = next.roomAnchor !== ed.server.roomAnchor;
    ed.server = next;
    if (layoutChanged && !state.dirty) loadLayout(ed, false);
    else if (sizeChanged || usersChanged || watermarkChanged || anchorChanged || ed.pendingRender) render(ed);
}

export function createEditor(options) {
    const ed = editorState(options);
    ed.change = (fn) => {
        fn();
        ed.state.dirty = true;
        render(ed);
    };
    ed.render = () => render(ed);
    ed.dragListeners = dragListeners(ed);
    ed.header = createHeader();
    ed.stage = createStage(ed);
    ed.toolbar = createToolbar(ed);
    ed.form = createForm(ed);
    const { header } = ed;
    ed.el = h(
        "section",
        { class: "card editor", dataset: { testid: "editor" } },
        h("header", {}, h("h2", {}, "Layout"), header.modeLabel, header.dirtyChip, header.sizeLabel),
        ed.toolbar.modeRow,
        ed.toolbar.presetRow,
        h("div", { class: "stage-wrap" }, ed.stage.el),
        ed.form.el,
        ed.toolbar.addRow,
        ed.status.el,
    );

    return {
        el: ed.el,
        update: (info) => update(ed, info),
        setSpeaker(userId) {
            if (ed.speaker === userId) return;
            ed.speaker = userId;
            for (const box of ed.stage.el.querySelectorAll(".region")) {
                if (box.dataset.userId === userId) box.dataset.speaking = "true";
                else delete box.dataset.speaking;
            }
        },
        setBackdrop(url) {
            ed.stage.backdrop.src = url;
        },
        backdrop: ed.stage.backdrop,
        isDirty: () => ed.state.dirty,
    };
}
