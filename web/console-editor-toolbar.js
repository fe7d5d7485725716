// console-editor-toolbar.js — the layout editor's controls around the canvas: mode, anchor and the big/small swap;
// the grid and pip presets and Clear; showing the programme under the boxes; adding a region; Revert and Apply.

import { errorSentence } from "./api.js";
import { clear, h } from "./console-dom.js";
import { gridRegions, MAX_REGIONS, pipRegions } from "./console-layout.js";
import { addRegion, currentAnchor, currentBoxes, presentUsers, swapWithAnchor } from "./console-editor-model.js";
import { applyLayout, loadLayout } from "./console-editor-serialise.js";

const USER_RE = /^[A-Za-z0-9_.-]{1,64}$/;

function field(label, control) {
    return h("label", { class: "field" }, h("span", {}, label), control);
}

function modeControls(ed) {
    const { state } = ed;
    const modeSelect = h(
        "select",
        { dataset: { testid: "layout-mode" }, "aria-label": "Layout mode" },
        h("option", { value: "custom" }, "Custom: the boxes as drawn"),
        h("option", { value: "grid" }, "Grid: equal tiles in join order"),
        h("option", { value: "pip" }, "Pip: anchor big, guests small"),
    );
    modeSelect.addEventListener("change", () => {
        ed.change(() => {
            state.mode = modeSelect.value;
            if (state.mode === "custom" && !state.regions.length) state.regions = currentBoxes(ed);
            state.selected = null;
        });
    });
    const anchorSelect = h("select", { dataset: { testid: "layout-anchor" }, "aria-label": "Anchor" });
    anchorSelect.addEventListener("change", () => ed.change(() => (state.anchor = anchorSelect.value || null)));
    const swapSelect = h("select", {
        dataset: { testid: "swap-guest" },
        "aria-label": "Guest to swap with the anchor",
    });
    const swapButton = h(
        "button",
        {
            type: "button",
            dataset: { testid: "swap" },
            title: "Big/small: the guest takes the anchor's place and size, the anchor the guest's",
        },
        "Swap with anchor",
    );
    swapButton.addEventListener("click", () => swapWithAnchor(ed, swapSelect.value));
    // The layout's label: every tile's unless its region says otherwise (grid and pip tiles have no region).
    const namesSelect = h(
        "select",
        { dataset: { testid: "layout-label" }, "aria-label": "Names on tiles" },
        h("option", { value: "" }, "no names"),
        h("option", { value: "auto" }, "names, bottom left"),
        h("option", { value: "top-left" }, "names, top left"),
    );
    namesSelect.addEventListener("change", () =>
        ed.change(() => {
            const v = namesSelect.value;
            state.label = v === "" ? null : v === "auto" ? "auto" : { position: v };
        }),
    );
    const row = h(
        "div",
        { class: "row end" },
        field("Mode", modeSelect),
        field("Names on tiles", namesSelect),
        field("Anchor (big)", anchorSelect),
        h("div", { class: "field" }, h("span", {}, "Big/small"), h("div", { class: "row" }, swapSelect, swapButton)),
    );
    return { row, modeSelect, namesSelect, anchorSelect, swapSelect, swapButton };
}

function presetButton(ed, label, attrs, regions) {
    const button = h("button", { type: "button", ...attrs }, label);
    button.addEventListener("click", () =>
        ed.change(() => {
            ed.state.regions = regions();
            ed.state.mode = "custom";
            ed.state.selected = null;
        }),
    );
    return button;
}

function presetRow(ed) {
    const { state } = ed;
    const gridPreset = presetButton(
        ed,
        "Grid preset",
        { dataset: { testid: "preset-grid" }, title: "Custom regions: equal tiles for everyone here" },
        () => gridRegions(presentUsers(ed), state.width, state.height),
    );
    const pipPreset = presetButton(
        ed,
        "PiP preset",
        {
            dataset: { testid: "preset-pip" },
            title: "Custom regions: the anchor full-canvas, guests small bottom-right",
        },
        () => {
            const users = presentUsers(ed);
            return pipRegions(currentAnchor(ed, users), users, state.width, state.height);
        },
    );
    const clearButton = presetButton(ed, "Clear", { class: "ghost", title: "Remove every region" }, () => []);
    const showProgramme = h("input", { type: "checkbox", checked: true });
    showProgramme.addEventListener("change", () =>
        ed.stage.backdrop.classList.toggle("hidden", !showProgramme.checked),
    );
    return h(
        "div",
        { class: "row" },
        gridPreset,
        pipPreset,
        clearButton,
        h("span", { class: "grow" }),
        h("label", { class: "field inline small" }, showProgramme, h("span", {}, "programme under the boxes")),
    );
}

function addControls(ed) {
    const { state } = ed;
    const addUser = h("input", {
        type: "text",
        list: `region-users-${ed.room}`,
        placeholder: "user id",
        pattern: "[A-Za-z0-9_.\\-]{1,64}",
        autocomplete: "off",
        spellcheck: false,
        "aria-label": "User id for a new region",
        dataset: { testid: "add-region-user" },
    });
    const userList = h("datalist", { id: `region-users-${ed.room}` });
    const addButton = h("button", { type: "button", dataset: { testid: "add-region" } }, "Add region");
    addButton.addEventListener("click", () => {
        const userId = addUser.value.trim();
        if (!USER_RE.test(userId)) {
            ed.status.error(errorSentence({ code: "invalid_user" }));
            return;
        }
        if (state.mode !== "custom" && !state.regions.length) state.regions = currentBoxes(ed);
        if (state.regions.length >= MAX_REGIONS) {
            ed.status.error(`A layout has at most ${MAX_REGIONS} regions.`);
            return;
        }
        ed.change(() => addRegion(ed, userId));
        addUser.value = "";
    });
    return { addUser, userList, addButton };
}

function applyControls(ed) {
    const revertButton = h(
        "button",
        { type: "button", class: "ghost", dataset: { testid: "layout-revert" } },
        "Revert",
    );
    revertButton.addEventListener("click", () => {
        ed.state.dirty = false;
        loadLayout(ed, true);
        ed.status.hide();
    });
    const applyButton = h(
        "button",
        { type: "button", class: "primary", dataset: { testid: "apply-layout" } },
        "Apply layout",
    );
    applyButton.addEventListener("click", () => applyLayout(ed, applyButton));
    return { revertButton, applyButton };
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

/** The anchor and swap choices and the user ids offered for a new region, as the room and the regions are now. */
function render(ed, parts) {
    const { state } = ed;
    const { anchorSelect, namesSelect, swapSelect, swapButton, userList } = parts;
    const label = state.label;
    namesSelect.value = !label || label === "none" ? "" : label.position === "top-left" ? "top-left" : "auto";
    const users = presentUsers(ed);
    const regionUsers = state.regions.map((r) => r.userId);
    const everyone = [...new Set([...users, ...regionUsers])];
    const anchor = currentAnchor(ed, users);
    const automatic = `automatic${anchor ? ` (now ${anchor})` : ""}`;
    fillSelect(anchorSelect, [["", automatic], ...everyone.map((u) => [u, u])], state.anchor || "");
    const guests = everyone.filter((u) => u !== anchor);
    fillSelect(swapSelect, guests.length ? guests.map((u) => [u, u]) : [["", "no guests"]], swapSelect.value);
    swapSelect.disabled = !guests.length;
    swapButton.disabled = !guests.length;
    clear(userList);
    for (const u of users) if (!regionUsers.includes(u)) userList.append(h("option", { value: u }));
}

export function createToolbar(ed) {
    const mode = modeControls(ed);
    const presets = presetRow(ed);
    const add = addControls(ed);
    const apply = applyControls(ed);
    const parts = { ...mode, ...add };
    return {
        modeSelect: mode.modeSelect,
        modeRow: mode.row,
        presetRow: presets,
        addRow: h(
            "div",
            { class: "row" },
            add.addUser,
            add.userList,
            add.addButton,
            h("span", { class: "grow" }),
            apply.revertButton,
            apply.applyButton,
        ),
        render: () => render(ed, parts),
        /** Selects `userId` as the guest to swap, and swaps it with the anchor. */
        swapWith(userId) {
            mode.swapSelect.value = userId;
            swapWithAnchor(ed, mode.swapSelect.value);
        },
    };
}
