// console-editor-stage.js — the layout editor's canvas, drawn to scale: the programme underneath, one box per
// region (data-testid="region", data-user-id, its corner handles), the watermark's outline. Positions are
// percentages of the canvas, so the stage can take any width.

import { h, setAttr, setText } from "./console-dom.js";
import { drawOrder, labelText, visibleOnCanvas } from "./console-layout.js";
import { currentBoxes, presentUsers } from "./console-editor-model.js";

const CORNERS = ["nw", "ne", "sw", "se"];

export function createStage(ed) {
    const backdrop = h("img", { class: "stage-backdrop", alt: "", draggable: false });
    const watermarkBox = h(
        "div",
        { class: "stage-watermark hidden", title: "Watermark (set it under Pictures)" },
        "watermark",
    );
    const el = h("div", { class: "stage", dataset: { testid: "stage" } }, backdrop, watermarkBox);
    // A click on the canvas itself, not on a box: nothing selected.
    el.addEventListener("pointerdown", (event) => {
        if (event.target === el || event.target === backdrop) {
            ed.state.selected = null;
            ed.render();
        }
    });
    return { el, backdrop, watermarkBox };
}

/** Puts `box` where region `r` is, and writes its numbers in its label. */
export function placeBox(ed, box, r) {
    const { width, height } = ed.state;
    box.style.left = `${(r.x / width) * 100}%`;
    box.style.top = `${(r.y / height) * 100}%`;
    box.style.width = `${(r.width / width) * 100}%`;
    box.style.height = `${(r.height / height) * 100}%`;
    setAttr(box, "data-x", r.x);
    setAttr(box, "data-y", r.y);
    setAttr(box, "data-width", r.width);
    setAttr(box, "data-height", r.height);
    const dims = box.querySelector(".region-dims");
    if (dims) setText(dims, `${r.width}×${r.height} at ${r.x},${r.y} · z${r.z || 0} · ${r.fit || "cover"}`);
}

/** The box of region `index`, if drawn. */
export function boxAt(ed, index) {
    return [...ed.stage.el.querySelectorAll(".region")].find((b) => b.dataset.index === String(index));
}

/** Marks box `index` as the selected one (no redraw). */
export function markSelected(ed, index) {
    for (const b of ed.stage.el.querySelectorAll(".region")) {
        if (b.dataset.index === String(index)) b.dataset.selected = "true";
        else delete b.dataset.selected;
    }
}

/** The stage takes the canvas's shape, never taller than most of the window. */
export function fitStage(ed) {
    const { width, height } = ed.state;
    ed.stage.el.style.aspectRatio = `${width} / ${height}`;
    ed.stage.el.style.maxWidth = `calc(70vh * ${width / height})`;
}

/** on: { pointerdown(event, index), keydown(event, index) } for every box. */
function regionBox(ed, r, index, on) {
    const box = h(
        "div",
        {
            class: "region",
            tabindex: 0,
            role: "button",
            "aria-label": `Region of ${r.userId}`,
            dataset: { testid: "region", userId: r.userId, index: String(index) },
        },
        h(
            "span",
            { class: "region-label" },
            h("span", { class: "region-name" }, r.userId),
            h("span", { class: "region-dims" }, ""),
        ),
        h("span", { class: "region-caption", dataset: { testid: "region-caption" } }, ""),
        CORNERS.map((corner) => h("span", { class: `handle ${corner}`, dataset: { handle: corner } })),
    );
    box.addEventListener("pointerdown", (event) => on.pointerdown(event, index));
    box.addEventListener("keydown", (event) => on.keydown(event, index));
    box.addEventListener("focus", () => {
        const { state } = ed;
        if (state.mode === "custom" && state.selected !== index) {
            state.selected = index;
            ed.form.render();
            markSelected(ed, index);
        }
    });
    return box;
}

/** Draws every box anew, bottom first; in grid or pip mode the boxes are where the server puts everyone now. */
export function renderBoxes(ed, on) {
    const { state } = ed;
    for (const box of ed.stage.el.querySelectorAll(".region")) box.remove();
    const list = currentBoxes(ed);
    const auto = state.mode !== "custom";
    const present = new Set(presentUsers(ed));
    drawOrder(list).forEach((index, rank) => {
        const r = list[index];
        const box = regionBox(ed, r, index, on);
        box.style.zIndex = String(rank + 1);
        if (auto) box.dataset.auto = "true";
        if (!present.has(r.userId)) box.dataset.absent = "true";
        if (r.userId === ed.speaker) box.dataset.speaking = "true";
        if (!auto && index === state.selected) box.dataset.selected = "true";
        if (r.alpha !== undefined && r.alpha < 1) box.classList.add("translucent");
        if (!visibleOnCanvas(r, state.width, state.height)) box.dataset.offCanvas = "true";
        // The name label as the programme will show it (the region's, else the layout's).
        const label = r.label || state.label;
        const caption = box.querySelector(".region-caption");
        const text = labelText(label, r.userId, ed.server.names);
        caption.hidden = !text;
        caption.textContent = text || "";
        caption.dataset.position = (typeof label === "object" && label?.position) || "bottom-left";
        placeBox(ed, box, r);
        ed.stage.el.append(box);
    });
}

/** The watermark's outline, where the room has one. */
export function renderWatermark(ed) {
    const wm = ed.server.watermark;
    const { watermarkBox } = ed.stage;
    const { width, height } = ed.state;
    watermarkBox.classList.toggle("hidden", !wm);
    if (wm) {
        watermarkBox.style.left = `${(wm.x / width) * 100}%`;
        watermarkBox.style.top = `${(wm.y / height) * 100}%`;
        watermarkBox.style.width = `${(wm.width / width) * 100}%`;
        watermarkBox.style.height = `${(wm.height / height) * 100}%`;
    }
}
