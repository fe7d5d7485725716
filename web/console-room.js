// console-room.js — one room's page: its header (name, summary, events state, close), the poll that keeps it current
// (GET /v1/rooms/{room} every second; the rooms list every 2 s while the room is gone) and the panels, each in its
// own module: the programme preview (console-room-preview.js), participants and invites
// (console-room-participants.js, console-room-invite.js), outputs (console-room-outputs.js), the layout editor
// (console-editor.js), pictures (console-room-pictures.js) and activity (console-room-activity.js). The events
// WebSocket (console-room-events.js) feeds them voice levels, the active speaker, joins and leaves, output states
// and output_status numbers between polls.
//
// The page and its panels share one state object (roomState below), passed to each; a panel reaches another only
// through the functions that one returns.

import { api, errorSentence, isAbort } from "./api.js";
import { clear, confirmButton, h, messageLine, setText } from "./console-dom.js";
import { createEditor } from "./console-editor.js";
import { createActivity } from "./console-room-activity.js";
import { createCameras } from "./console-room-cameras.js";
import { createEvents } from "./console-room-events.js";
import { createOutputs } from "./console-room-outputs.js";
import { createParticipants } from "./console-room-participants.js";
import { createPictures } from "./console-room-pictures.js";
import { createPreview } from "./console-room-preview.js";

const ROOM_POLL_MS = 1000;
const LIST_POLL_MS = 2000;

function isAuthError(error) {
    return error && (error.status === 401 || (error.status === 403 && error.code === "forbidden"));
}

/**
 * What the room page's panels share:
 *   name, path, ctx, signal  the room's name and API path, the console's context, the page's abort signal
 *   info                     the last GET of the room (null before the first)
 *   destroyed, gone          the page was left; the room closed or does not exist
 *   eventsOpen               the events socket is open: meters and numbers come from it rather than from the poll
 *   speaker, levels          the active speaker; userId → level from voice_levels
 *   outputStatus             output id → the last output_status event
 *   editor                   the layout editor, once the room is known to have a picture
 *   setUp                    the page has been set up for the room's kind (with a picture, or audio only)
 *   timers                   the next poll, and the quick poll after a change (refreshSoon)
 *   call(), failed(), refreshSoon(), apply(), showGone(), activity()   what the panels ask of the page
 * and, once mounted, the parts (events, header, preview, participants, outputs, pictures, activityLog, layout).
 */
function roomState(name, ctx, signal) {
    const view = {
        name,
        path: `/v1/rooms/${encodeURIComponent(name)}`,
        ctx,
        signal,
        info: null,
        destroyed: false,
        gone: false,
        setUp: false,
        eventsOpen: false,
        speaker: null,
        levels: new Map(),
        outputStatus: new Map(),
        editor: null,
        timers: { poll: null, soon: null },
    };
    view.call = (method, suffix, options = {}) =>
        api(method, view.path + suffix, { token: ctx.token, signal, ...options });
    view.failed = (error, line) => {
        if (isAbort(error) || view.destroyed) return;
        if (error.status === 401) {
            ctx.authFailed(error);
            return;
        }
        line.error(errorSentence(error));
    };
    view.refreshSoon = () => {
        clearTimeout(view.timers.soon);
        view.timers.soon = setTimeout(() => refresh(view), 150);
    };
    view.apply = (room) => apply(view, room);
    view.showGone = (text) => showGone(view, text);
    return view;
}

// ------------------------------------------------------------------------------------------------ header

function createHeader(view) {
    const banner = messageLine();
    const summary = h("span", { class: "muted small" }, "");
    const closeButton = confirmButton("Close room", "Really close the room?", () => closeRoom(view, banner), {
        dataset: { testid: "close-room" },
        title: "Everyone leaves, outputs flush and stop",
    });
    const el = h(
        "div",
        { class: "room-head row" },
        h("h1", {}, view.name),
        summary,
        view.events.chip,
        h("span", { class: "grow" }),
        closeButton,
    );
    return { el, banner, summary, closeButton };
}

async function closeRoom(view, banner) {
    try {
        await view.call("DELETE", "");
        view.ctx.navigate(null);
    } catch (error) {
        view.failed(error, banner);
    }
}

function summaryText(room) {
    if (room.audioOnly) return `audio only · ${room.audio.bitrate} kb/s`;
    const c = room.canvas;
    const video = room.video ? ` · ${room.video.bitrate} kb/s ${room.video.profile}` : "";
    return `${c.width}×${c.height} · ${c.fps} fps${video} · ${room.layout.mode}`;
}

// ------------------------------------------------------------------------------------------------ page

function pageLayout(view) {
    const mainColumn = h("div", { class: "room-main stack" });
    const sideColumn = h(
        "div",
        { class: "room-side stack" },
        view.participants.el,
        view.outputs.el,
        view.activityLog.el,
    );
    const audioOnlyNote = h(
        "section",
        { class: "card hidden" },
        h("h2", {}, "Audio-only room"),
        h(
            "p",
            { class: "muted" },
            "This room has no picture: no preview, layout or pictures. Its outputs carry sound only.",
        ),
    );
    mainColumn.append(view.preview.el, audioOnlyNote);
    const goneCard = h("section", { class: "card hidden", dataset: { testid: "room-gone" } });
    const page = h(
        "div",
        { class: "room-page stack" },
        view.header.el,
        view.header.banner.el,
        goneCard,
        h("div", { class: "room-grid" }, mainColumn, sideColumn),
    );
    return { page, mainColumn, audioOnlyNote, goneCard };
}

/** Once the room is known: the note for an audio-only room, else the layout editor and the pictures. */
function setupForRoom(view) {
    if (view.info.audioOnly) {
        view.preview.el.classList.add("hidden");
        view.layout.audioOnlyNote.classList.remove("hidden");
        return;
    }
    if (!view.editor) {
        view.editor = createEditor({
            room: view.name,
            token: view.ctx.token,
            signal: view.signal,
            onAuthError: view.ctx.authFailed,
            onApplied: () => view.refreshSoon(),
        });
        view.layout.mainColumn.append(view.editor.el, view.pictures.el);
        if (view.preview.img.src) view.editor.setBackdrop(view.preview.img.src);
    }
}

function apply(view, room) {
    view.info = room;
    if (!view.setUp) {
        setupForRoom(view);
        view.setUp = true;
    }
    setText(view.header.summary, summaryText(room));
    if (!room.audioOnly) view.preview.fit(room.canvas);
    view.participants.render();
    view.cameras.start();
    view.outputs.render();
    if (view.editor) view.editor.update(room);
    if (!room.audioOnly) view.pictures.update(room);
}

function showGone(view, text) {
    view.gone = true;
    view.preview.stop();
    view.events.close();
    const card = view.layout.goneCard;
    clear(card);
    card.append(
        h("p", { class: "notice warn", role: "alert" }, text, " This page shows it again as soon as it is open."),
        h("div", { class: "row" }, view.ctx.link(null, "← All rooms")),
    );
    card.classList.remove("hidden");
    view.events.setState("closed");
    view.header.closeButton.disabled = true;
    clearTimeout(view.timers.poll);
    if (!view.destroyed) view.timers.poll = setTimeout(() => refresh(view), LIST_POLL_MS);
}

// ------------------------------------------------------------------------------------------------ poll

/** The room from the rooms list while it is gone (or not yet seen), or null when there is nothing to show. */
async function findInList(view) {
    // Asked of the list: a GET of a room that is not there would be a 404 in the browser's console.
    const list = await api("GET", "/v1/rooms", { token: view.ctx.token, signal: view.signal });
    if (view.destroyed) return null;
    const room = (list.rooms || []).find((r) => r.name === view.name);
    if (!room) {
        if (!view.gone) {
            showGone(view, view.info ? `Room ${view.name} has closed.` : `There is no open room called ${view.name}.`);
        } else {
            view.timers.poll = setTimeout(() => refresh(view), LIST_POLL_MS);
        }
        return null;
    }
    if (view.gone) {
        view.gone = false;
        view.layout.goneCard.classList.add("hidden");
        view.outputStatus.clear();
        view.activity(`room ${view.name} is open`);
    }
    return room;
}

function showRoom(view, room) {
    apply(view, room);
    view.header.closeButton.disabled = false;
    const banner = view.header.banner;
    if (banner.el.dataset.source === "poll") {
        banner.hide();
        delete banner.el.dataset.source;
    }
    if (!view.events.started) view.events.start();
    if (!view.preview.running) view.preview.start();
}

async function refresh(view) {
    clearTimeout(view.timers.poll);
    if (view.destroyed) return;
    try {
        let room;
        if (view.gone || !view.info) {
            room = await findInList(view);
            if (!room) return;
        } else {
            room = await view.call("GET", "");
            if (view.destroyed || view.gone) return;
        }
        showRoom(view, room);
    } catch (error) {
        if (isAbort(error) || view.destroyed) return;
        if (error.status === 404) {
            showGone(view, `Room ${view.name} has closed.`);
            return;
        }
        if (isAuthError(error)) {
            view.ctx.authFailed(error);
            return;
        }
        view.header.banner.error(errorSentence(error));
        view.header.banner.el.dataset.source = "poll";
    }
    if (!view.destroyed && !view.gone) view.timers.poll = setTimeout(() => refresh(view), ROOM_POLL_MS);
}

// ------------------------------------------------------------------------------------------------ mount

export function mountRoom(container, room, ctx) {
    const controller = new AbortController();
    const view = roomState(room, ctx, controller.signal);
    view.events = createEvents(view);
    view.header = createHeader(view);
    view.preview = createPreview(view);
    view.participants = createParticipants(view);
    view.cameras = createCameras(view, (userId, stream) => view.participants.showCamera(userId, stream));
    view.outputs = createOutputs(view);
    view.pictures = createPictures(view);
    view.activityLog = createActivity();
    view.activity = view.activityLog.add;
    view.layout = pageLayout(view);
    container.append(view.layout.page);

    view.events.setState("connecting");
    refresh(view);

    return {
        destroy() {
            view.destroyed = true;
            clearTimeout(view.timers.poll);
            clearTimeout(view.timers.soon);
            controller.abort();
            view.events.close();
            view.preview.destroy();
            view.cameras.stop();
        },
    };
}
