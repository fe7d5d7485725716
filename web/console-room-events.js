// console-room-events.js — the room page's events WebSocket (protocol/events.schema.json): its state chip in the
// header, and each event handed to the panel it is about (participants, outputs, activity) or to the page (the
// room closed, someone joined or left: poll now).

import { openEvents } from "./api.js";
import { h, setText } from "./console-dom.js";

function chipText(state, retryInMs) {
    if (state === "open") return "events: live";
    if (state === "connecting") return "events: connecting";
    return retryInMs ? `events: retry in ${Math.round(retryInMs / 1000)} s` : "events: closed";
}

function setEventsState(view, chip, state, retryInMs) {
    view.eventsOpen = state === "open";
    chip.className = `chip ${state === "open" ? "good" : "warn"}`;
    chip.dataset.state = state;
    setText(chip, chipText(state, retryInMs));
    chip.title =
        state === "open"
            ? "Voice levels and output numbers arrive live"
            : "Meters and numbers come from the once-a-second poll until the events reconnect";
}

function onEvent(view, e) {
    if (view.destroyed || e.room !== view.name) return;
    switch (e.type) {
        case "voice_levels":
            view.participants.showLevels(e.levels, e.activeSpeaker);
            break;
        case "active_speaker":
            view.participants.setSpeaker(e.userId);
            break;
        case "participant_joined":
            view.activity(`${e.userId} joined`);
            view.refreshSoon();
            break;
        case "participant_left":
            view.activity(`${e.userId} left (${e.reason.replace("_", " ")})`);
            view.participants.forget(e.userId);
            view.refreshSoon();
            break;
        case "participant_kicked":
            view.activity(`${e.userId} was kicked by ${e.by}`);
            break;
        case "first_video_frame":
            view.activity(`${e.userId}'s video started (${e.width}×${e.height})`);
            break;
        case "output_state": {
            const shown = view.outputs.setState(e.output, e.state, e.attempt, e.error);
            view.activity(`output ${e.output} ${e.state}${e.error ? `: ${e.error}` : ""}`);
            if (!shown) view.refreshSoon();
            break;
        }
        case "output_status":
            view.outputs.showStatus(e);
            break;
        case "room_closed":
            view.activity("the room closed");
            view.showGone(`Room ${view.name} has closed.`);
            break;
        default:
            break;
    }
}

export function createEvents(view) {
    const chip = h(
        "span",
        { class: "chip warn", dataset: { testid: "events-state" }, title: "The events WebSocket" },
        "events: connecting",
    );
    let socket = null; // openEvents' handle while started
    return {
        chip,
        get started() {
            return socket !== null;
        },
        start() {
            socket = openEvents(view.name, view.ctx.token, {
                onState: (state, { retryInMs }) => {
                    if (!view.destroyed) setEventsState(view, chip, state, retryInMs);
                },
                onEvent: (e) => onEvent(view, e),
            });
        },
        close() {
            if (socket) {
                socket.close();
                socket = null;
            }
        },
        setState: (state, retryInMs) => setEventsState(view, chip, state, retryInMs),
    };
}
