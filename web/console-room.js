// console-room.js — one room: the programme preview (snapshot PNGs), participants with live voice meters, mute,
// gain and kick, invites, the layout editor, pictures (background, placeholder, watermark) and outputs.
//
// Data: GET /v1/rooms/{room} every second (participants, stream stats, layout, outputs); the events WebSocket
// for voice levels (every 200 ms), the active speaker, joins and leaves, output states and output_status numbers;
// GET …/snapshot about 2.5 times a second for the preview.

import { api, apiBase, errorSentence, isAbort, openEvents } from "./api.js";
import {
    clear,
    confirmButton,
    copyText,
    fileToBase64,
    formatBytes,
    formatKbps,
    h,
    imageSize,
    isPNG,
    messageLine,
    setAttr,
    setText,
    since,
} from "./console-dom.js";
import { createEditor } from "./console-editor.js";

const ROOM_POLL_MS = 1000;
const LIST_POLL_MS = 2000;
const SNAPSHOT_EVERY_MS = 400;
const MAX_PICTURE_BASE64 = 5600000;

function isAuthError(error) {
    return error && (error.status === 401 || (error.status === 403 && error.code === "forbidden"));
}

export function mountRoom(container, room, ctx) {
    const controller = new AbortController();
    const signal = controller.signal;
    const path = `/v1/rooms/${encodeURIComponent(room)}`;
    let destroyed = false;
    let pollTimer = null;
    let snapshotTimer = null;
    let events = null;
    let eventsOpen = false;
    let info = null; // the last GET of the room
    let gone = false; // the room closed or does not exist
    let speaker = null;
    const levels = new Map(); // userId → level from voice_levels
    const outputStatus = new Map(); // output id → the last output_status event

    const call = (method, suffix, options = {}) => api(method, path + suffix, { token: ctx.token, signal, ...options });

    function failed(error, line) {
        if (isAbort(error) || destroyed) return;
        if (error.status === 401) {
            ctx.authFailed(error);
            return;
        }
        line.error(errorSentence(error));
    }

    // ---------------------------------------------------------------------------------------- header

    const banner = messageLine();
    const eventsChip = h("span", { class: "chip warn", dataset: { testid: "events-state" }, title: "The events WebSocket" }, "events: connecting");
    const summary = h("span", { class: "muted small" }, "");
    const closeButton = confirmButton("Close room", "Really close the room?", closeRoom, {
        dataset: { testid: "close-room" },
        title: "Everyone leaves, outputs flush and stop",
    });
    const header = h(
        "div",
        { class: "room-head row" },
        h("h1", {}, room),
        summary,
        eventsChip,
        h("span", { class: "grow" }),
        closeButton,
    );

    async function closeRoom() {
        try {
            await call("DELETE", "");
            ctx.navigate(null);
        } catch (error) {
            failed(error, banner);
        }
    }

    // ---------------------------------------------------------------------------------------- preview

    const previewImg = h("img", { alt: `Programme of ${room}`, dataset: { testid: "preview" }, draggable: false });
    const previewNote = h("span", { class: "muted small" }, "");
    const previewFrame = h("div", { class: "video-frame preview" }, previewImg);
    const previewStatus = messageLine();
    const previewCard = h(
        "section",
        { class: "card preview-card" },
        h("header", {}, h("h2", {}, "Programme"), previewNote),
        previewFrame,
        previewStatus.el,
    );
    const liveURLs = []; // blob URLs still shown somewhere, oldest first
    let lastFrameAt = 0;
    let snapshotFailures = 0;

    function loaded(img) {
        return img.decode ? img.decode().catch(() => {}) : Promise.resolve();
    }

    let snapshotRunning = false;
    /** One snapshot, then the next one SNAPSHOT_EVERY_MS after this one started; stops while the room is gone. */
    async function snapshotLoop() {
        snapshotRunning = !(destroyed || gone || (info && info.audioOnly));
        if (!snapshotRunning) return;
        const started = performance.now();
        let stop = false;
        if (!document.hidden && info) {
            try {
                const blob = await call("GET", "/snapshot", { as: "blob" });
                if (destroyed) return;
                const url = URL.createObjectURL(blob);
                liveURLs.push(url);
                previewImg.src = url;
                if (editor) editor.setBackdrop(url);
                await Promise.all([loaded(previewImg), editor ? loaded(editor.backdrop) : null]);
                // Everything shows the new frame now: older URLs can go.
                while (liveURLs.length > 1 && liveURLs[0] !== url) URL.revokeObjectURL(liveURLs.shift());
                lastFrameAt = Date.now();
                snapshotFailures = 0;
                previewStatus.hide();
            } catch (error) {
                if (isAbort(error) || destroyed) return;
                if (error.status === 401) {
                    ctx.authFailed(error);
                    return;
                }
                // 404: the room closed (the room poll says so and restarts the loop when it is back)
                stop = error.status === 404 || error.code === "audio_only";
                if (!stop) {
                    snapshotFailures += 1;
                    if (snapshotFailures >= 3) previewStatus.error(errorSentence(error));
                }
            }
        }
        if (stop || destroyed || gone) {
            snapshotRunning = false;
            return;
        }
        const wait = Math.max(0, SNAPSHOT_EVERY_MS - (performance.now() - started));
        snapshotTimer = setTimeout(snapshotLoop, snapshotFailures ? Math.max(wait, 2000) : wait);
    }

    const noteTimer = setInterval(() => {
        if (destroyed) return;
        if (lastFrameAt) setText(previewNote, `snapshot ${Math.max(0, Math.round((Date.now() - lastFrameAt) / 100) / 10).toFixed(1)} s ago`);
    }, 500);

    // ---------------------------------------------------------------------------------------- participants

    const participantsStatus = messageLine();
    const participantsCount = h("span", { class: "muted small" }, "");
    const participantList = h("div", { class: "participants", dataset: { testid: "participants" } });
    const noParticipants = h("p", { class: "muted small" }, "Nobody is here yet. Invite someone below.");
    const rows = new Map(); // userId → row

    function streamLine(s) {
        const total = s.packets + Math.max(0, s.lost);
        const lossPct = total > 0 ? (Math.max(0, s.lost) / total) * 100 : 0;
        const parts = [
            h("span", { class: "stream-kind" }, `${s.kind} ${s.codec}`),
            s.kind === "video" ? h("span", { dataset: { stat: "fps" } }, `${s.fps} fps`) : null,
            h("span", { dataset: { stat: "kbps" } }, formatKbps(s.kbps)),
            h("span", { dataset: { stat: "loss" }, title: `${s.lost} packets lost of ${total}` }, `loss ${lossPct.toFixed(1)} %`),
            h("span", { dataset: { stat: "jitter" } }, `jitter ${s.jitterMs.toFixed(1)} ms`),
        ];
        if (s.kind === "video" && (s.framesTooLarge || s.framesOverBudget)) {
            parts.push(h("span", { class: "warn-text" }, s.framesTooLarge ? "picture too large" : "over decode budget"));
        }
        return h("div", { class: "stream", dataset: { testid: "stream", kind: s.kind } }, parts);
    }

    function makeParticipant(userId) {
        const meterFill = h("span", { class: "meter-fill" });
        const meter = h("div", { class: "meter", dataset: { testid: "meter", level: "0" }, role: "meter", "aria-label": `Voice level of ${userId}`, "aria-valuemin": 0, "aria-valuemax": 100, "aria-valuenow": 0 }, meterFill);
        const badges = h("span", { class: "row badges" });
        const joined = h("span", { class: "muted small" });
        const streams = h("div", { class: "streams" });
        const status = messageLine();
        let muted = false;
        let gain = 1;
        let gainHeldUntil = 0;
        let muteHeldUntil = 0;

        const mute = h("button", { type: "button", class: "small", dataset: { testid: "mute" }, "aria-pressed": "false" }, "Mute");
        mute.addEventListener("click", async () => {
            const next = !muted;
            muted = next;
            muteHeldUntil = Date.now() + 2500;
            paintMute();
            try {
                await call("PATCH", `/participants/${encodeURIComponent(userId)}`, { json: { muted: next } });
            } catch (error) {
                muted = !next;
                paintMute();
                failed(error, status);
            }
        });
        function paintMute() {
            mute.setAttribute("aria-pressed", String(muted));
            setText(mute, muted ? "Muted" : "Mute");
            row.classList.toggle("muted-participant", muted);
        }

        const gainInput = h("input", { type: "range", min: 0, max: 4, step: 0.05, value: 1, dataset: { testid: "gain" }, "aria-label": `Gain of ${userId}` });
        const gainValue = h("span", { class: "mono small gain-value" }, "1.00×");
        let gainTimer = null;
        gainInput.addEventListener("input", () => {
            gain = Number(gainInput.value);
            gainHeldUntil = Date.now() + 2500;
            paintGain();
            clearTimeout(gainTimer);
            gainTimer = setTimeout(async () => {
                try {
                    await call("PATCH", `/participants/${encodeURIComponent(userId)}`, { json: { gain } });
                } catch (error) {
                    failed(error, status);
                }
            }, 150);
        });
        gainInput.addEventListener("dblclick", () => {
            gainInput.value = "1";
            gainInput.dispatchEvent(new Event("input"));
        });
        function paintGain() {
            if (document.activeElement !== gainInput || Date.now() > gainHeldUntil) gainInput.value = String(gain);
            const db = gain > 0 ? 20 * Math.log10(gain) : -Infinity;
            setText(gainValue, `${gain.toFixed(2)}× ${Number.isFinite(db) ? `(${db >= 0 ? "+" : ""}${db.toFixed(1)} dB)` : "(off)"}`);
        }

        const kick = confirmButton("Kick", "Really kick?", async () => {
            try {
                await call("DELETE", `/participants/${encodeURIComponent(userId)}`);
                if (!eventsOpen) activity(`${userId} was kicked`);
                refreshSoon();
            } catch (error) {
                failed(error, status);
            }
        }, { class: "danger small", dataset: { testid: "kick" }, title: `Remove ${userId}; their current token stops working` });

        const row = h(
            "div",
            { class: "participant", dataset: { testid: "participant", userId } },
            h("div", { class: "row participant-head" }, h("span", { class: "dot speaking-dot" }), h("strong", { class: "participant-name" }, userId), badges, h("span", { class: "grow" }), joined),
            meter,
            streams,
            h("div", { class: "row participant-controls" }, mute, h("label", { class: "field inline gain" }, h("span", {}, "gain"), gainInput, gainValue), h("span", { class: "grow" }), kick),
            status.el,
        );

        function setLevel(level) {
            const v = Math.max(0, Math.min(100, Math.round(level)));
            if (meter.dataset.level !== String(v)) {
                meter.dataset.level = String(v);
                meter.setAttribute("aria-valuenow", String(v));
                meterFill.style.width = `${v}%`;
            }
        }

        function update(p) {
            if (Date.now() > muteHeldUntil) {
                muted = p.muted;
                paintMute();
            }
            if (Date.now() > gainHeldUntil) {
                gain = p.gain;
                paintGain();
            }
            clear(badges);
            if (p.admin) badges.append(h("span", { class: "chip" }, "admin"));
            if (p.muted) badges.append(h("span", { class: "chip warn" }, "muted"));
            if (!p.streams.some((s) => s.kind === "video")) badges.append(h("span", { class: "chip" }, "no video"));
            setText(joined, `joined ${since(p.joinedAt)} ago`);
            clear(streams);
            for (const s of p.streams) streams.append(streamLine(s));
            if (!eventsOpen) setLevel(p.level);
        }

        return { row, update, setLevel };
    }

    function renderParticipants() {
        const list = info.participants;
        setText(participantsCount, `${list.length} / ${info.maxParticipants}`);
        noParticipants.classList.toggle("hidden", list.length > 0);
        const seen = new Set();
        list.forEach((p, i) => {
            seen.add(p.userId);
            let r = rows.get(p.userId);
            if (!r) {
                r = makeParticipant(p.userId);
                rows.set(p.userId, r);
                if (levels.has(p.userId)) r.setLevel(levels.get(p.userId));
            }
            r.update(p);
            if (participantList.children[i] !== r.row) participantList.insertBefore(r.row, participantList.children[i] || null);
        });
        for (const [userId, r] of rows) {
            if (!seen.has(userId)) {
                r.row.remove();
                rows.delete(userId);
            }
        }
        if (!eventsOpen) setSpeaker(info.activeSpeaker || null);
        else paintSpeaker();
    }

    function setSpeaker(userId) {
        speaker = userId;
        paintSpeaker();
    }

    function paintSpeaker() {
        for (const [userId, r] of rows) {
            const on = userId === speaker;
            r.row.classList.toggle("speaking", on);
            if (on) r.row.dataset.speaking = "true";
            else delete r.row.dataset.speaking;
        }
        if (editor) editor.setSpeaker(speaker);
    }

    // invite
    const inviteStatus = messageLine();
    const inviteUser = h("input", {
        type: "text",
        pattern: "[A-Za-z0-9_.\\-]{1,64}",
        maxLength: 64,
        placeholder: "guest1",
        autocomplete: "off",
        spellcheck: false,
        "aria-label": "Guest's user id",
        dataset: { testid: "invite-user" },
    });
    const inviteTTL = h(
        "select",
        { "aria-label": "Link valid for" },
        h("option", { value: "3600" }, "1 hour"),
        h("option", { value: "14400" }, "4 hours"),
        h("option", { value: "43200" }, "12 hours"),
        h("option", { value: "86400" }, "24 hours"),
    );
    const inviteLink = h("input", { type: "text", readOnly: true, dataset: { testid: "invite-link" }, "aria-label": "Invite link" });
    const copyButton = h("button", { type: "button", dataset: { testid: "copy-invite" } }, "Copy");
    const inviteExpiry = h("span", { class: "muted small" });
    const inviteResult = h("div", { class: "stack tight hidden", dataset: { testid: "invite-result" } }, h("div", { class: "copy-field" }, inviteLink, copyButton), inviteExpiry);
    copyButton.addEventListener("click", async () => {
        const ok = await copyText(inviteLink.value, inviteLink);
        setText(copyButton, ok ? "Copied" : "Press Ctrl+C");
        setTimeout(() => setText(copyButton, "Copy"), 2000);
    });
    const inviteSubmit = h("button", { type: "submit", class: "primary", dataset: { testid: "invite" } }, "Invite");
    const inviteForm = h("form", { class: "row", dataset: { testid: "invite-form" } }, inviteUser, inviteTTL, inviteSubmit);
    inviteForm.addEventListener("submit", async (event) => {
        event.preventDefault();
        if (!/^[A-Za-z0-9_.-]{1,64}$/.test(inviteUser.value.trim())) {
            inviteStatus.error(errorSentence({ code: "invalid_user" }));
            return;
        }
        inviteSubmit.disabled = true;
        try {
            const invite = await call("POST", "/invites", { json: { userId: inviteUser.value.trim(), ttlSeconds: Number(inviteTTL.value) } });
            const origin = apiBase();
            inviteLink.value = invite.link.startsWith("http") ? invite.link : origin + invite.link;
            const expires = Date.parse(invite.expiresAt);
            setText(inviteExpiry, `For ${invite.userId}; works until ${Number.isFinite(expires) ? new Date(expires).toLocaleString() : invite.expiresAt}. Anyone with the link can join as ${invite.userId}.`);
            inviteResult.classList.remove("hidden");
            inviteStatus.hide();
            inviteLink.select();
        } catch (error) {
            failed(error, inviteStatus);
        } finally {
            inviteSubmit.disabled = false;
        }
    });

    const participantsCard = h(
        "section",
        { class: "card participants-card" },
        h("header", {}, h("h2", {}, "Participants"), participantsCount),
        participantsStatus.el,
        participantList,
        noParticipants,
        h("h3", {}, "Invite a guest"),
        inviteForm,
        inviteStatus.el,
        inviteResult,
    );

    // ---------------------------------------------------------------------------------------- outputs

    const outputsStatus = messageLine();
    const outputList = h("div", { class: "outputs", dataset: { testid: "outputs" } });
    const noOutputs = h("p", { class: "muted small" }, "No outputs: the programme goes nowhere yet.");
    const outputRows = new Map();

    function statNumbers(s) {
        return [
            ["video", `${Number(s.videoFps).toFixed(1)} fps`],
            ["audio", `${Number(s.audioFps).toFixed(1)} fps`],
            ["rate", formatKbps(s.kbps)],
            ["queue", `${s.queueMs} ms`],
            ["dropped", `${s.droppedVideoFrames} video / ${s.droppedAudioFrames} audio`],
            ["target", formatKbps(s.bitrate)],
        ];
    }

    function makeOutput(id) {
        const chip = h("span", { class: "chip" });
        const url = h("span", { class: "mono small output-url" });
        const detail = h("span", { class: "muted small" });
        const numbers = h("dl", { class: "numbers", dataset: { testid: "output-status" } });
        const remove = confirmButton("Remove", "Really remove?", async () => {
            try {
                await call("DELETE", `/outputs/${encodeURIComponent(id)}`);
                outputsStatus.ok(`Output ${id} is stopping (it flushes what it has queued first).`);
                refreshSoon();
            } catch (error) {
                failed(error, outputsStatus);
            }
        }, { class: "danger small", dataset: { testid: "remove-output" } });
        const row = h(
            "div",
            { class: "output", dataset: { testid: "output", outputId: id, state: "connecting" } },
            h("div", { class: "row" }, h("strong", {}, id), chip, url, h("span", { class: "grow" }), remove),
            detail,
            numbers,
        );
        function paintNumbers(s) {
            clear(numbers);
            for (const [k, v] of statNumbers(s)) numbers.append(h("div", {}, h("dt", {}, k), h("dd", { dataset: { stat: k } }, v)));
        }
        function setState(state, attempt, error) {
            setAttr(row, "data-state", state);
            chip.dataset.state = state;
            setText(chip, state);
            const bits = [];
            if (attempt) bits.push(`retry ${attempt}`);
            if (error) bits.push(error);
            setText(detail, bits.join(" · "));
        }
        function update(o) {
            setText(url, o.url);
            url.title = o.url;
            setState(o.state, o.attempt, o.error);
            const fromEvent = outputStatus.get(id);
            paintNumbers(fromEvent || o);
        }
        return { row, update, setState, paintNumbers };
    }

    function renderOutputs() {
        const list = info.outputs;
        noOutputs.classList.toggle("hidden", list.length > 0);
        const seen = new Set();
        list.forEach((o, i) => {
            seen.add(o.id);
            let r = outputRows.get(o.id);
            if (!r) {
                r = makeOutput(o.id);
                outputRows.set(o.id, r);
            }
            r.update(o);
            if (outputList.children[i] !== r.row) outputList.insertBefore(r.row, outputList.children[i] || null);
        });
        for (const [id, r] of outputRows) {
            if (!seen.has(id)) {
                r.row.remove();
                outputRows.delete(id);
                outputStatus.delete(id);
            }
        }
    }

    const outputURL = h("input", {
        type: "text",
        placeholder: "rtmp://live.example.com/app/stream-key",
        autocomplete: "off",
        spellcheck: false,
        "aria-label": "Output URL",
        dataset: { testid: "output-url" },
        class: "grow",
    });
    const queueMs = h("input", { type: "number", min: 100, max: 10000, step: 100, placeholder: "2000" });
    const maxRetries = h("input", { type: "number", min: 0, max: 100000, placeholder: "forever" });
    const interleave = h("select", {}, h("option", { value: "" }, "default"), h("option", { value: "lowLatency" }, "lowLatency"), h("option", { value: "strict" }, "strict"));
    const addOutputButton = h("button", { type: "submit", class: "primary", dataset: { testid: "add-output" } }, "Add output");
    const outputForm = h(
        "form",
        { class: "stack tight" },
        h("div", { class: "row" }, outputURL, addOutputButton),
        h(
            "details",
            {},
            h("summary", { class: "muted small" }, "Options"),
            h(
                "div",
                { class: "row end" },
                h("label", { class: "field narrow" }, h("span", {}, "queue ms"), queueMs),
                h("label", { class: "field narrow" }, h("span", {}, "max retries"), maxRetries),
                h("label", { class: "field" }, h("span", {}, "interleave"), interleave),
            ),
        ),
    );
    outputForm.addEventListener("submit", async (event) => {
        event.preventDefault();
        const body = { url: outputURL.value.trim() };
        if (!body.url) {
            outputsStatus.error("Give the output's URL: rtmp://host/app/stream, rtmps://… or file://name.flv.");
            return;
        }
        if (queueMs.value) body.queueMs = Number(queueMs.value);
        if (maxRetries.value) body.maxRetries = Number(maxRetries.value);
        if (interleave.value) body.interleave = interleave.value;
        addOutputButton.disabled = true;
        try {
            const o = await call("POST", "/outputs", { json: body });
            outputsStatus.ok(`Output ${o.id} added.`);
            outputURL.value = "";
            refreshSoon();
        } catch (error) {
            failed(error, outputsStatus);
        } finally {
            addOutputButton.disabled = false;
        }
    });

    const outputsCard = h(
        "section",
        { class: "card outputs-card" },
        h("header", {}, h("h2", {}, "Outputs"), h("span", { class: "muted small" }, "numbers from output_status")),
        outputsStatus.el,
        outputList,
        noOutputs,
        outputForm,
    );

    // ---------------------------------------------------------------------------------------- pictures

    const picturesStatus = messageLine();
    let watermarkImage = null; // base64 of the watermark chosen in this page (the server never gives it back)
    let watermarkSize = null;

    function pictureRow(label, field, testid) {
        const now = h("span", { class: "muted small", dataset: { testid: `${testid}-info` } }, "none");
        const input = h("input", { type: "file", accept: "image/png", dataset: { testid }, "aria-label": `${label} (PNG)` });
        const remove = h("button", { type: "button", class: "small" }, "Remove");
        input.addEventListener("change", async () => {
            const file = input.files && input.files[0];
            if (!file) return;
            const b64 = await readPicture(file);
            input.value = "";
            if (!b64) return;
            await patchRoom({ [field]: b64 }, `${label} set.`);
        });
        remove.addEventListener("click", () => patchRoom({ [field]: null }, `${label} removed.`));
        const el = h("div", { class: "picture-row" }, h("div", { class: "row" }, h("strong", {}, label), now), h("div", { class: "row" }, input, remove));
        return {
            el,
            update(image) {
                setText(now, image ? `${image.width}×${image.height} PNG, ${formatBytes(image.bytes)}` : "none");
                remove.disabled = !image;
            },
        };
    }

    async function readPicture(file) {
        if (!(await isPNG(file))) {
            picturesStatus.error(`${file.name} is not a PNG file: Cohost takes PNG pictures only.`);
            return null;
        }
        const b64 = await fileToBase64(file);
        if (b64.length > MAX_PICTURE_BASE64) {
            picturesStatus.error(`${file.name} is too large: at most 5,600,000 bytes of base64 (about 4.2 MB of PNG).`);
            return null;
        }
        return b64;
    }

    async function patchRoom(body, done) {
        try {
            const updated = await call("PATCH", "", { json: body });
            picturesStatus.ok(done);
            apply(updated);
        } catch (error) {
            failed(error, picturesStatus);
        }
    }

    const background = pictureRow("Background", "backgroundImage", "background-file");
    const placeholder = pictureRow("Placeholder", "placeholderImage", "placeholder-file");

    const wmNow = h("span", { class: "muted small", dataset: { testid: "watermark-info" } }, "none");
    const wmFile = h("input", { type: "file", accept: "image/png", dataset: { testid: "watermark-file" }, "aria-label": "Watermark (PNG)" });
    const wmField = (label, attrs) => {
        const input = h("input", { type: "number", ...attrs });
        return { input, el: h("label", { class: "field narrow" }, h("span", {}, label), input) };
    };
    const wx = wmField("x", { step: 2 });
    const wy = wmField("y", { step: 2 });
    const ww = wmField("width", { min: 1, step: 2 });
    const wh = wmField("height", { min: 1, step: 2 });
    const wo = wmField("opacity", { min: 0, max: 1, step: 0.05, value: 1 });
    const wmSet = h("button", { type: "button", class: "primary small", dataset: { testid: "set-watermark" } }, "Set watermark");
    const wmRemove = h("button", { type: "button", class: "small" }, "Remove");
    wmFile.addEventListener("change", async () => {
        const file = wmFile.files && wmFile.files[0];
        if (!file) return;
        const b64 = await readPicture(file);
        if (!b64) {
            wmFile.value = "";
            return;
        }
        watermarkImage = b64;
        watermarkSize = await imageSize(file);
        if (info && watermarkSize) {
            // a default place: top-right, 15 % of the canvas's width, the picture's aspect
            const W = info.canvas.width;
            const H = info.canvas.height;
            const margin = Math.round(Math.min(W, H) / 30 / 2) * 2;
            const width = Math.max(2, Math.round((W * 0.15) / 2) * 2);
            const height = Math.max(2, Math.round((width * watermarkSize.height) / watermarkSize.width / 2) * 2);
            if (!info.watermark) {
                wx.input.value = String(W - width - margin);
                wy.input.value = String(margin);
                ww.input.value = String(width);
                wh.input.value = String(height);
            }
        }
        wmSet.disabled = false;
    });
    wmSet.addEventListener("click", () => {
        if (!watermarkImage) {
            picturesStatus.error("Choose the watermark's PNG first (to move a watermark, choose its file again).");
            return;
        }
        const body = {
            watermark: {
                image: watermarkImage,
                x: Math.round(Number(wx.input.value) || 0),
                y: Math.round(Number(wy.input.value) || 0),
                width: Math.max(1, Math.round(Number(ww.input.value) || 1)),
                height: Math.max(1, Math.round(Number(wh.input.value) || 1)),
                opacity: Math.min(1, Math.max(0, Number(wo.input.value === "" ? 1 : wo.input.value))),
            },
        };
        patchRoom(body, "Watermark set.");
    });
    wmRemove.addEventListener("click", () => patchRoom({ watermark: null }, "Watermark removed."));
    const watermarkRow = h(
        "div",
        { class: "picture-row" },
        h("div", { class: "row" }, h("strong", {}, "Watermark"), wmNow),
        h("div", { class: "row" }, wmFile, wmRemove),
        h("div", { class: "row end" }, wx.el, wy.el, ww.el, wh.el, wo.el, wmSet),
    );
    let watermarkShown = null;
    function updateWatermark(wm) {
        setText(wmNow, wm ? `${wm.image.width}×${wm.image.height} PNG at ${wm.x},${wm.y}, ${wm.width}×${wm.height}, opacity ${wm.opacity}` : "none");
        wmRemove.disabled = !wm;
        wmSet.disabled = !watermarkImage;
        const key = JSON.stringify(wm || null);
        if (key !== watermarkShown) {
            watermarkShown = key;
            if (wm) {
                wx.input.value = String(wm.x);
                wy.input.value = String(wm.y);
                ww.input.value = String(wm.width);
                wh.input.value = String(wm.height);
                wo.input.value = String(wm.opacity);
            }
        }
    }

    const picturesCard = h(
        "section",
        { class: "card pictures-card" },
        h("header", {}, h("h2", {}, "Pictures"), h("span", { class: "muted small" }, "PNG, up to 4096×4096")),
        picturesStatus.el,
        background.el,
        placeholder.el,
        watermarkRow,
    );

    // ---------------------------------------------------------------------------------------- activity

    const activityList = h("ol", { class: "activity", dataset: { testid: "activity" } });
    const activityEmpty = h("p", { class: "muted small" }, "Joins, leaves, kicks and output changes appear here as they happen.");
    function activity(text) {
        activityEmpty.remove();
        const time = new Date().toLocaleTimeString();
        activityList.prepend(h("li", {}, h("span", { class: "muted small mono" }, time), " ", text));
        while (activityList.children.length > 30) activityList.lastChild.remove();
    }
    const activityCard = h("section", { class: "card activity-card" }, h("header", {}, h("h2", {}, "Activity")), activityEmpty, activityList);

    // ---------------------------------------------------------------------------------------- page

    let editor = null;
    const mainColumn = h("div", { class: "room-main stack" });
    const sideColumn = h("div", { class: "room-side stack" }, participantsCard, outputsCard, activityCard);
    const audioOnlyNote = h(
        "section",
        { class: "card hidden" },
        h("h2", {}, "Audio-only room"),
        h("p", { class: "muted" }, "This room has no picture: no preview, layout or pictures. Its outputs carry sound only."),
    );
    mainColumn.append(previewCard, audioOnlyNote);
    const goneCard = h("section", { class: "card hidden", dataset: { testid: "room-gone" } });
    const page = h("div", { class: "room-page stack" }, header, banner.el, goneCard, h("div", { class: "room-grid" }, mainColumn, sideColumn));
    container.append(page);

    function setupForRoom() {
        if (info.audioOnly) {
            previewCard.classList.add("hidden");
            audioOnlyNote.classList.remove("hidden");
            return;
        }
        if (!editor) {
            editor = createEditor({ room, token: ctx.token, signal, onAuthError: ctx.authFailed, onApplied: () => refreshSoon() });
            mainColumn.append(editor.el, picturesCard);
            if (previewImg.src) editor.setBackdrop(previewImg.src);
        }
    }

    let setUp = false;
    function apply(room) {
        info = room;
        if (!setUp) {
            setupForRoom();
            setUp = true;
        }
        const c = info.canvas;
        setText(
            summary,
            info.audioOnly
                ? `audio only · ${info.audio.bitrate} kb/s`
                : `${c.width}×${c.height} · ${c.fps} fps${info.video ? ` · ${info.video.bitrate} kb/s ${info.video.profile}` : ""} · ${info.layout.mode}`,
        );
        if (!info.audioOnly) {
            // the canvas's own shape (presets are portrait), never taller than most of the window
            previewFrame.style.aspectRatio = `${c.width} / ${c.height}`;
            previewFrame.style.maxWidth = `calc(65vh * ${c.width / c.height})`;
        }
        renderParticipants();
        renderOutputs();
        if (editor) editor.update(info);
        if (!info.audioOnly) {
            background.update(c.backgroundImage);
            placeholder.update(c.placeholderImage);
            updateWatermark(info.watermark);
        }
    }

    function showGone(text) {
        gone = true;
        clearTimeout(snapshotTimer);
        if (events) {
            events.close();
            events = null;
        }
        clear(goneCard);
        goneCard.append(
            h("p", { class: "notice warn", role: "alert" }, text, " This page shows it again as soon as it is open."),
            h("div", { class: "row" }, ctx.link(null, "← All rooms")),
        );
        goneCard.classList.remove("hidden");
        setEventsState("closed");
        closeButton.disabled = true;
        clearTimeout(pollTimer);
        if (!destroyed) pollTimer = setTimeout(refresh, LIST_POLL_MS);
    }

    async function refresh() {
        clearTimeout(pollTimer);
        if (destroyed) return;
        try {
            let data;
            if (gone || !info) {
                // Is it open? Asked of the list: a GET of a room that is not there would be a 404 in the console.
                const list = await api("GET", "/v1/rooms", { token: ctx.token, signal });
                if (destroyed) return;
                data = (list.rooms || []).find((r) => r.name === room);
                if (!data) {
                    if (!gone) showGone(info ? `Room ${room} has closed.` : `There is no open room called ${room}.`);
                    else pollTimer = setTimeout(refresh, LIST_POLL_MS);
                    return;
                }
                if (gone) {
                    gone = false;
                    goneCard.classList.add("hidden");
                    outputStatus.clear();
                    activity(`room ${room} is open`);
                }
            } else {
                data = await call("GET", "");
                if (destroyed || gone) return;
            }
            apply(data);
            closeButton.disabled = false;
            if (banner.el.dataset.source === "poll") {
                banner.hide();
                delete banner.el.dataset.source;
            }
            if (!events) startEvents();
            if (!snapshotRunning) snapshotLoop();
        } catch (error) {
            if (isAbort(error) || destroyed) return;
            if (error.status === 404) {
                showGone(`Room ${room} has closed.`);
                return;
            }
            if (isAuthError(error)) {
                ctx.authFailed(error);
                return;
            }
            banner.error(errorSentence(error));
            banner.el.dataset.source = "poll";
        }
        if (!destroyed && !gone) pollTimer = setTimeout(refresh, ROOM_POLL_MS);
    }

    let soonTimer = null;
    function refreshSoon() {
        clearTimeout(soonTimer);
        soonTimer = setTimeout(refresh, 150);
    }

    // ---------------------------------------------------------------------------------------- events

    function setEventsState(state, detail) {
        eventsOpen = state === "open";
        eventsChip.className = `chip ${state === "open" ? "good" : "warn"}`;
        eventsChip.dataset.state = state;
        setText(eventsChip, state === "open" ? "events: live" : state === "connecting" ? "events: connecting" : detail ? `events: retry in ${Math.round(detail / 1000)} s` : "events: closed");
        eventsChip.title = state === "open" ? "Voice levels and output numbers arrive live" : "Meters and numbers come from the once-a-second poll until the events reconnect";
    }

    function startEvents() {
        events = openEvents(room, ctx.token, {
            onState: (state, { retryInMs }) => {
                if (!destroyed) setEventsState(state, retryInMs);
            },
            onEvent: onEvent,
        });
    }

    function onEvent(e) {
        if (destroyed || e.room !== room) return;
        switch (e.type) {
            case "voice_levels": {
                for (const [userId, r] of rows) r.setLevel(e.levels[userId] ?? 0);
                for (const [userId, level] of Object.entries(e.levels)) levels.set(userId, level);
                if ((e.activeSpeaker || null) !== speaker && e.activeSpeaker) setSpeaker(e.activeSpeaker);
                break;
            }
            case "active_speaker":
                setSpeaker(e.userId);
                break;
            case "participant_joined":
                activity(`${e.userId} joined`);
                refreshSoon();
                break;
            case "participant_left":
                activity(`${e.userId} left (${e.reason.replace("_", " ")})`);
                levels.delete(e.userId);
                if (speaker === e.userId) setSpeaker(null);
                refreshSoon();
                break;
            case "participant_kicked":
                activity(`${e.userId} was kicked by ${e.by}`);
                break;
            case "first_video_frame":
                activity(`${e.userId}'s video started (${e.width}×${e.height})`);
                break;
            case "output_state": {
                const r = outputRows.get(e.output);
                if (r) r.setState(e.state, e.attempt, e.error);
                activity(`output ${e.output} ${e.state}${e.error ? `: ${e.error}` : ""}`);
                if (!r) refreshSoon();
                break;
            }
            case "output_status": {
                outputStatus.set(e.output, e);
                const r = outputRows.get(e.output);
                if (r) r.paintNumbers(e);
                break;
            }
            case "room_closed":
                activity("the room closed");
                showGone(`Room ${room} has closed.`);
                break;
            default:
                break;
        }
    }

    setEventsState("connecting");
    refresh();

    return {
        destroy() {
            destroyed = true;
            clearTimeout(pollTimer);
            clearTimeout(snapshotTimer);
            clearTimeout(soonTimer);
            clearInterval(noteTimer);
            controller.abort();
            if (events) events.close();
            for (const url of liveURLs.splice(0)) URL.revokeObjectURL(url);
        },
    };
}
