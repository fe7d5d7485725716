// console-rooms-create.js — the rooms page's "Create a room" form: name, size or quality preset, audio only, audio
// preset, an optional first output → POST /v1/rooms.

import { errorSentence, isAbort } from "./api.js";
import { h, messageLine } from "./console-dom.js";

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

function presetOptions(presets) {
    return Object.entries(presets).map(([key, text]) => h("option", { value: key }, `${key} — ${text}`));
}

function createFields() {
    const number = (attrs) => h("input", { type: "number", ...attrs });
    return {
        name: h("input", {
            name: "name",
            pattern: "[A-Za-z0-9_.\\-]{1,64}",
            maxLength: 64,
            placeholder: "show",
            autocomplete: "off",
            spellcheck: false,
            dataset: { testid: "create-name" },
        }),
        preset: h(
            "select",
            { name: "preset", dataset: { testid: "create-preset" } },
            h("option", { value: "" }, "Custom (size below)"),
            presetOptions(VIDEO_PRESETS),
        ),
        audioPreset: h(
            "select",
            { name: "audioPreset" },
            h("option", { value: "" }, "Default (AAC 128 kb/s)"),
            presetOptions(AUDIO_PRESETS),
        ),
        width: number({
            name: "width",
            min: 16,
            max: 3840,
            step: 2,
            placeholder: "1280",
            dataset: { testid: "create-width" },
        }),
        height: number({
            name: "height",
            min: 16,
            max: 2160,
            step: 2,
            placeholder: "720",
            dataset: { testid: "create-height" },
        }),
        fps: number({ name: "fps", min: 1, max: 60, step: 1, placeholder: "30", dataset: { testid: "create-fps" } }),
        background: h("input", { type: "color", name: "background", value: "#000000" }),
        maxParticipants: number({ name: "maxParticipants", min: 1, max: 64, placeholder: "16" }),
        audioOnly: h("input", { type: "checkbox", name: "audioOnly", dataset: { testid: "create-audio-only" } }),
        outputURL: h("input", {
            type: "text",
            name: "output",
            placeholder: "rtmp://live.example.com/app/key (optional)",
            autocomplete: "off",
            spellcheck: false,
        }),
        submit: h("button", { type: "submit", class: "primary", dataset: { testid: "create-room" } }, "Create room"),
    };
}

/** The placeholders show the chosen preset's size; an audio-only room has no picture settings. */
function syncPreset(fields, videoFields) {
    const { preset, width, height, fps, background, audioOnly } = fields;
    const text = VIDEO_PRESETS[preset.value];
    const m = text && text.match(/^(\d+)×(\d+) · (\d+) fps/);
    width.placeholder = m ? m[1] : "1280";
    height.placeholder = m ? m[2] : "720";
    fps.placeholder = m ? m[3] : "30";
    videoFields.classList.toggle("disabled", audioOnly.checked);
    for (const el of [preset, width, height, fps, background]) el.disabled = audioOnly.checked;
}

/** The POST body from the form; an empty field is left to the server's default. */
function roomBody(fields) {
    const { name, maxParticipants, audioOnly, width, height, fps, background, preset, audioPreset, outputURL } = fields;
    const body = { name: name.value.trim() };
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
    return body;
}

/** rooms: the rooms page's state (console-rooms.js: ctx, signal, refresh()). */
async function createRoom(rooms, fields, status) {
    const body = roomBody(fields);
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(body.name)) {
        status.error(errorSentence({ code: "invalid_room" }));
        return;
    }
    fields.submit.disabled = true;
    try {
        const room = await rooms.api("POST", "/v1/rooms", { json: body });
        status.ok(`Room ${room.name} created.`);
        fields.name.value = "";
        fields.outputURL.value = "";
        rooms.refresh();
    } catch (error) {
        if (isAbort(error)) return;
        if (error.status === 401) return rooms.ctx.authFailed(error);
        status.error(errorSentence(error));
    } finally {
        fields.submit.disabled = false;
    }
}

export function createRoomForm(rooms) {
    const status = messageLine();
    const fields = createFields();
    const labelled = (cls, label, control) => h("label", { class: cls }, h("span", {}, label), control);
    const videoFields = h(
        "div",
        { class: "row end" },
        labelled("field", "Quality preset", fields.preset),
        labelled("field narrow", "Width", fields.width),
        labelled("field narrow", "Height", fields.height),
        labelled("field narrow", "fps", fields.fps),
        labelled("field", "Background", fields.background),
    );
    const sync = () => syncPreset(fields, videoFields);
    fields.preset.addEventListener("change", sync);
    fields.audioOnly.addEventListener("change", sync);
    const form = h(
        "form",
        { class: "stack", dataset: { testid: "create-form" } },
        h(
            "div",
            { class: "row end" },
            labelled("field grow", "Name", fields.name),
            labelled("field narrow", "Max people", fields.maxParticipants),
            h("label", { class: "field inline" }, fields.audioOnly, h("span", {}, "Audio only")),
        ),
        videoFields,
        h(
            "div",
            { class: "row end" },
            labelled("field", "Audio", fields.audioPreset),
            labelled("field grow", "Output", fields.outputURL),
        ),
        h("div", { class: "row" }, fields.submit, status.el),
    );
    form.addEventListener("submit", (event) => {
        event.preventDefault();
        createRoom(rooms, fields, status);
    });
    sync();
    return h("section", { class: "card" }, h("header", {}, h("h2", {}, "Create a room")), form);
}
