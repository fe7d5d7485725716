// console-editor.js — the layout editor: the canvas to scale, one box per region (data-testid="region",
// data-user-id), dragged and resized with the mouse (pointer events) or the keyboard, z-order, fit, alpha, border,
// grid and pip presets, the big/small swap, and Apply → PUT /v1/rooms/{room}/layout.
//
// The editor starts from the room's layout. In grid and pip mode the boxes are where the server puts everyone now;
// moving or resizing one turns the layout into a custom one with those rectangles (Apply to use it).

import { api, errorSentence, isAbort } from "./api.js";
import { clear, h, messageLine, setAttr, setText } from "./console-dom.js";
import {
    cloneRegions,
    drawOrder,
    effectiveAnchor,
    FITS,
    gridRegions,
    MAX_REGIONS,
    MIN_SIZE,
    normaliseZ,
    pipRegions,
    placements,
    region,
    regionForAPI,
    roundEven,
    visibleOnCanvas,
} from "./console-layout.js";

const SNAP_PX = 7; // screen pixels within which an edge snaps to the canvas's or another box's edge

function sameLayout(a, b) {
    return JSON.stringify(a) === JSON.stringify(b);
}

export function createEditor({ room, token, signal, onAuthError, onApplied }) {
    const state = {
        width: 1280,
        height: 720,
        mode: "grid",
        anchor: null, // the layout's anchor
        regions: [], // the custom regions (kept in every mode)
        selected: null, // index into regions (custom mode only)
        dirty: false,
    };
    let server = { layout: null, users: [], roomAnchor: null, pipAnchor: null, watermark: null };
    let speaker = null;
    let drag = null; // the gesture in progress
    let pendingRender = false;

    const status = messageLine();

    // ---------------------------------------------------------------------------------------- stage

    const backdrop = h("img", { class: "stage-backdrop", alt: "", draggable: false });
    const watermarkBox = h("div", { class: "stage-watermark hidden", title: "Watermark (set it under Pictures)" }, "watermark");
    const stage = h("div", { class: "stage", dataset: { testid: "stage" } }, backdrop, watermarkBox);
    const sizeLabel = h("span", { class: "muted small" }, "");
    const modeLabel = h("span", { class: "chip" }, "");
    const dirtyChip = h("span", { class: "chip warn hidden", dataset: { testid: "layout-dirty" } }, "not applied");
    const showProgramme = h("input", { type: "checkbox", checked: true });
    showProgramme.addEventListener("change", () => backdrop.classList.toggle("hidden", !showProgramme.checked));

    // ---------------------------------------------------------------------------------------- toolbar

    const modeSelect = h(
        "select",
        { dataset: { testid: "layout-mode" }, "aria-label": "Layout mode" },
        h("option", { value: "custom" }, "Custom: the boxes as drawn"),
        h("option", { value: "grid" }, "Grid: equal tiles in join order"),
        h("option", { value: "pip" }, "Pip: anchor big, guests small"),
    );
    modeSelect.addEventListener("change", () => {
        change(() => {
            state.mode = modeSelect.value;
            if (state.mode === "custom" && !state.regions.length) state.regions = currentBoxes();
            state.selected = null;
        });
    });
    const anchorSelect = h("select", { dataset: { testid: "layout-anchor" }, "aria-label": "Anchor" });
    anchorSelect.addEventListener("change", () => change(() => (state.anchor = anchorSelect.value || null)));
    const swapSelect = h("select", { dataset: { testid: "swap-guest" }, "aria-label": "Guest to swap with the anchor" });
    const swapButton = h("button", { type: "button", dataset: { testid: "swap" }, title: "Big/small: the guest takes the anchor's place and size, the anchor the guest's" }, "Swap with anchor");
    swapButton.addEventListener("click", swapWithAnchor);

    const gridPreset = h("button", { type: "button", dataset: { testid: "preset-grid" }, title: "Custom regions: equal tiles for everyone here" }, "Grid preset");
    gridPreset.addEventListener("click", () =>
        change(() => {
            state.regions = gridRegions(presentUsers(), state.width, state.height);
            state.mode = "custom";
            state.selected = null;
        }),
    );
    const pipPreset = h("button", { type: "button", dataset: { testid: "preset-pip" }, title: "Custom regions: the anchor full-canvas, guests small bottom-right" }, "PiP preset");
    pipPreset.addEventListener("click", () =>
        change(() => {
            const users = presentUsers();
            state.regions = pipRegions(currentAnchor(users), users, state.width, state.height);
            state.mode = "custom";
            state.selected = null;
        }),
    );
    const clearButton = h("button", { type: "button", class: "ghost", title: "Remove every region" }, "Clear");
    clearButton.addEventListener("click", () =>
        change(() => {
            state.regions = [];
            state.mode = "custom";
            state.selected = null;
        }),
    );

    const addUser = h("input", {
        type: "text",
        list: `region-users-${room}`,
        placeholder: "user id",
        pattern: "[A-Za-z0-9_.\\-]{1,64}",
        autocomplete: "off",
        spellcheck: false,
        "aria-label": "User id for a new region",
        dataset: { testid: "add-region-user" },
    });
    const userList = h("datalist", { id: `region-users-${room}` });
    const addButton = h("button", { type: "button", dataset: { testid: "add-region" } }, "Add region");
    addButton.addEventListener("click", () => {
        const userId = addUser.value.trim();
        if (!/^[A-Za-z0-9_.-]{1,64}$/.test(userId)) {
            status.error(errorSentence({ code: "invalid_user" }));
            return;
        }
        if (state.mode !== "custom" && !state.regions.length) state.regions = currentBoxes();
        if (state.regions.length >= MAX_REGIONS) {
            status.error(`A layout has at most ${MAX_REGIONS} regions.`);
            return;
        }
        change(() => {
            state.mode = "custom";
            const w = roundEven(state.width / 3);
            const hgt = roundEven(state.height / 3);
            const top = Math.max(-1, ...state.regions.map((r) => r.z || 0)) + 1;
            state.regions.push(region(userId, roundEven((state.width - w) / 2), roundEven((state.height - hgt) / 2), w, hgt, { z: top }));
            state.selected = state.regions.length - 1;
        });
        addUser.value = "";
    });

    const revertButton = h("button", { type: "button", class: "ghost", dataset: { testid: "layout-revert" } }, "Revert");
    revertButton.addEventListener("click", () => {
        state.dirty = false;
        loadFromServer(true);
        status.hide();
    });
    const applyButton = h("button", { type: "button", class: "primary", dataset: { testid: "apply-layout" } }, "Apply layout");
    applyButton.addEventListener("click", apply);

    // ---------------------------------------------------------------------------------------- inspector

    const num = (label, key, attrs) => {
        const input = h("input", { type: "number", step: 2, ...attrs, dataset: { field: key } });
        input.addEventListener("change", () => {
            const r = selectedRegion();
            if (!r || input.value === "") return;
            change(() => {
                r[key] = key === "z" ? Math.round(Number(input.value)) : roundEven(Number(input.value));
                if (key === "width" || key === "height") r[key] = Math.max(MIN_SIZE, r[key]);
            });
        });
        return { input, el: h("label", { class: "field narrow" }, h("span", {}, label), input) };
    };
    const fx = num("x", "x", { min: -16384, max: 16384 });
    const fy = num("y", "y", { min: -16384, max: 16384 });
    const fw = num("width", "width", { min: MIN_SIZE, max: 16384 });
    const fh = num("height", "height", { min: MIN_SIZE, max: 16384 });
    const fz = num("z", "z", { min: -16384, max: 16384, step: 1 });
    const fit = h("select", { dataset: { testid: "region-fit" } }, FITS.map((f) => h("option", { value: f }, f)));
    fit.addEventListener("change", () => {
        const r = selectedRegion();
        if (r) change(() => (r.fit = fit.value));
    });
    const alpha = h("input", { type: "range", min: 0, max: 1, step: 0.05, value: 1, dataset: { testid: "region-alpha" } });
    const alphaValue = h("span", { class: "mono small" }, "100 %");
    alpha.addEventListener("input", () => {
        const r = selectedRegion();
        if (r) change(() => (r.alpha = Number(alpha.value)));
    });
    const borderOn = h("input", { type: "checkbox", dataset: { testid: "region-border" } });
    const borderColor = h("input", { type: "color", value: "#ffffff" });
    const borderWidth = h("input", { type: "number", min: 2, max: 64, step: 2, value: 4, class: "tiny" });
    const syncBorder = () => {
        const r = selectedRegion();
        if (!r) return;
        change(() => {
            r.border = borderOn.checked
                ? { color: borderColor.value, width: Math.min(64, Math.max(2, roundEven(Number(borderWidth.value) || 4))) }
                : undefined;
        });
    };
    borderOn.addEventListener("change", syncBorder);
    borderColor.addEventListener("change", syncBorder);
    borderWidth.addEventListener("change", syncBorder);

    const zButton = (label, testid, fn, title) => {
        const b = h("button", { type: "button", class: "small", dataset: { testid }, title }, label);
        b.addEventListener("click", () => {
            if (selectedRegion()) change(fn);
        });
        return b;
    };
    const forward = zButton("Forward", "z-forward", () => moveZ(+1), "Bring forward (PageUp)");
    const backward = zButton("Backward", "z-backward", () => moveZ(-1), "Send backward (PageDown)");
    const front = zButton("To front", "z-front", () => moveZ(Infinity), "Bring to front");
    const back = zButton("To back", "z-back", () => moveZ(-Infinity), "Send to back");
    const removeRegion = h("button", { type: "button", class: "danger small", dataset: { testid: "remove-region" } }, "Remove");
    removeRegion.addEventListener("click", () => {
        if (state.selected === null) return;
        change(() => {
            state.regions.splice(state.selected, 1);
            state.selected = null;
        });
    });
    const makeBig = h("button", { type: "button", class: "small", title: "Swap places with the anchor (big/small)" }, "Swap with anchor");
    makeBig.addEventListener("click", () => {
        const r = selectedRegion();
        if (r) {
            swapSelect.value = r.userId;
            swapWithAnchor();
        }
    });
    const inspectorTitle = h("strong", {}, "");
    const inspector = h(
        "div",
        { class: "inspector hidden", dataset: { testid: "inspector" } },
        h("div", { class: "row" }, inspectorTitle, h("span", { class: "muted small" }, "Arrows move, Shift+arrows move 20 px, Alt+arrows resize, Delete removes")),
        h(
            "div",
            { class: "row end" },
            fx.el,
            fy.el,
            fw.el,
            fh.el,
            fz.el,
            h("label", { class: "field" }, h("span", {}, "fit"), fit),
            h("label", { class: "field" }, h("span", {}, "opacity"), h("div", { class: "row" }, alpha, alphaValue)),
            h("div", { class: "field" }, h("span", {}, "border"), h("div", { class: "row" }, borderOn, borderColor, borderWidth)),
        ),
        h("div", { class: "row" }, forward, backward, front, back, makeBig, removeRegion),
    );

    const el = h(
        "section",
        { class: "card editor", dataset: { testid: "editor" } },
        h("header", {}, h("h2", {}, "Layout"), modeLabel, dirtyChip, sizeLabel),
        h(
            "div",
            { class: "row end" },
            h("label", { class: "field" }, h("span", {}, "Mode"), modeSelect),
            h("label", { class: "field" }, h("span", {}, "Anchor (big)"), anchorSelect),
            h("div", { class: "field" }, h("span", {}, "Big/small"), h("div", { class: "row" }, swapSelect, swapButton)),
        ),
        h("div", { class: "row" }, gridPreset, pipPreset, clearButton, h("span", { class: "grow" }), h("label", { class: "field inline small" }, showProgramme, h("span", {}, "programme under the boxes"))),
        h("div", { class: "stage-wrap" }, stage),
        inspector,
        h("div", { class: "row" }, addUser, userList, addButton, h("span", { class: "grow" }), revertButton, applyButton),
        status.el,
    );

    // ---------------------------------------------------------------------------------------- model

    function presentUsers() {
        return server.users.slice();
    }

    function currentAnchor(users = presentUsers()) {
        return effectiveAnchor(state.anchor, server.roomAnchor, users);
    }

    /** What the boxes are now: the custom regions, or the grid/pip placements for the people present. */
    function currentBoxes() {
        if (state.mode === "custom") return state.regions;
        return placements({ mode: state.mode, anchor: state.anchor }, presentUsers(), state.width, state.height, server.roomAnchor);
    }

    function selectedRegion() {
        return state.mode === "custom" && state.selected !== null ? state.regions[state.selected] || null : null;
    }

    function change(fn) {
        fn();
        state.dirty = true;
        render();
    }

    function moveZ(step) {
        normaliseZ(state.regions);
        const r = selectedRegion();
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
        return r;
    }

    function swapWithAnchor() {
        const guest = swapSelect.value;
        const users = presentUsers();
        const anchor = currentAnchor(users);
        if (!guest || !anchor || guest === anchor) {
            status.error("Choose a guest other than the anchor to swap.");
            return;
        }
        if (state.mode === "pip" || state.mode === "grid") {
            if (state.mode === "pip") {
                change(() => (state.anchor = guest));
                return;
            }
            state.regions = currentBoxes();
            state.mode = "custom";
        }
        const a = state.regions.findIndex((r) => r.userId === anchor);
        const g = state.regions.findIndex((r) => r.userId === guest);
        if (a < 0 || g < 0) {
            status.error(`Both ${anchor} and ${guest} need a region to swap.`);
            render();
            return;
        }
        change(() => {
            const A = state.regions[a];
            const G = state.regions[g];
            for (const key of ["x", "y", "width", "height", "z", "fit"]) [A[key], G[key]] = [G[key], A[key]];
            state.anchor = guest;
            state.selected = null;
        });
    }

    function loadFromServer(force) {
        const layout = server.layout;
        if (!layout) return;
        if (state.dirty && !force) return;
        state.mode = layout.mode;
        state.anchor = layout.anchor || null;
        state.regions = cloneRegions(layout.regions);
        if (state.selected !== null && state.selected >= state.regions.length) state.selected = null;
        state.dirty = false;
        render();
    }

    // ---------------------------------------------------------------------------------------- view

    const boxes = new Map(); // element per box index, rebuilt by render()

    function placeBox(box, r) {
        box.style.left = `${(r.x / state.width) * 100}%`;
        box.style.top = `${(r.y / state.height) * 100}%`;
        box.style.width = `${(r.width / state.width) * 100}%`;
        box.style.height = `${(r.height / state.height) * 100}%`;
        setAttr(box, "data-x", r.x);
        setAttr(box, "data-y", r.y);
        setAttr(box, "data-width", r.width);
        setAttr(box, "data-height", r.height);
        const dims = box.querySelector(".region-dims");
        if (dims) setText(dims, `${r.width}×${r.height} at ${r.x},${r.y} · z${r.z || 0} · ${r.fit || "cover"}`);
    }

    function render() {
        if (drag) {
            pendingRender = true;
            return;
        }
        pendingRender = false;
        stage.style.aspectRatio = `${state.width} / ${state.height}`;
        stage.style.maxWidth = `calc(70vh * ${state.width / state.height})`;
        setText(sizeLabel, `${state.width}×${state.height}`);
        setText(modeLabel, state.mode);
        modeSelect.value = state.mode;
        dirtyChip.classList.toggle("hidden", !state.dirty);
        el.classList.toggle("dirty", state.dirty);

        // boxes
        for (const box of stage.querySelectorAll(".region")) box.remove();
        boxes.clear();
        const list = currentBoxes();
        const auto = state.mode !== "custom";
        const present = new Set(presentUsers());
        drawOrder(list).forEach((index, rank) => {
            const r = list[index];
            const box = h(
                "div",
                {
                    class: "region",
                    tabindex: 0,
                    role: "button",
                    "aria-label": `Region of ${r.userId}`,
                    dataset: { testid: "region", userId: r.userId, index: String(index) },
                },
                h("span", { class: "region-label" }, h("span", { class: "region-name" }, r.userId), h("span", { class: "region-dims" }, "")),
                ["nw", "ne", "sw", "se"].map((corner) => h("span", { class: `handle ${corner}`, dataset: { handle: corner } })),
            );
            box.style.zIndex = String(rank + 1);
            if (auto) box.dataset.auto = "true";
            if (!present.has(r.userId)) box.dataset.absent = "true";
            if (r.userId === speaker) box.dataset.speaking = "true";
            if (!auto && index === state.selected) box.dataset.selected = "true";
            if (r.alpha !== undefined && r.alpha < 1) box.classList.add("translucent");
            if (!visibleOnCanvas(r, state.width, state.height)) box.dataset.offCanvas = "true";
            placeBox(box, r);
            box.addEventListener("pointerdown", (event) => startDrag(event, index));
            box.addEventListener("keydown", (event) => keyOnBox(event, index));
            box.addEventListener("focus", () => {
                if (state.mode === "custom" && state.selected !== index) {
                    state.selected = index;
                    renderInspector();
                    for (const b of stage.querySelectorAll(".region")) {
                        if (b.dataset.index === String(index)) b.dataset.selected = "true";
                        else delete b.dataset.selected;
                    }
                }
            });
            boxes.set(index, box);
            stage.append(box);
        });

        // watermark outline
        const wm = server.watermark;
        watermarkBox.classList.toggle("hidden", !wm);
        if (wm) {
            watermarkBox.style.left = `${(wm.x / state.width) * 100}%`;
            watermarkBox.style.top = `${(wm.y / state.height) * 100}%`;
            watermarkBox.style.width = `${(wm.width / state.width) * 100}%`;
            watermarkBox.style.height = `${(wm.height / state.height) * 100}%`;
        }

        // anchor and swap choices
        const users = presentUsers();
        const regionUsers = state.regions.map((r) => r.userId);
        const everyone = [...new Set([...users, ...regionUsers])];
        const anchor = currentAnchor(users);
        fillSelect(anchorSelect, [["", `automatic${anchor ? ` (now ${anchor})` : ""}`], ...everyone.map((u) => [u, u])], state.anchor || "");
        const guests = everyone.filter((u) => u !== anchor);
        fillSelect(swapSelect, guests.length ? guests.map((u) => [u, u]) : [["", "no guests"]], swapSelect.value);
        swapSelect.disabled = !guests.length;
        swapButton.disabled = !guests.length;
        clear(userList);
        for (const u of users) if (!regionUsers.includes(u)) userList.append(h("option", { value: u }));
        renderInspector();
    }

    function fillSelect(select, entries, value) {
        const key = JSON.stringify(entries);
        if (select.dataset.entries !== key) {
            clear(select);
            for (const [v, label] of entries) select.append(h("option", { value: v }, label));
            select.dataset.entries = key;
        }
        if ([...select.options].some((o) => o.value === value)) select.value = value;
    }

    function renderInspector() {
        const r = selectedRegion();
        inspector.classList.toggle("hidden", !r);
        if (!r) return;
        setText(inspectorTitle, r.userId);
        const active = document.activeElement;
        for (const [field, key] of [[fx, "x"], [fy, "y"], [fw, "width"], [fh, "height"], [fz, "z"]]) {
            if (active !== field.input) field.input.value = String(r[key] ?? 0);
        }
        fit.value = r.fit || "cover";
        alpha.value = String(r.alpha ?? 1);
        setText(alphaValue, `${Math.round((r.alpha ?? 1) * 100)} %`);
        borderOn.checked = !!r.border;
        if (r.border) {
            borderColor.value = /^#?[0-9a-fA-F]{6}$/.test(r.border.color) ? `#${r.border.color.replace("#", "")}` : "#ffffff";
            if (active !== borderWidth) borderWidth.value = String(r.border.width);
        }
    }

    // ---------------------------------------------------------------------------------------- gestures

    /** In grid or pip mode, touching a box makes the layout custom, starting from where everyone is now. */
    function ensureCustom(index) {
        if (state.mode === "custom") return index;
        const list = currentBoxes();
        const userId = list[index] && list[index].userId;
        state.regions = cloneRegions(list);
        state.mode = "custom";
        state.dirty = true;
        status.info("The layout is now custom, starting from where everyone was. Apply to use it.");
        return state.regions.findIndex((r) => r.userId === userId);
    }

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

    function startDrag(event, index) {
        if (event.button !== 0) return;
        event.preventDefault();
        const handle = event.target.closest("[data-handle]");
        const wasAuto = state.mode !== "custom";
        index = ensureCustom(index);
        if (index < 0) return;
        state.selected = index;
        if (wasAuto) render();
        else {
            for (const b of stage.querySelectorAll(".region")) {
                if (b.dataset.index === String(index)) b.dataset.selected = "true";
                else delete b.dataset.selected;
            }
            renderInspector();
        }
        const box = [...stage.querySelectorAll(".region")].find((b) => b.dataset.index === String(index));
        if (!box) return;
        box.focus({ preventScroll: true });
        const rect = stage.getBoundingClientRect();
        const r = state.regions[index];
        drag = {
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
        box.setPointerCapture(event.pointerId);
        box.classList.add("dragging");
        box.addEventListener("pointermove", onDragMove);
        box.addEventListener("pointerup", endDrag);
        box.addEventListener("pointercancel", endDrag);
        box.addEventListener("lostpointercapture", endDrag);
    }

    function onDragMove(event) {
        if (!drag || event.pointerId !== drag.pointerId) return;
        const r = state.regions[drag.index];
        if (!r) return;
        const dx = (event.clientX - drag.startX) / drag.scale;
        const dy = (event.clientY - drag.startY) / drag.scale;
        if (!drag.moved && Math.abs(dx) * drag.scale < 2 && Math.abs(dy) * drag.scale < 2) return;
        drag.moved = true;
        const s = drag.start;
        const threshold = event.altKey ? 0 : SNAP_PX / drag.scale;
        const others = state.regions.filter((_, i) => i !== drag.index);
        const xs = [0, state.width, state.width / 2, ...others.flatMap((o) => [o.x, o.x + o.width])];
        const ys = [0, state.height, state.height / 2, ...others.flatMap((o) => [o.y, o.y + o.height])];
        if (!drag.handle) {
            let x = s.x + dx;
            let y = s.y + dy;
            // snap either edge (or the centre) of the box
            const sx = [snapValue(x, xs, threshold) - x, snapValue(x + s.width, xs, threshold) - (x + s.width), snapValue(x + s.width / 2, xs, threshold) - (x + s.width / 2)].filter((d) => d !== 0);
            const sy = [snapValue(y, ys, threshold) - y, snapValue(y + s.height, ys, threshold) - (y + s.height), snapValue(y + s.height / 2, ys, threshold) - (y + s.height / 2)].filter((d) => d !== 0);
            if (sx.length) x += sx.reduce((a, b) => (Math.abs(b) < Math.abs(a) ? b : a));
            if (sy.length) y += sy.reduce((a, b) => (Math.abs(b) < Math.abs(a) ? b : a));
            r.x = roundEven(Math.min(state.width - MIN_SIZE, Math.max(MIN_SIZE - s.width, x)));
            r.y = roundEven(Math.min(state.height - MIN_SIZE, Math.max(MIN_SIZE - s.height, y)));
        } else {
            let left = s.x;
            let top = s.y;
            let right = s.x + s.width;
            let bottom = s.y + s.height;
            if (drag.handle.includes("w")) left = snapValue(s.x + dx, xs, threshold);
            if (drag.handle.includes("e")) right = snapValue(s.x + s.width + dx, xs, threshold);
            if (drag.handle.includes("n")) top = snapValue(s.y + dy, ys, threshold);
            if (drag.handle.includes("s")) bottom = snapValue(s.y + s.height + dy, ys, threshold);
            if (event.shiftKey) {
                // keep the aspect ratio: follow the larger change
                const aspect = s.width / s.height;
                const w = right - left;
                const hh = bottom - top;
                if (Math.abs(w - s.width) / s.width > Math.abs(hh - s.height) / s.height) {
                    const nh = w / aspect;
                    if (drag.handle.includes("n")) top = bottom - nh;
                    else bottom = top + nh;
                } else {
                    const nw = hh * aspect;
                    if (drag.handle.includes("w")) left = right - nw;
                    else right = left + nw;
                }
            }
            if (right - left < MIN_SIZE) {
                if (drag.handle.includes("w")) left = right - MIN_SIZE;
                else right = left + MIN_SIZE;
            }
            if (bottom - top < MIN_SIZE) {
                if (drag.handle.includes("n")) top = bottom - MIN_SIZE;
                else bottom = top + MIN_SIZE;
            }
            r.x = roundEven(left);
            r.y = roundEven(top);
            r.width = Math.max(MIN_SIZE, roundEven(right - left));
            r.height = Math.max(MIN_SIZE, roundEven(bottom - top));
        }
        state.dirty = true;
        dirtyChip.classList.remove("hidden");
        placeBox(drag.box, r);
        renderInspector();
    }

    function endDrag(event) {
        if (!drag || (event && event.pointerId !== drag.pointerId)) return;
        const { box } = drag;
        box.removeEventListener("pointermove", onDragMove);
        box.removeEventListener("pointerup", endDrag);
        box.removeEventListener("pointercancel", endDrag);
        box.removeEventListener("lostpointercapture", endDrag);
        box.classList.remove("dragging");
        if (box.hasPointerCapture && box.hasPointerCapture(drag.pointerId)) box.releasePointerCapture(drag.pointerId);
        drag = null;
        render();
        const again = [...stage.querySelectorAll(".region")].find((b) => b.dataset.index === String(state.selected));
        if (again) again.focus({ preventScroll: true });
    }

    function keyOnBox(event, index) {
        const keys = ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Delete", "Backspace", "PageUp", "PageDown"];
        if (!keys.includes(event.key)) return;
        event.preventDefault();
        index = ensureCustom(index);
        if (index < 0) return;
        state.selected = index;
        const r = state.regions[index];
        const step = event.shiftKey ? 20 : 2;
        const dx = event.key === "ArrowLeft" ? -step : event.key === "ArrowRight" ? step : 0;
        const dy = event.key === "ArrowUp" ? -step : event.key === "ArrowDown" ? step : 0;
        change(() => {
            if (event.key === "Delete" || event.key === "Backspace") {
                state.regions.splice(index, 1);
                state.selected = null;
            } else if (event.key === "PageUp") moveZ(+1);
            else if (event.key === "PageDown") moveZ(-1);
            else if (event.altKey) {
                r.width = Math.max(MIN_SIZE, r.width + dx);
                r.height = Math.max(MIN_SIZE, r.height + dy);
            } else {
                r.x += dx;
                r.y += dy;
            }
        });
        const again = [...stage.querySelectorAll(".region")].find((b) => b.dataset.index === String(state.selected));
        if (again) again.focus({ preventScroll: true });
    }

    stage.addEventListener("pointerdown", (event) => {
        if (event.target === stage || event.target === backdrop) {
            state.selected = null;
            render();
        }
    });

    // ---------------------------------------------------------------------------------------- apply

    async function apply() {
        const body = { mode: state.mode, regions: state.regions.map(regionForAPI) };
        if (state.anchor) body.anchor = state.anchor;
        const hidden = body.regions.filter((r) => !visibleOnCanvas(r, state.width, state.height));
        if (hidden.length) {
            status.error(`The region of ${hidden[0].userId} is off the canvas: move it back before applying.`);
            return;
        }
        applyButton.disabled = true;
        try {
            const layout = await api("PUT", `/v1/rooms/${encodeURIComponent(room)}/layout`, { token, json: body, signal });
            server.layout = layout;
            state.dirty = false;
            loadFromServer(true);
            status.ok("Layout applied: it is on the programme from the next frame.");
            if (onApplied) onApplied(layout);
        } catch (error) {
            if (isAbort(error)) return;
            if (error.status === 401) {
                onAuthError(error);
                return;
            }
            status.error(errorSentence(error));
        } finally {
            applyButton.disabled = false;
        }
    }

    // ---------------------------------------------------------------------------------------- inputs

    return {
        el,
        /** The room as GET /v1/rooms/{room} gives it. */
        update(info) {
            const sizeChanged = info.canvas.width !== state.width || info.canvas.height !== state.height;
            state.width = info.canvas.width;
            state.height = info.canvas.height;
            const layoutChanged = !sameLayout(info.layout, server.layout);
            const users = info.participants.map((p) => p.userId);
            const usersChanged = users.join("\n") !== server.users.join("\n");
            const watermarkChanged = !sameLayout(info.watermark || null, server.watermark);
            const anchorChanged = (info.anchor || null) !== server.roomAnchor;
            server = {
                layout: info.layout,
                users,
                roomAnchor: info.anchor || null,
                pipAnchor: info.pipAnchor || null,
                watermark: info.watermark || null,
            };
            if (layoutChanged && !state.dirty) loadFromServer(false);
            else if (sizeChanged || usersChanged || watermarkChanged || anchorChanged || pendingRender) render();
        },
        setSpeaker(userId) {
            if (speaker === userId) return;
            speaker = userId;
            for (const box of stage.querySelectorAll(".region")) {
                if (box.dataset.userId === userId) box.dataset.speaking = "true";
                else delete box.dataset.speaking;
            }
        },
        setBackdrop(url) {
            backdrop.src = url;
        },
        backdrop,
        isDirty: () => state.dirty,
    };
}
