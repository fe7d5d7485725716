// join-text.js — what the guest join page says: a sentence for each refusal of the API and each camera or
// microphone failure, worded for a guest who was sent a link; how a call ended; the connection's state.

const API_SENTENCES = {
    token_missing: "This link has no invitation in it. Ask the producer for a new link.",
    token_malformed: "This link's invitation is damaged. Copy the whole link, or ask the producer for a new one.",
    token_bad_signature: "This invitation was not issued for this server. Ask the producer for a new link.",
    token_unknown_key: "This invitation was not issued for this server. Ask the producer for a new link.",
    token_expired: "This invitation has expired. Ask the producer for a new link.",
    token_not_yet_valid: "This invitation is not valid yet. Try again in a minute, or check your device's clock.",
    token_lifetime_too_long:
        "This invitation is valid for longer than the server allows. Ask the producer for a new link.",
    forbidden: "This invitation does not let you into this room. Ask the producer for the right link.",
    kicked:
        "The producer removed you from this room, so this link cannot be used to come back. " +
        "Ask the producer if you should rejoin.",
    room_full: "The room is full. Try again later, or ask the producer to make room.",
    not_found: "This room does not exist or has closed. Check the link with the producer.",
    invalid_room: "The room name in this link is not valid. Check the link with the producer.",
    limit_exceeded: "The server has too many rooms open right now. Try again later.",
    ssrc_conflict: "Your connection clashed with another one. Please join again.",
    unsupported_media:
        "Your browser offered no sound or picture format this server takes. Try a current Chrome, Firefox or Safari.",
    unsupported_transport: "This server does not take browser connections.",
    invalid_sdp: "The server could not read your browser's connection offer. Try a current Chrome, Firefox or Safari.",
    ssrc_missing: "The server could not read your browser's connection offer. Try a current Chrome, Firefox or Safari.",
    body_too_large: "Your browser's connection offer was too large for the server.",
    network: "Cannot reach the server. Check your internet connection and try again.",
};

export function sentence(err) {
    if (err?.code === "media") return mediaSentence(err.cause || err);
    if (err?.code && API_SENTENCES[err.code]) return API_SENTENCES[err.code];
    if (err?.status >= 500) return `The server ran into a problem (${err.message}). Try again in a moment.`;
    return `Could not join the room: ${err?.message || err}`;
}

export function mediaSentence(err) {
    switch (err?.name) {
        case "NotAllowedError":
        case "SecurityError":
            return (
                "The browser is not allowing this page to use your camera and microphone. Allow them in the site " +
                "settings (the icon left of the address), then reload the page."
            );
        case "NotFoundError":
            return "No camera or microphone was found. You can still join and listen.";
        case "NotReadableError":
            return "Your camera or microphone is being used by another application. Close it, then reload the page.";
        case "OverconstrainedError":
            return "The chosen device is not available any more. Pick another one.";
        default:
            return navigator.mediaDevices
                ? `Your camera or microphone could not be started (${err?.message || err?.name || err}).`
                : "This page needs a secure connection (https://) to use your camera and microphone.";
    }
}

/** A TURN server's refusal while the call connects (an icecandidateerror's code). */
export function relaySentence(code) {
    return code === 401
        ? "The relay server refused this link's credentials (TURN 401). " +
              "Ask the producer to check the server's TURN secret."
        : `The relay server could not be reached (TURN error ${code}). Trying the other ways in…`;
}

/** reason → [title, text, whether Join again is offered] */
export const ENDINGS = {
    left: ["You left the room", "Thanks for joining.", true],
    kicked: [
        "You were removed from the room",
        "The call has ended. If this was a mistake, ask the producer for a new link.",
        false,
    ],
    room_closed: ["The room has closed", "The producer closed the room. The call has ended.", false],
    replaced: [
        "You joined from somewhere else",
        "You joined this room from another tab or device, so the call here has ended.",
        true,
    ],
    timeout: [
        "The connection was lost",
        "The server stopped hearing from this device. Check your connection and join again.",
        true,
    ],
    failed: [
        "The connection was lost",
        "The connection to the room failed. Check your connection and join again.",
        true,
    ],
};

export const STATES = {
    new: "Connecting…",
    connecting: "Connecting…",
    connected: "Connected",
    disconnected: "Reconnecting…",
    failed: "Connection failed",
    closed: "Not connected",
};
