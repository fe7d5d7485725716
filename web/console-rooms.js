// console-rooms.js — the rooms list: every room the token covers (polled every 2 s), create and close.

import { api, errorSentence, isAbort } from "./api.js";
import { clear, confirmButton, h, messageLine, setAttr, setText } from "./console-dom.js";

const POLL_MS = 2000;

export const VIDEO_PRESETS = {
    low1: "272×480 · 24 fps · 128 kb/s",
    low2: "272×480 · 24 fps · 256 kb/s",
    low3: "272×480 · 24 fps · 512 kb/s",
    medium1: "368×640 · 24 fps · 512 kb/s",
    medium2: "368×640 · 24 fps · 768 kb/s",
    medium3: "368×640 · 24 fps · 1024 kb/s",
    high1: "720×1280 · 24 fps · 1024 kb/s",
    high2: "720×1280 · 24 fps · 1280 kb/s",
    high3: "720×1280 · 24 fps · 1536 kb/s",
};
const AUDIO_PRESETS = { high1: "AAC 64 kb/s", high2: "AAC 96 kb/s", high3: "AAC 128 kb/s" };

function isAuthError(error) {
    return error && (error.status === 401 || (error.status === 403 && error.code === "forbidden"));
}

export function mountRooms(container, ctx) {
    const controller = new AbortController();
    let timer = null;
    let destroyed = false;
    const rows = new Map(); // name → { tr, update(room) }

    // ---------------------------------------------------------------------------------------- list

    const status = messageLine();
    const count = h("span", { class: "muted small" }, "");
    const tbody = h("tbody", {});
    const empty = h("p", { class: "muted hidden", dataset: { testid: "no-rooms" } }, "No rooms are open. Create one below.");
    const table = h(
        "table",
        { class: "rooms" },
        h(
            "thead",
            {},
            h(
                "tr",
                {},
                h("th", {}, "Room"),
                h("th", {}, "People"),
                h("th", { class: "hide-narrow" }, "Picture"),
                h("th", {}, "Outputs"),
                h("th", { class: "actions" }, h("span", { class: "visually-hidden" }, "Actions")),
            ),
        ),
        tbody,
    );
    const listCard = h(
        "section",
        { class: "card" },
        h("header", {}, h("h2", {}, "Rooms"), count),
        status.el,
        h("div", { class: "table-scroll" }, table),
        empty,
    );

    function makeRow(name) {
        const people = h("td", { class: "people" });
        const picture = h("td", { class: "hide-narrow muted small" });
        const outputs = h("td", { class: "output-states" });
        const open = ctx.link(name, name);
        open.classList.add("room-name");
        const close = confirmButton("Close", "Really close?", () => closeRoom(name), {
            class: "danger small",
            dataset: { testid: "close-room" },
            title: `Close ${name}: everyone leaves, outputs stop`,
        });
        const tr = h(
            "tr",
            { dataset: { testid: "room", room: name }, class: "room-row" },
            h("td", {}, open),
            people,
            picture,
            outputs,
            h("td", { class: "actions" }, close),
        );
        tr.addEventListener("click", (event) => {
            if (event.target.closest("a, button, input, select")) return;
            ctx.navigate(name);
        });
        function update(room) {
            const n = room.participants.length;
            clear(people);
            people.append(
                h("span", { class: "count" }, `${n} / ${room.maxParticipants}`),
                n
                    ? h(
                          "span",
                          { class: "muted small names" },
                          room.participants
                              .slice(0, 4)
                              .map((p) => p.userId)
                              .join(", ") + (n > 4 ? ` +${n - 4}` : ""),
                      )
                    : null,
            );
            setText(
                picture,
                room.audioOnly ? "audio only" : `${room.canvas.width}×${room.canvas.height} · ${room.canvas.fps} fps · ${room.layout.mode}`,
            );
            clear(outputs);
            const chips = h("div", { class: "chips" });
            outputs.append(chips);
            if (!room.outputs.length) chips.append(h("span", { class: "muted small" }, "none"));
            for (const o of room.outputs) {
                chips.append(
                    h("span", { class: "chip", dataset: { state: o.state }, title: `${o.id}: ${o.url}` }, `${o.id} ${o.state}`),
                );
            }
            setAttr(tr, "data-participants", n);
        }
        return { tr, update };
    }

    function render(rooms) {
        setText(count, `${rooms.length} open`);
        empty.classList.toggle("hidden", rooms.length > 0);
        table.classList.toggle("hidden", rooms.length === 0);
        const seen = new Set();
        rooms.forEach((room, i) => {
            seen.add(room.name);
            let row = rows.get(room.name);
            if (!row) {
                row = makeRow(room.name);
                rows.set(room.name, row);
            }
            row.update(room);
            if (tbody.children[i] !== row.tr) tbody.insertBefore(row.tr, tbody.children[i] || null);
        });
        for (const [name, row] of rows) {
            if (!seen.has(name)) {
                row.tr.remove();
                rows.delete(name);
            }
        }
    }

    async function refresh() {
        clearTimeout(timer);
        try {
            const answer = await api("GET", "/v1/rooms", { token: ctx.token, signal: controller.signal });
            if (destroyed) return;
            render(answer.rooms || []);
            if (status.el.dataset.source === "poll") {
                status.hide();
                delete status.el.dataset.source;
            }
        } catch (error) {
            if (isAbort(error) || destroyed) return;
            if (isAuthError(error)) {
                ctx.authFailed(error);
                return;
            }
            status.error(errorSentence(error));
            status.el.dataset.source = "poll";
        }
        if (!destroyed) timer = setTimeout(refresh, POLL_MS);
    }

    async function closeRoom(name) {
        try {
            await api("DELETE", `/v1/rooms/${encodeURIComponent(name)}`, { token: ctx.token, signal: controller.signal });
            status.ok(`Room ${name} closed.`);
        } catch (error) {
            if (isAbort(error)) return;
            if (isAuthError(error) && error.status === 401) return ctx.authFailed(error);
            status.error(errorSentence(error));
        }
        refresh();
    }

    // ---------------------------------------------------------------------------------------- create

    const createStatus = messageLine();
    const name = h("input", {
        name: "name",
        pattern: "[A-Za-z0-9_.\\-]{1,64}",
        maxLength: 64,
        placeholder: "show",
        autocomplete: "off",
        spellcheck: false,
        dataset: { testid: "create-name" },
    });
    const preset = h(
        "select",
        { name: "preset", dataset: { testid: "create-preset" } },
        h("option", { value: "" }, "Custom (size below)"),
        Object.entries(VIDEO_PRESETS).map(([key, text]) => h("option", { value: key }, `${key} — ${text}`)),
    );
    const audioPreset = h(
        "select",
        { name: "audioPreset" },
        h("option", { value: "" }, "Default (AAC 128 kb/s)"),
        Object.entries(AUDIO_PRESETS).map(([key, text]) => h("option", { value: key }, `${key} — ${text}`)),
    );
    const width = h("input", { type: "number", name: "width", min: 16, max: 3840, step: 2, placeholder: "1280", dataset: { testid: "create-width" } });
    const height = h("input", { type: "number", name: "height", min: 16, max: 2160, step: 2, placeholder: "720", dataset: { testid: "create-height" } });
    const fps = h("input", { type: "number", name: "fps", min: 1, max: 60, step: 1, placeholder: "30", dataset: { testid: "create-fps" } });
    const background = h("input", { type: "color", name: "background", value: "#000000" });
    const maxParticipants = h("input", { type: "number", name: "maxParticipants", min: 1, max: 64, placeholder: "16" });
    const audioOnly = h("input", { type: "checkbox", name: "audioOnly", dataset: { testid: "create-audio-only" } });
    const outputURL = h("input", {
        type: "text",
        name: "output",
        placeholder: "rtmp://live.example.com/app/key (optional)",
        autocomplete: "off",
        spellcheck: false,
    });
    const videoFields = h(
        "div",
        { class: "row end" },
        h("label", { class: "field" }, h("span", {}, "Quality preset"), preset),
        h("label", { class: "field narrow" }, h("span", {}, "Width"), width),
        h("label", { class: "field narrow" }, h("span", {}, "Height"), height),
        h("label", { class: "field narrow" }, h("span", {}, "fps"), fps),
        h("label", { class: "field" }, h("span", {}, "Background"), background),
    );
    function syncPreset() {
        const text = VIDEO_PRESETS[preset.value];
        const m = text && text.match(/^(\d+)×(\d+) · (\d+) fps/);
        width.placeholder = m ? m[1] : "1280";
        height.placeholder = m ? m[2] : "720";
        fps.placeholder = m ? m[3] : "30";
        videoFields.classList.toggle("disabled", audioOnly.checked);
        for (const el of [preset, width, height, fps, background]) el.disabled = audioOnly.checked;
    }
    preset.addEventListener("change", syncPreset);
    audioOnly.addEventListener("change", syncPreset);
    const submit = h("button", { type: "submit", class: "primary", dataset: { testid: "create-room" } }, "Create room");
    const form = h(
        "form",
        { class: "stack", dataset: { testid: "create-form" } },
        h(
            "div",
            { class: "row end" },
            h("label", { class: "field grow" }, h("span", {}, "Name"), name),
            h("label", { class: "field narrow" }, h("span", {}, "Max people"), maxParticipants),
            h("label", { class: "field inline" }, audioOnly, h("span", {}, "Audio only")),
        ),
        videoFields,
        h(
            "div",
            { class: "row end" },
            h("label", { class: "field" }, h("span", {}, "Audio"), audioPreset),
            h("label", { class: "field grow" }, h("span", {}, "Output"), outputURL),
        ),
        h("div", { class: "row" }, submit, createStatus.el),
    );
    form.addEventListener("submit", async (event) => {
        event.preventDefault();
        const body = { name: name.value.trim() };
        if (!/^[A-Za-z0-9_.-]{1,64}$/.test(body.name)) {
            createStatus.error(errorSentence({ code: "invalid_room" }));
            return;
        }
        const num = (input) => (input.value.trim() === "" ? undefined : Number(input.value));
        if (maxParticipants.value) body.maxParticipants = num(maxParticipants);
        if (audioOnly.checked) {
            body.audioOnly = true;
        } else {
            const canvas = {};
            if (num(width) !== undefined) canvas.width = num(width);
            if (num(height) !== undefined) canvas.height = num(height);
            if (num(fps) !== undefined) canvas.fps = num(fps);
            if (background.value && background.value.toLowerCase() !== "#000000") canvas.background = background.value;
            if (Object.keys(canvas).length) body.canvas = canvas;
            if (preset.value) body.video = { preset: preset.value };
        }
        if (audioPreset.value) body.audio = { preset: audioPreset.value };
        if (outputURL.value.trim()) body.outputs = [{ url: outputURL.value.trim() }];
        submit.disabled = true;
        try {
            const room = await api("POST", "/v1/rooms", { token: ctx.token, json: body, signal: controller.signal });
            createStatus.ok(`Room ${room.name} created.`);
            name.value = "";
            outputURL.value = "";
            refresh();
        } catch (error) {
            if (isAbort(error)) return;
            if (error.status === 401) return ctx.authFailed(error);
            createStatus.error(errorSentence(error));
        } finally {
            submit.disabled = false;
        }
    });
    const createCard = h("section", { class: "card" }, h("header", {}, h("h2", {}, "Create a room")), form);

    container.append(h("div", { class: "rooms-page stack" }, listCard, createCard));
    syncPreset();
    refresh();

    return {
        destroy() {
            destroyed = true;
            clearTimeout(timer);
            controller.abort();
        },
    };
}
