// console-editor-form.js — the layout editor's region form (the inspector), shown while a custom region is selected:
// x, y, width, height, z, fit, opacity, border, z-order buttons, the big/small swap and Remove.

import { h, setText } from "./console-dom.js";
import { FITS, LABEL_POSITIONS, MIN_SIZE, roundEven } from "./console-layout.js";
import { moveZ, selectedRegion } from "./console-editor-model.js";

const GEOMETRY = ["x", "y", "width", "height", "z"];

/** A number input for the selected region's `key`: even canvas pixels (z: any integer). */
function numberField(ed, label, key, attrs) {
    const input = h("input", { type: "number", step: 2, ...attrs, dataset: { field: key } });
    input.addEventListener("change", () => {
        const r = selectedRegion(ed);
        if (!r || input.value === "") return;
        ed.change(() => {
            r[key] = key === "z" ? Math.round(Number(input.value)) : roundEven(Number(input.value));
            if (key === "width" || key === "height") r[key] = Math.max(MIN_SIZE, r[key]);
        });
    });
    return { input, el: h("label", { class: "field narrow" }, h("span", {}, label), input) };
}

function geometryFields(ed) {
    return {
        x: numberField(ed, "x", "x", { min: -16384, max: 16384 }),
        y: numberField(ed, "y", "y", { min: -16384, max: 16384 }),
        width: numberField(ed, "width", "width", { min: MIN_SIZE, max: 16384 }),
        height: numberField(ed, "height", "height", { min: MIN_SIZE, max: 16384 }),
        z: numberField(ed, "z", "z", { min: -16384, max: 16384, step: 1 }),
    };
}

function lookControls(ed) {
    const fit = h("select", { dataset: { testid: "region-fit" } }, FITS.map((f) => h("option", { value: f }, f)));
    fit.addEventListener("change", () => {
        const r = selectedRegion(ed);
        if (r) ed.change(() => (r.fit = fit.value));
    });
    const alpha = h("input", {
        type: "range",
        min: 0,
        max: 1,
        step: 0.05,
        value: 1,
        dataset: { testid: "region-alpha" },
    });
    const alphaValue = h("span", { class: "mono small" }, "100 %");
    alpha.addEventListener("input", () => {
        const r = selectedRegion(ed);
        if (r) ed.change(() => (r.alpha = Number(alpha.value)));
    });
    const borderOn = h("input", { type: "checkbox", dataset: { testid: "region-border" } });
    const borderColor = h("input", { type: "color", value: "#ffffff" });
    const borderWidth = h("input", { type: "number", min: 2, max: 64, step: 2, value: 4, class: "tiny" });
    const syncBorder = () => {
        const r = selectedRegion(ed);
        if (!r) return;
        ed.change(() => {
            const width = Math.min(64, Math.max(2, roundEven(Number(borderWidth.value) || 4)));
            r.border = borderOn.checked ? { color: borderColor.value, width } : undefined;
        });
    };
    borderOn.addEventListener("change", syncBorder);
    borderColor.addEventListener("change", syncBorder);
    borderWidth.addEventListener("change", syncBorder);
    return { fit, alpha, alphaValue, borderOn, borderColor, borderWidth };
}

/** The region's name label: the layout's default, none, the participant's name, or a text of its own; and where. */
function labelControls(ed) {
    const kind = h(
        "select",
        { dataset: { testid: "region-label" } },
        h("option", { value: "" }, "layout's"),
        h("option", { value: "none" }, "none"),
        h("option", { value: "auto" }, "their name"),
        h("option", { value: "text" }, "this text"),
    );
    const text = h("input", {
        type: "text",
        maxlength: 64,
        placeholder: "Name on the tile",
        dataset: { testid: "region-label-text" },
    });
    const position = h(
        "select",
        { dataset: { testid: "region-label-position" } },
        LABEL_POSITIONS.map((p) => h("option", { value: p }, p)),
    );
    const size = h("input", { type: "number", min: 8, max: 128, step: 1, value: 24, class: "tiny" });
    const color = h("input", { type: "color", value: "#ffffff" });
    const sync = () => {
        const r = selectedRegion(ed);
        if (!r) return;
        ed.change(() => {
            if (kind.value === "" || kind.value === "none") {
                r.label = kind.value || undefined;
                return;
            }
            const own = typeof r.label === "object" ? r.label : {};
            r.label = {
                ...own,
                text: kind.value === "text" ? text.value.trim() || undefined : undefined,
                position: position.value,
                size: Math.min(128, Math.max(8, Math.round(Number(size.value) || 24))),
                color: color.value,
            };
        });
    };
    for (const control of [kind, position, size, color]) control.addEventListener("change", sync);
    text.addEventListener("change", sync);
    return { kind, text, position, size, color };
}

function orderButtons(ed) {
    const zButton = (label, testid, step, title) => {
        const b = h("button", { type: "button", class: "small", dataset: { testid }, title }, label);
        b.addEventListener("click", () => {
            if (selectedRegion(ed)) ed.change(() => moveZ(ed, step));
        });
        return b;
    };
    const remove = h(
        "button",
        { type: "button", class: "danger small", dataset: { testid: "remove-region" } },
        "Remove",
    );
    remove.addEventListener("click", () => {
        const { state } = ed;
        if (state.selected === null) return;
        ed.change(() => {
            state.regions.splice(state.selected, 1);
            state.selected = null;
        });
    });
    const makeBig = h(
        "button",
        { type: "button", class: "small", title: "Swap places with the anchor (big/small)" },
        "Swap with anchor",
    );
    makeBig.addEventListener("click", () => {
        const r = selectedRegion(ed);
        if (r) ed.toolbar.swapWith(r.userId);
    });
    return [
        zButton("Forward", "z-forward", +1, "Bring forward (PageUp)"),
        zButton("Backward", "z-backward", -1, "Send backward (PageDown)"),
        zButton("To front", "z-front", Infinity, "Bring to front"),
        zButton("To back", "z-back", -Infinity, "Send to back"),
        makeBig,
        remove,
    ];
}

/** Fills the form from the selected region; leaves alone a number field being typed in. */
function render(ed, form) {
    const r = selectedRegion(ed);
    form.el.classList.toggle("hidden", !r);
    if (!r) return;
    const { fields, look } = form;
    setText(form.title, r.userId);
    const active = document.activeElement;
    for (const key of GEOMETRY) {
        if (active !== fields[key].input) fields[key].input.value = String(r[key] ?? 0);
    }
    look.fit.value = r.fit || "cover";
    look.alpha.value = String(r.alpha ?? 1);
    setText(look.alphaValue, `${Math.round((r.alpha ?? 1) * 100)} %`);
    look.borderOn.checked = !!r.border;
    if (r.border) {
        const hex = /^#?[0-9a-fA-F]{6}$/.test(r.border.color);
        look.borderColor.value = hex ? `#${r.border.color.replace("#", "")}` : "#ffffff";
        if (active !== look.borderWidth) look.borderWidth.value = String(r.border.width);
    }
    const { label } = form;
    const own = r.label && typeof r.label === "object" ? r.label : null;
    // "this text" chosen but not typed yet stays chosen, for the region it was chosen on.
    const typing = label.kind.value === "text" && form.shown === r;
    form.shown = r;
    label.kind.value = own ? (own.text || typing ? "text" : "auto") : r.label || "";
    if (active !== label.text) label.text.value = own?.text || "";
    label.position.value = own?.position || "bottom-left";
    if (active !== label.size) label.size.value = String(own?.size || 24);
    label.color.value = /^#[0-9a-fA-F]{6}/.test(own?.color || "") ? own.color.slice(0, 7) : "#ffffff";
    for (const control of [label.text, label.position, label.size, label.color]) control.disabled = !own;
}

export function createForm(ed) {
    const fields = geometryFields(ed);
    const look = lookControls(ed);
    const label = labelControls(ed);
    const title = h("strong", {}, "");
    const hint = "Arrows move, Shift+arrows move 20 px, Alt+arrows resize, Delete removes";
    const el = h(
        "div",
        { class: "inspector hidden", dataset: { testid: "inspector" } },
        h("div", { class: "row" }, title, h("span", { class: "muted small" }, hint)),
        h(
            "div",
            { class: "row end" },
            GEOMETRY.map((key) => fields[key].el),
            h("label", { class: "field" }, h("span", {}, "fit"), look.fit),
            h(
                "label",
                { class: "field" },
                h("span", {}, "opacity"),
                h("div", { class: "row" }, look.alpha, look.alphaValue),
            ),
            h(
                "div",
                { class: "field" },
                h("span", {}, "border"),
                h("div", { class: "row" }, look.borderOn, look.borderColor, look.borderWidth),
            ),
        ),
        h(
            "div",
            { class: "row end" },
            h("label", { class: "field" }, h("span", {}, "label"), label.kind),
            h("label", { class: "field" }, h("span", {}, "text"), label.text),
            h("label", { class: "field" }, h("span", {}, "where"), label.position),
            h("label", { class: "field narrow" }, h("span", {}, "size"), label.size),
            h("label", { class: "field" }, h("span", {}, "colour"), label.color),
        ),
        h("div", { class: "row" }, orderButtons(ed)),
    );
    const form = { el, title, fields, look, label };
    return { el, render: () => render(ed, form) };
}
