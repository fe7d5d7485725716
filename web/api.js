// web/api.js — the Cohost HTTP API from a browser page: one fetch wrapper, error sentences, tokens, events.
//
// Used by the producer console (console*.js); the guest join page uses cohost.js alone. The exports below are
// stable; new ones may be added, none will change meaning. Plain ES module, no build step. tokenClaims is
// cohost.js's: one decoder for the console and the join page.
//
//   apiBase() → string
//       The API's origin, e.g. "https://cohost.example". location.origin, unless the page was opened with
//       `?api=<origin>` (kept in sessionStorage "cohost.api" for the tab's life): for development, with the pages
//       served from another origin and `cohost serve --cors-origins <that origin>`. `?api=` (empty) clears it.
//   apiURL(path) → string                  apiBase() + path ("/v1/rooms" → "https://cohost.example/v1/rooms").
//   wsURL(path) → string                   the same as ws:// or wss://.
//
//   api(method, path, options?) → Promise
//       One request. options: { token, json, body, contentType, headers, signal, as }.
//         token  → "Authorization: Bearer <token>" (tokens never go into URLs);
//         json   → the body, JSON-encoded, Content-Type application/json;
//         body + contentType → a raw body (e.g. an SDP offer as application/sdp);
//         as     → "json" (default: the parsed body, null for 204 or an empty body), "text", "blob" or "response".
//       Resolves with the body; rejects with an ApiError for any non-2xx answer or a network failure. An abort
//       through `signal` rejects with the usual DOMException "AbortError" (see isAbort).
//
//   class ApiError extends Error
//       .status  HTTP status (0 when the server could not be reached)
//       .code    the server's error.code ("token_expired", "room_full", …), "network", or "http_<status>"
//       .detail  the server's error.message (a sentence fragment naming the field or the limit), or ""
//       .message errorSentence(this) for the default audience (the console's)
//   isAbort(error) → boolean               true for an aborted request (ignore those).
//
//   errorSentence(errorOrCode, { audience = "admin" | "guest", detail } = {}) → string
//       A sentence a person can act on, for every error code of protocol/openapi.yaml (and "network"). Falls back
//       to the server's message for a code it does not know. audience "guest" words token and kick errors for
//       someone who was sent an invite link rather than someone who runs the server.
//
//   takeToken(storageKey) → string | null
//       The token of `#token=…` in the address bar, if any: stored in sessionStorage[storageKey] and removed from
//       the address bar (history.replaceState; other fragment parameters are kept). Without one, the token stored
//       earlier in this tab, or null. storeToken(key, token) / forgetToken(key) change the stored one.
//   tokenClaims(token) → object | null     the token's claims (iss, sub, room, admin, exp, iat), NOT verified
//                                          (cohost.js's, exported here too).
//   tokenSecondsLeft(token) → number       seconds until exp (negative once expired; Infinity without exp).
//
//   openEvents(room, token, { onEvent(event), onState(state, info) }) → { close() }
//       The room's events WebSocket (protocol/events.schema.json), token as subprotocol:
//       new WebSocket(url, ["cohost.events", "cohost.token." + token]). onEvent gets each parsed event;
//       onState gets "connecting" | "open" | "closed" (and info { attempt, retryInMs }). Reconnects with growing
//       backoff (1 s … 15 s) until close() or a room_closed event. At most 4 sockets per token exist server-side:
//       close the handle when the page no longer needs it.

import { tokenClaims } from "./cohost.js";

export { tokenClaims };

const API_KEY = "cohost.api";

function storage() {
    try {
        return window.sessionStorage;
    } catch {
        return null; // storage disabled: everything still works for this page view
    }
}

function readApiOverride() {
    const params = new URLSearchParams(location.search);
    const s = storage();
    if (params.has("api")) {
        const value = params.get("api").trim().replace(/\/+$/, "");
        if (s) {
            if (value) s.setItem(API_KEY, value);
            else s.removeItem(API_KEY);
        }
        return value || null;
    }
    return (s && s.getItem(API_KEY)) || null;
}

let override = readApiOverride();

export function apiBase() {
    return override || location.origin;
}

export function setApiBase(url) {
    override = url ? String(url).replace(/\/+$/, "") : null;
    const s = storage();
    if (s) {
        if (override) s.setItem(API_KEY, override);
        else s.removeItem(API_KEY);
    }
}

export function apiURL(path) {
    return apiBase() + path;
}

export function wsURL(path) {
    return apiURL(path).replace(/^http(s?):/, "ws$1:");
}

// ------------------------------------------------------------------------------------------------ errors

export class ApiError extends Error {
    constructor(status, code, detail) {
        super("");
        this.name = "ApiError";
        this.status = status;
        this.code = code;
        this.detail = detail || "";
        this.message = errorSentence(this);
    }
}

export function isAbort(error) {
    return !!error && (error.name === "AbortError" || error.code === "aborted");
}

const TOKEN_HELP = "cohost token --key KEY --secret-file FILE --room '*' --user producer --admin";

// code → sentence, or a function of ({ detail, audience, base }) → sentence.
const SENTENCES = {
    network: ({ base }) =>
        `Cannot reach the Cohost server at ${base}. Is cohost serve running, and is this address right?`,
    token_missing: ({ audience }) =>
        audience === "guest"
            ? "This page needs an invite link: ask the producer for one."
            : `No token was sent. Open the console with a link ending in #token=… (make one with ${TOKEN_HELP}).`,
    token_malformed: ({ audience }) =>
        audience === "guest"
            ? "This invite link is damaged: copy the whole link again, or ask the producer for a new one."
            : "That is not a Cohost token (it is malformed): copy the whole output of cohost token.",
    token_bad_signature: ({ audience }) =>
        audience === "guest"
            ? "This invite link is not valid on this server: ask the producer for a new one."
            : "That token's signature does not match: it was signed with a secret this server does not have.",
    token_unknown_key: ({ audience }) =>
        audience === "guest"
            ? "This invite link is not valid on this server: ask the producer for a new one."
            : "That token names an API key this server does not know: --key must be one of the server's --keys.",
    token_expired: ({ audience }) =>
        audience === "guest"
            ? "Your invite link has expired — ask the producer for a new one."
            : `Your admin token has expired — make a new one with ${TOKEN_HELP}.`,
    token_not_yet_valid: "That token is not valid yet (its start time is in the future): check this computer's clock.",
    token_lifetime_too_long:
        "That token lives longer than this server allows (its max_token_ttl): make one with a shorter --ttl.",
    forbidden: ({ audience, detail }) =>
        audience === "guest"
            ? "This invite link does not allow that (it may be for another room)."
            : `This token may not do that${detail ? ` (${detail})` : ""}: the console needs an admin token for the ` +
              `room, or for every room (${TOKEN_HELP}).`,
    kicked: ({ audience }) =>
        audience === "guest"
            ? "The producer removed you from this room. Ask them for a new invite link if that was a mistake."
            : "That user was removed from this room; a token issued before the removal cannot bring them back.",
    room_full: "The room is full: it already has as many participants as its maxParticipants allows.",
    room_exists: "A room of that name is already open: pick another name, or open that room.",
    not_found: ({ detail }) =>
        detail && detail.toLowerCase() !== "not found"
            ? `Not found: ${detail}. It may have just closed or left.`
            : "Not found: this server does not have that (it may have just closed, or the server is older than " +
              "this page).",
    invalid_room: "Room names are 1 to 64 letters, digits, dots, dashes or underscores.",
    invalid_user: "User ids are 1 to 64 letters, digits, dots, dashes or underscores.",
    invalid_ttl: ({ detail }) => `That lifetime is not allowed${detail ? `: ${detail}` : ""}.`,
    invalid_json: ({ detail }) => `The server could not read that request${detail ? `: ${detail}` : ""}.`,
    invalid_preset: ({ detail }) => `Unknown quality preset${detail ? `: ${detail}` : ""}.`,
    invalid_video: ({ detail }) => `Those video settings are not valid${detail ? `: ${detail}` : ""}.`,
    invalid_canvas: ({ detail }) =>
        `Those canvas settings are not valid${detail ? `: ${detail}` : " (colours are #RRGGBB)"}.`,
    invalid_output: ({ detail }) =>
        detail
            ? `That output was refused: ${detail}.`
            : "That output was refused. Outputs are rtmp://host/app/stream, rtmps://…, srt://host:port or " +
              "file://name.flv (.mp4, .ts).",
    output_path_forbidden: ({ detail }) =>
        `That file cannot be written${detail ? ` (${detail})` : ""}: recordings go into the server's recordings ` +
        "directory, under a name that does not exist yet.",
    output_host_forbidden: ({ detail }) =>
        `The server may not push to that host${detail ? ` (${detail})` : ""}: ask the operator to add it to ` +
        "output_hosts.",
    invalid_layout: ({ detail }) => `The layout was refused${detail ? `: ${detail}` : ""}.`,
    invalid_image: ({ detail }) =>
        `That picture was refused${detail ? `: ${detail}` : ""}. Pictures must be PNG files Cohost can decode.`,
    limit_exceeded: ({ detail }) => `That is over a limit${detail ? `: ${detail}` : ""}.`,
    invalid_gain: "Gain must be between 0 and 4.",
    invalid_sdp: ({ detail }) => `The connection offer was refused${detail ? `: ${detail}` : ""}.`,
    ssrc_missing: ({ detail }) => `The connection offer was refused${detail ? `: ${detail}` : ""}.`,
    ssrc_conflict: "The connection clashed with another participant's streams: try joining again.",
    unsupported_media: ({ detail }) =>
        `Your browser offered no audio or video format Cohost can use${detail ? ` (${detail})` : ""}.`,
    unsupported_transport: "This server does not take WebRTC connections (it has no DTLS certificate).",
    not_webrtc: "That participant is not connected over WebRTC.",
    audio_only: "This room is audio-only: it has no picture, so there is no preview, layout or picture to set.",
    body_too_large: "That is too large to send: pictures may be at most about 4 MB (5,600,000 bytes in base64).",
    encoder_failed: "The server could not start the room's encoders: see the server's log.",
    decoder_failed: "The server could not start a decoder for that participant: see the server's log.",
    dtls_failed: "The server could not set up the secure connection: see the server's log.",
    snapshot_failed: "The server could not make a picture of the programme just now.",
    internal: "Something went wrong inside the server: see the server's log.",
    websocket_required: "The events address needs a WebSocket connection.",
    too_many_sockets:
        "This token already has 4 event connections open: close other console tabs, or make another token.",
    etag_mismatch: "The connection changed meanwhile: reconnect.",
    if_match_required: "The request lacked its If-Match header.",
    metrics_token_required: "The metrics need the server's metrics token.",
    aborted: "The request was cancelled.",
};

/** A sentence for an ApiError, an Error, or an error code. */
export function errorSentence(error, { audience = "admin", detail } = {}) {
    let code = error;
    let info = detail;
    if (error && typeof error === "object") {
        code = error.code;
        if (info === undefined) info = error.detail;
        if (!code) return String(error.message || error);
    }
    info = (info || "").trim();
    const entry = SENTENCES[code];
    if (typeof entry === "function") return entry({ detail: info, audience, base: apiBase() });
    if (typeof entry === "string") return entry;
    if (info) return info.charAt(0).toUpperCase() + info.slice(1) + (/[.!?]$/.test(info) ? "" : ".");
    if (typeof code === "string" && code.startsWith("http_")) return `The server answered ${code.slice(5)}.`;
    return `The server refused that (${code}).`;
}

// ------------------------------------------------------------------------------------------------ requests

export async function api(method, path, options = {}) {
    const { token, json, body, contentType, headers = {}, signal, as = "json" } = options;
    const init = { method, headers: { ...headers }, signal, cache: "no-store", credentials: "omit" };
    if (token) init.headers.Authorization = `Bearer ${token}`;
    if (json !== undefined) {
        init.body = JSON.stringify(json);
        init.headers["Content-Type"] = "application/json";
    } else if (body !== undefined) {
        init.body = body;
        if (contentType) init.headers["Content-Type"] = contentType;
    }
    let response;
    try {
        response = await fetch(apiURL(path), init);
    } catch (error) {
        if (isAbort(error)) throw error;
        throw new ApiError(0, "network", "");
    }
    if (!response.ok) {
        let code = `http_${response.status}`;
        let detail = "";
        try {
            const parsed = await response.json();
            if (parsed && parsed.error) {
                code = parsed.error.code || code;
                detail = parsed.error.message || "";
            }
        } catch (error) {
            if (isAbort(error)) throw error;
        }
        throw new ApiError(response.status, code, detail);
    }
    if (as === "response") return response;
    if (as === "blob") return response.blob();
    const text = await response.text();
    if (as === "text") return text;
    return text ? JSON.parse(text) : null;
}

// ------------------------------------------------------------------------------------------------ tokens

export function takeToken(storageKey) {
    const s = storage();
    const hash = location.hash.replace(/^#/, "");
    if (hash) {
        const params = new URLSearchParams(hash);
        const fromHash = params.get("token");
        if (params.has("token")) {
            params.delete("token");
            const rest = params.toString();
            history.replaceState(history.state, "", location.pathname + location.search + (rest ? `#${rest}` : ""));
            if (fromHash) {
                if (s) s.setItem(storageKey, fromHash.trim());
                return fromHash.trim();
            }
        }
    }
    return (s && s.getItem(storageKey)) || null;
}

export function storeToken(storageKey, token) {
    const s = storage();
    if (s) s.setItem(storageKey, token);
}

export function forgetToken(storageKey) {
    const s = storage();
    if (s) s.removeItem(storageKey);
}

export function tokenSecondsLeft(token) {
    const claims = tokenClaims(token);
    if (!claims || typeof claims.exp !== "number") return Infinity;
    return claims.exp - Date.now() / 1000;
}

// ------------------------------------------------------------------------------------------------ events

export function openEvents(room, token, { onEvent = () => {}, onState = () => {} } = {}) {
    let socket = null;
    let closed = false;
    let attempt = 0;
    let timer = null;

    function connect() {
        if (closed) return;
        onState("connecting", { attempt });
        try {
            socket = new WebSocket(wsURL(`/v1/rooms/${encodeURIComponent(room)}/events`), [
                "cohost.events",
                `cohost.token.${token}`,
            ]);
        } catch {
            retry();
            return;
        }
        socket.addEventListener("open", () => {
            if (closed) return;
            attempt = 0;
            onState("open", { attempt });
        });
        socket.addEventListener("message", (message) => {
            if (closed) return;
            let event;
            try {
                event = JSON.parse(message.data);
            } catch {
                return;
            }
            try {
                onEvent(event);
            } finally {
                if (event && event.type === "room_closed") stop();
            }
        });
        socket.addEventListener("close", () => {
            socket = null;
            if (!closed) retry();
        });
        socket.addEventListener("error", () => {
            /* a close follows */
        });
    }

    function retry() {
        attempt += 1;
        const retryInMs = Math.min(15000, 1000 * 2 ** Math.min(attempt - 1, 4));
        onState("closed", { attempt, retryInMs });
        timer = setTimeout(connect, retryInMs);
    }

    function stop() {
        if (closed) return;
        closed = true;
        clearTimeout(timer);
        const s = socket;
        if (s && s.readyState === WebSocket.CONNECTING) {
            // Closing a socket still connecting makes the browser log an error: close it once it opens.
            s.addEventListener("open", () => s.close(1000));
        } else if (s && s.readyState === WebSocket.OPEN) {
            s.close(1000);
        }
        socket = null;
        onState("closed", { attempt, retryInMs: null });
    }

    connect();
    return { close: stop };
}
