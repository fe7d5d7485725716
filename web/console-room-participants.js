// console-room-participants.js — the room page's participants card: one row per participant with a voice meter,
// its streams' numbers, mute, gain and kick; the active speaker marked; the invite form below
// (console-room-invite.js).
//
// Meters come from the events' voice_levels while the events socket is open, else from the poll's levels. A mute
// or gain the producer just changed is held for 2.5 s against polls that predate it.

import { clear, confirmButton, formatKbps, h, messageLine, setText, since } from "./console-dom.js";
import { createInvite } from "./console-room-invite.js";

const HOLD_MS = 2500;

function streamLine(s) {
    const total = s.packets + Math.max(0, s.lost);
    const lossPct = total > 0 ? (Math.max(0, s.lost) / total) * 100 : 0;
    const parts = [
        h("span", { class: "stream-kind" }, `${s.kind} ${s.codec}`),
        s.kind === "video" ? h("span", { dataset: { stat: "fps" } }, `${s.fps} fps`) : null,
        h("span", { dataset: { stat: "kbps" } }, formatKbps(s.kbps)),
        h(
            "span",
            { dataset: { stat: "loss" }, title: `${s.lost} packets lost of ${total}` },
            `loss ${lossPct.toFixed(1)} %`,
        ),
        h("span", { dataset: { stat: "jitter" } }, `jitter ${s.jitterMs.toFixed(1)} ms`),
    ];
    if (s.kind === "video" && (s.framesTooLarge || s.framesOverBudget)) {
        parts.push(h("span", { class: "warn-text" }, s.framesTooLarge ? "picture too large" : "over decode budget"));
    }
    return h("div", { class: "stream", dataset: { testid: "stream", kind: s.kind } }, parts);
}

function voiceMeter(userId) {
    const fill = h("span", { class: "meter-fill" });
    const el = h(
        "div",
        {
            class: "meter",
            dataset: { testid: "meter", level: "0" },
            role: "meter",
            "aria-label": `Voice level of ${userId}`,
            "aria-valuemin": 0,
            "aria-valuemax": 100,
            "aria-valuenow": 0,
        },
        fill,
    );
    function set(level) {
        const v = Math.max(0, Math.min(100, Math.round(level)));
        if (el.dataset.level !== String(v)) {
            el.dataset.level = String(v);
            el.setAttribute("aria-valuenow", String(v));
            fill.style.width = `${v}%`;
        }
    }
    return { el, set };
}

/** person: { userId, status, row, muted, muteHeldUntil }; the button shows and toggles its mute. */
function muteButton(view, person) {
    const button = h(
        "button",
        { type: "button", class: "small", dataset: { testid: "mute" }, "aria-pressed": "false" },
        "Mute",
    );
    function paint() {
        button.setAttribute("aria-pressed", String(person.muted));
        setText(button, person.muted ? "Muted" : "Mute");
        person.row.classList.toggle("muted-participant", person.muted);
    }
    button.addEventListener("click", async () => {
        const next = !person.muted;
        person.muted = next;
        person.muteHeldUntil = Date.now() + HOLD_MS;
        paint();
        try {
            await view.call("PATCH", `/participants/${encodeURIComponent(person.userId)}`, { json: { muted: next } });
        } catch (error) {
            person.muted = !next;
            paint();
            view.failed(error, person.status);
        }
    });
    return { el: button, paint };
}

/** person: { userId, status, gain, gainHeldUntil }; a slider 0–4 sent 150 ms after it stops moving. */
function gainControl(view, person) {
    const input = h("input", {
        type: "range",
        min: 0,
        max: 4,
        step: 0.05,
        value: 1,
        dataset: { testid: "gain" },
        "aria-label": `Gain of ${person.userId}`,
    });
    const value = h("span", { class: "mono small gain-value" }, "1.00×");
    let timer = null;
    function paint() {
        if (document.activeElement !== input || Date.now() > person.gainHeldUntil) input.value = String(person.gain);
        const db = person.gain > 0 ? 20 * Math.log10(person.gain) : -Infinity;
        const dbText = Number.isFinite(db) ? `(${db >= 0 ? "+" : ""}${db.toFixed(1)} dB)` : "(off)";
        setText(value, `${person.gain.toFixed(2)}× ${dbText}`);
    }
    input.addEventListener("input", () => {
        person.gain = Number(input.value);
        person.gainHeldUntil = Date.now() + HOLD_MS;
        paint();
        clearTimeout(timer);
        timer = setTimeout(async () => {
            try {
                const path = `/participants/${encodeURIComponent(person.userId)}`;
                await view.call("PATCH", path, { json: { gain: person.gain } });
            } catch (error) {
                view.failed(error, person.status);
            }
        }, 150);
    });
    input.addEventListener("dblclick", () => {
        input.value = "1";
        input.dispatchEvent(new Event("input"));
    });
    const el = h("label", { class: "field inline gain" }, h("span", {}, "gain"), input, value);
    return { el, paint };
}

function kickButton(view, person) {
    const { userId } = person;
    const kick = async () => {
        try {
            await view.call("DELETE", `/participants/${encodeURIComponent(userId)}`);
            if (!view.eventsOpen) view.activity(`${userId} was kicked`);
            view.refreshSoon();
        } catch (error) {
            view.failed(error, person.status);
        }
    };
    return confirmButton("Kick", "Really kick?", kick, {
        class: "danger small",
        dataset: { testid: "kick" },
        title: `Remove ${userId}; their current token stops working`,
    });
}

function makeParticipant(view, userId) {
    const person = {
        userId,
        status: messageLine(),
        row: null,
        muted: false,
        gain: 1,
        gainHeldUntil: 0,
        muteHeldUntil: 0,
    };
    const meter = voiceMeter(userId);
    const badges = h("span", { class: "row badges" });
    const joined = h("span", { class: "muted small" });
    const streams = h("div", { class: "streams" });
    // The participant's own camera, forwarded to the console's monitor (console-room-cameras.js).
    const camera = h("video", {
        class: "participant-camera hidden",
        autoplay: true,
        playsInline: true,
        muted: true,
        dataset: { testid: "participant-camera" },
    });
    const mute = muteButton(view, person);
    const gain = gainControl(view, person);
    const row = h(
        "div",
        { class: "participant", dataset: { testid: "participant", userId } },
        h(
            "div",
            { class: "row participant-head" },
            h("span", { class: "dot speaking-dot" }),
            h("strong", { class: "participant-name" }, userId),
            h("span", { class: "muted small display-name", dataset: { testid: "display-name" } }, ""),
            badges,
            h("span", { class: "grow" }),
            joined,
        ),
        camera,
        meter.el,
        streams,
        h(
            "div",
            { class: "row participant-controls" },
            mute.el,
            gain.el,
            h("span", { class: "grow" }),
            kickButton(view, person),
        ),
        person.status.el,
    );
    person.row = row;

    function update(p) {
        if (Date.now() > person.muteHeldUntil) {
            person.muted = p.muted;
            mute.paint();
        }
        if (Date.now() > person.gainHeldUntil) {
            person.gain = p.gain;
            gain.paint();
        }
        setText(row.querySelector(".display-name"), p.name && p.name !== userId ? p.name : "");
        clear(badges);
        if (p.admin) badges.append(h("span", { class: "chip" }, "admin"));
        if (p.muted) badges.append(h("span", { class: "chip warn" }, "muted"));
        if (!p.streams.some((s) => s.kind === "video")) badges.append(h("span", { class: "chip" }, "no video"));
        setText(joined, `joined ${since(p.joinedAt)} ago`);
        clear(streams);
        for (const s of p.streams) streams.append(streamLine(s));
        if (!view.eventsOpen) meter.set(p.level);
    }

    function setCamera(stream) {
        if (camera.srcObject !== stream) camera.srcObject = stream;
        camera.classList.toggle("hidden", !stream);
        if (stream) camera.play().catch(() => {}); // muted: allowed
    }

    return { row, update, setLevel: meter.set, setCamera };
}

// ------------------------------------------------------------------------------------------------ the list

function render(view, panel) {
    const { rows, list } = panel;
    const people = view.info.participants;
    setText(panel.count, `${people.length} / ${view.info.maxParticipants}`);
    panel.none.classList.toggle("hidden", people.length > 0);
    const seen = new Set();
    people.forEach((p, i) => {
        seen.add(p.userId);
        let r = rows.get(p.userId);
        if (!r) {
            r = makeParticipant(view, p.userId);
            rows.set(p.userId, r);
            if (view.levels.has(p.userId)) r.setLevel(view.levels.get(p.userId));
            if (panel.cameras.has(p.userId)) r.setCamera(panel.cameras.get(p.userId));
        }
        r.update(p);
        if (list.children[i] !== r.row) list.insertBefore(r.row, list.children[i] || null);
    });
    for (const [userId, r] of rows) {
        if (!seen.has(userId)) {
            r.row.remove();
            rows.delete(userId);
        }
    }
    if (!view.eventsOpen) setSpeaker(view, panel, view.info.activeSpeaker || null);
    else paintSpeaker(view, panel);
}

function setSpeaker(view, panel, userId) {
    view.speaker = userId;
    paintSpeaker(view, panel);
}

function paintSpeaker(view, panel) {
    for (const [userId, r] of panel.rows) {
        const on = userId === view.speaker;
        r.row.classList.toggle("speaking", on);
        if (on) r.row.dataset.speaking = "true";
        else delete r.row.dataset.speaking;
    }
    if (view.editor) view.editor.setSpeaker(view.speaker);
}

/** voice_levels: every row's meter (0 for those not in it), and the active speaker when it names one. */
function showLevels(view, panel, levels, activeSpeaker) {
    for (const [userId, r] of panel.rows) r.setLevel(levels[userId] ?? 0);
    for (const [userId, level] of Object.entries(levels)) view.levels.set(userId, level);
    if ((activeSpeaker || null) !== view.speaker && activeSpeaker) setSpeaker(view, panel, activeSpeaker);
}

export function createParticipants(view) {
    const status = messageLine();
    const count = h("span", { class: "muted small" }, "");
    const list = h("div", { class: "participants", dataset: { testid: "participants" } });
    const none = h("p", { class: "muted small" }, "Nobody is here yet. Invite someone below.");
    // rows: userId → row; cameras: userId → the stream of its camera (it may come before the row)
    const panel = { count, list, none, rows: new Map(), cameras: new Map() };
    const invite = createInvite(view);
    const el = h(
        "section",
        { class: "card participants-card" },
        h("header", {}, h("h2", {}, "Participants"), count),
        status.el,
        list,
        none,
        h("h3", {}, "Invite a guest"),
        invite.nodes,
    );
    return {
        el,
        render: () => render(view, panel),
        setSpeaker: (userId) => setSpeaker(view, panel, userId),
        showCamera(userId, stream) {
            if (stream) panel.cameras.set(userId, stream);
            else panel.cameras.delete(userId);
            panel.rows.get(userId)?.setCamera(stream);
        },
        showLevels: (levels, activeSpeaker) => showLevels(view, panel, levels, activeSpeaker),
        /** A participant left: its level and, if it was, the active speaker go. */
        forget(userId) {
            view.levels.delete(userId);
            if (view.speaker === userId) setSpeaker(view, panel, null);
        },
    };
}
