// cohost.js: join a Cohost room from a browser, over WebRTC. No dependencies; typed by cohost.d.ts,
// documented in docs/client.md. Integrators load this file alone, so it imports nothing; the console's api.js
// imports its tokenClaims rather than keeping a second one, and cohost-watch.js (WHEP playback) its offer path.
//
//   import { join } from "/web/cohost.js";
//   const call = await join({ room: "show", token });
//   video.srcObject = call.remoteStream;
//   call.on("levels", (levels) => …);   call.on("left", ({ self, reason }) => …);
//   call.on("track", ({ userId, source, stream }) => …);   // with join({ slots: 3 }): each co-host's own camera
//   call.leave();

/** A refusal of the API ({"error":{"code","message"}}: its code, the HTTP status), a network failure (code
 *  "network", status 0), or a camera/microphone failure (code "media", the browser's DOMException as `cause`). */
export class CohostError extends Error {
    constructor(message, { code, status = 0, cause } = {}) {
        super(message, cause ? { cause } : undefined);
        this.name = "CohostError";
        this.code = code;
        this.status = status;
    }
}

/** The claims of a JWT, unverified (for display: the server checks the token). null when unreadable or not an
 *  object. */
export function tokenClaims(token) {
    try {
        const part = String(token).split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
        const bytes = Uint8Array.from(atob(part + "=".repeat((4 - (part.length % 4)) % 4)), (c) => c.charCodeAt(0));
        const claims = JSON.parse(new TextDecoder().decode(bytes));
        return claims && typeof claims === "object" ? claims : null;
    } catch {
        return null;
    }
}

const GATHER_CAP_MS = 2000; // Chromium may never report "complete"; host candidates come at once.

/** The camera's simulcast layers, smallest first: quarter, half and full size (libwebrtc sends three from a
 *  960×540 capture up, two from 640×360). */
const SIMULCAST_ENCODINGS = [
    { rid: "q", scaleResolutionDownBy: 4, maxBitrate: 150_000 },
    { rid: "h", scaleResolutionDownBy: 2, maxBitrate: 500_000 },
    { rid: "f", maxBitrate: 1_700_000 },
];

/** Joins `room` with a participant (or admin) `token`. Resolves to a Call once the answer is applied. */
export async function join({
    room,
    token,
    url = location.origin,
    video = true,
    audio = true,
    events = true,
    slots = 0,
    screen = null,
    monitor = false,
    simulcast = false,
    name = null,
} = {}) {
    if (!room || !token) throw new CohostError("join() needs a room and a token", { code: "invalid_argument" });
    const base = String(url).replace(/\/+$/, "");
    const owned = []; // tracks this module asked getUserMedia for: stopped on leave()
    const tracks = {};
    try {
        for (const [kind, want] of [["audio", audio], ["video", video]]) {
            if (want instanceof MediaStreamTrack) tracks[kind] = want;
            else if (want) owned.push((tracks[kind] = await capture(kind, want)));
        }
    } catch (err) {
        owned.forEach((t) => t.stop());
        throw err;
    }

    const pc = new RTCPeerConnection({ iceServers: await iceServers(base, room, token) });
    const localStream = new MediaStream(Object.values(tracks));
    const call = new Call(pc, { room, token, base, localStream, owned, userId: tokenClaims(token)?.sub ?? null });
    try {
        // Always sendrecv, even without a track: the room view and the mix come back, and a track can be
        // put in later with replaceTrack() without a new offer.
        for (const kind of ["audio", "video"]) {
            const track = tracks[kind];
            const init = { direction: "sendrecv", streams: track ? [localStream] : [] };
            // Simulcast: the camera three times (RFC 8853); Cohost gives each receiver and the mixer the layer it needs
            // and asks for the unneeded ones to be paused ("layers" events).
            if (kind === "video" && track && simulcast) init.sendEncodings = SIMULCAST_ENCODINGS.map((e) => ({ ...e }));
            pc.addTransceiver(track || kind, init);
        }
        // A screen share (a track from getDisplayMedia): its own sendonly line, marked a=content:slides in the offer.
        const screenTransceiver =
            screen instanceof MediaStreamTrack ? pc.addTransceiver(screen, { direction: "sendonly" }) : null;
        // Receive slots: Cohost forwards another participant's own camera on each (protocol/sdp.md).
        const slotTransceivers = [];
        for (let i = 0; i < Math.min(16, Math.max(0, slots | 0)); i++) {
            slotTransceivers.push(pc.addTransceiver("video", { direction: "recvonly" }));
        }
        await pc.setLocalDescription(await pc.createOffer());
        for (const t of slotTransceivers) call.slotStreams.set(t.mid, new MediaStream([t.receiver.track]));
        await gathered(pc, GATHER_CAP_MS); // Cohost is ICE-lite and takes no trickle: the offer carries the candidates
        // Percent-encoded (a space as %20, not the form encoding's "+", which a query keeps as it is).
        const query = [];
        if (monitor) query.push("monitor=true");
        if (name) query.push(`name=${encodeURIComponent(name)}`);
        const response = await postOffer(
            `${base}/v1/rooms/${encodeURIComponent(room)}/participants${query.length ? "?" + query.join("&") : ""}`,
            token,
            screenTransceiver ? markSlides(pc.localDescription.sdp, screenTransceiver.mid) : pc.localDescription.sdp,
        );
        await pc.setRemoteDescription({ type: "answer", sdp: await response.text() });
    } catch (err) {
        call.close(null);
        throw err;
    }
    if (events) call.openEvents();
    return call;
}

/** A joined call. Events (EventTarget, or on(name, fn) with the detail): levels, activeSpeaker, joined, left,
 *  kicked, state; see cohost.d.ts. */
export class Call extends EventTarget {
    #token;
    #base;
    #owned; // the tracks join() captured: stopped when the call ends
    #socket = null;

    constructor(pc, { room, token, base, localStream, owned, userId }) {
        super();
        Object.assign(this, { pc, room, userId, localStream, remoteStream: new MediaStream() });
        this.slotStreams = new Map(); // mid → the MediaStream of that receive slot
        this.slots = new Map(); // mid → { userId, source } it shows now, as the "slots" events tell
        this.choices = {}; // mid → userId: the slots chosen with subscribe()
        this.slotSizes = {}; // mid → { width, height }: the largest picture wanted in each slot (setSlotSize)
        this.pausedLayers = []; // the camera's simulcast layers Cohost asked to stop ("layers" events)
        this.ended = false;
        this.participants = new Set(); // others present, as the events tell
        this.muted = { audio: false, video: false };
        this.#token = token;
        this.#base = base;
        this.#owned = owned;
        pc.addEventListener("track", (e) => {
            if (!this.slotStreams.has(e.transceiver?.mid)) this.remoteStream.addTrack(e.track);
        });
        // A TURN server that refuses the credentials (401) or cannot be reached: said at once, since the
        // connection itself only fails once every other path has timed out too.
        // Kept too: most come while join() gathers, before anyone can listen.
        this.relayErrors = [];
        pc.addEventListener("icecandidateerror", (e) => {
            if (!/^turns?:/.test(e.url || "")) return;
            const error = { url: e.url, code: e.errorCode, text: e.errorText };
            this.relayErrors.push(error);
            this.emit("relayError", error);
        });
        pc.addEventListener("connectionstatechange", () => {
            this.emit("state", pc.connectionState);
            // A second for the events socket to tell why (kicked, room closed) before calling it a failure.
            if (pc.connectionState === "failed") setTimeout(() => this.close("failed"), 1000);
        });
    }

    /** Calls fn(detail) on each `name` event; returns a function that stops it. */
    on(name, fn) {
        const listener = (e) => fn(e.detail);
        this.addEventListener(name, listener);
        return () => this.removeEventListener(name, listener);
    }

    emit(name, detail) {
        this.dispatchEvent(new CustomEvent(name, { detail }));
    }

    /** Leaves the room: closes the PeerConnection (Cohost removes the participant on DTLS close_notify). Before
     *  the connection is up there is no DTLS session to close: then it asks the API to remove you. */
    leave() {
        if (!this.ended && this.pc.connectionState !== "connected" && this.userId) {
            const room = encodeURIComponent(this.room);
            const url = `${this.#base}/v1/rooms/${room}/participants/${encodeURIComponent(this.userId)}`;
            fetch(url, { method: "DELETE", headers: { Authorization: "Bearer " + this.#token }, keepalive: true })
                .catch(() => {}); // the server's timeout removes us anyway
        }
        this.close("left");
    }

    muteAudio() { this.setMuted("audio", true); }
    unmuteAudio() { this.setMuted("audio", false); }
    muteVideo() { this.setMuted("video", true); }
    unmuteVideo() { this.setMuted("video", false); }

    /** Mutes or unmutes the camera or microphone here, and tells the room (PATCH: the others see a camera-off card,
     *  the slots showing it stop). */
    setMuted(kind, muted) {
        const changed = this.muted[kind] !== muted;
        this.muted[kind] = muted;
        for (const t of this.localTracks(kind)) t.enabled = !muted;
        if (changed && !this.ended && this.userId) {
            const room = encodeURIComponent(this.room);
            fetch(`${this.#base}/v1/rooms/${room}/participants/${encodeURIComponent(this.userId)}`, {
                method: "PATCH",
                headers: { Authorization: "Bearer " + this.#token, "Content-Type": "application/json" },
                body: JSON.stringify(kind === "video" ? { camera: !muted } : { microphone: !muted }),
            }).catch(() => {}); // the local mute holds anyway
        }
    }

    /** Chooses what a slot shows: `{ [mid]: userId }` (the others stay automatic); the sizes set with setSlotSize
     *  stay. Resolves to the server's answer ({ slots, chosen }). */
    async subscribe(choices) {
        this.choices = { ...choices };
        return this.putSubscriptions();
    }

    /** The largest picture wanted in a slot (its tile's size in device pixels): of a simulcast sender, Cohost sends
     *  the layer that covers it, not a larger one (adaptive stream). null: no limit. */
    async setSlotSize(mid, size) {
        return this.setSlotSizes({ [mid]: size });
    }

    /** setSlotSize for several slots at once, `{ [mid]: size | null }`, in one request. */
    async setSlotSizes(sizes) {
        let changed = false;
        for (const [mid, size] of Object.entries(sizes)) {
            const now = this.slotSizes[mid];
            const next = size ? { width: Math.round(size.width), height: Math.round(size.height) } : null;
            if ((now?.width ?? null) === (next?.width ?? null) && (now?.height ?? null) === (next?.height ?? null)) {
                continue;
            }
            changed = true;
            if (next) this.slotSizes[mid] = next;
            else delete this.slotSizes[mid];
        }
        return changed ? this.putSubscriptions() : undefined;
    }

    async putSubscriptions() {
        const room = encodeURIComponent(this.room);
        const clamp = (v) => Math.min(7680, Math.max(16, v | 0));
        const mids = new Set([...Object.keys(this.choices), ...Object.keys(this.slotSizes)]);
        const slots = [...mids].map((mid) => {
            const entry = { mid };
            if (this.choices[mid]) Object.assign(entry, { userId: this.choices[mid], source: "camera" });
            const size = this.slotSizes[mid];
            if (size) Object.assign(entry, { maxWidth: clamp(size.width), maxHeight: clamp(size.height) });
            return entry;
        });
        const response = await fetch(
            `${this.#base}/v1/rooms/${room}/participants/${encodeURIComponent(this.userId)}/subscriptions`,
            {
                method: "PUT",
                headers: { Authorization: "Bearer " + this.#token, "Content-Type": "application/json" },
                body: JSON.stringify({ slots }),
            },
        );
        const body = await response.json().catch(() => ({}));
        if (!response.ok) {
            throw new CohostError(body.error?.message || `HTTP ${response.status}`, {
                code: body.error?.code || "http",
                status: response.status,
            });
        }
        return body;
    }

    /** A `slots` event about this call: "trackEnded" for each stream a slot stops showing, "track" for each it
     *  starts showing (the slot's MediaStream; its picture follows with the stream's next keyframe). */
    updateSlots(slots) {
        for (const { mid, userId, source } of slots) {
            const before = this.slots.get(mid);
            if (before?.userId === userId && before?.source === source) continue;
            if (before) this.emit("trackEnded", { ...before, mid });
            if (userId) {
                this.slots.set(mid, { userId, source });
                this.emit("track", { userId, source, mid, stream: this.slotStreams.get(mid) });
            } else {
                this.slots.delete(mid);
            }
        }
    }

    /** Stops sending the camera's simulcast layers `paused` and sends the others (RTCRtpSender.setParameters). */
    async applyLayers(paused) {
        this.pausedLayers = paused;
        const sender = this.sender("video");
        if (!sender) return;
        const params = sender.getParameters();
        if (!params.encodings?.some((e) => e.rid)) return;
        let changed = false;
        for (const e of params.encodings) {
            const active = !paused.includes(e.rid);
            if (e.active !== active) {
                e.active = active;
                changed = true;
            }
        }
        if (!changed) return;
        try {
            await sender.setParameters(params);
        } catch {
            /* a later "layers" event tries again */
        }
        this.emit("layers", { paused });
    }

    /** Sends `track` instead of the current track of its kind (another camera or microphone), without a new offer.
     *  The track takes the call's mute state. Returns the track it replaced (stop it when you are done with it). */
    async replaceTrack(track) {
        const kind = track.kind;
        const sender = this.sender(kind);
        const old = sender?.track || this.localStream.getTracks().find((t) => t.kind === kind) || null;
        track.enabled = !this.muted[kind];
        if (sender) await sender.replaceTrack(track);
        if (old) this.localStream.removeTrack(old);
        this.localStream.addTrack(track);
        const owned = this.#owned.indexOf(old);
        if (owned >= 0) this.#owned.splice(owned, 1); // the caller has it now
        return old;
    }

    sender(kind) {
        const t = this.pc.getTransceivers().find((t) => t.receiver.track?.kind === kind);
        return t ? t.sender : null;
    }

    localTracks(kind) {
        const set = new Set(this.localStream.getTracks().filter((t) => t.kind === kind));
        const sent = this.sender(kind)?.track;
        if (sent) set.add(sent);
        return [...set];
    }

    /** The room's events WebSocket; the token travels as a subprotocol, never in the URL. */
    openEvents() {
        const wsUrl = this.#base.replace(/^http/, "ws") + `/v1/rooms/${encodeURIComponent(this.room)}/events`;
        const socket = new WebSocket(wsUrl, ["cohost.events", "cohost.token." + this.#token]);
        this.#socket = socket;
        // A slots event published before the socket opened is not replayed: read what the slots show now.
        if (this.slotStreams.size > 0) {
            socket.addEventListener("open", () => this.readSlots(), { once: true });
        }
        socket.addEventListener("message", (e) => {
            let event;
            try { event = JSON.parse(e.data); } catch { return; }
            this.handleEvent(event);
        });
    }

    async readSlots() {
        const room = encodeURIComponent(this.room);
        try {
            const response = await fetch(
                `${this.#base}/v1/rooms/${room}/participants/${encodeURIComponent(this.userId)}/subscriptions`,
                { headers: { Authorization: "Bearer " + this.#token } },
            );
            if (response.ok && !this.ended) this.updateSlots((await response.json()).slots || []);
        } catch {
            /* the next slots event tells */
        }
    }

    handleEvent(event) {
        if (this.ended) return;
        const me = this.userId;
        // A name comes with participant_joined only: those already present when the events began are known by id.
        const seen = (id, name = null) => {
            if (id === me || (this.participants.has(id) && !name)) return;
            this.participants.add(id);
            this.emit("joined", { userId: id, name });
        };
        switch (event.type) {
            case "voice_levels":
                for (const id of Object.keys(event.levels || {})) seen(id); // the first one tells who is already here
                this.emit("levels", event.levels || {});
                break;
            case "active_speaker":
                this.emit("activeSpeaker", event.userId);
                break;
            case "slots":
                if (event.userId === me) this.updateSlots(event.slots || []);
                break;
            case "layers":
                if (event.userId === me && event.source === "camera") this.applyLayers(event.paused || []);
                break;
            case "participant_updated":
                this.emit("updated", { userId: event.userId, camera: event.camera, microphone: event.microphone });
                break;
            case "participant_joined":
                seen(event.userId, event.name || null);
                break;
            case "participant_kicked":
                if (event.userId === me) {
                    this.emit("kicked", { by: event.by });
                    this.close("kicked");
                }
                break;
            case "participant_left":
                if (event.userId === me) this.close(event.reason);
                else if (this.participants.delete(event.userId)) {
                    this.emit("left", { userId: event.userId, reason: event.reason, self: false });
                }
                break;
            case "room_closed":
                this.close("room_closed");
                break;
        }
    }

    /** Ends the call once: PeerConnection, events socket and the tracks this module captured. `reason` null: no
     *  event (a join that failed). */
    close(reason) {
        if (this.ended) return;
        this.ended = true;
        const socket = this.#socket;
        // Closed while still connecting, Chromium logs an error: close it once open instead.
        if (socket?.readyState === WebSocket.CONNECTING) socket.addEventListener("open", () => socket.close(1000));
        else socket?.close(1000);
        if (this.pc.signalingState !== "closed") this.pc.close();
        this.#owned.forEach((t) => t.stop());
        if (reason !== null) {
            this.emit("state", "closed");
            this.emit("left", { userId: this.userId, reason, self: true });
        }
    }
}

// ---------------------------------------------------------------------------------------------------- helpers

async function capture(kind, constraints) {
    if (!navigator.mediaDevices?.getUserMedia) {
        throw new CohostError("Camera and microphone need a secure page (https:// or localhost).", { code: "media" });
    }
    try {
        const stream = await navigator.mediaDevices.getUserMedia({ [kind]: constraints });
        return stream.getTracks()[0];
    } catch (err) {
        throw new CohostError(`${kind === "audio" ? "Microphone" : "Camera"}: ${err.message || err.name}`, {
            code: "media",
            cause: err,
        });
    }
}

/** The offer with `a=content:slides` (RFC 4796) in the media section of `mid`: Cohost takes that line as the screen
 *  share. Only the copy sent to Cohost is marked; the browser's own description stays as it made it. */
function markSlides(sdp, mid) {
    const sections = sdp.split(/\r\n(?=m=)/);
    return sections
        .map((section) => (section.includes(`\r\na=mid:${mid}\r\n`) ? section.replace(`\r\na=mid:${mid}\r\n`,
            `\r\na=mid:${mid}\r\na=content:slides\r\n`) : section))
        .join("\r\n");
}

/** The STUN and TURN servers the server hands this token, TURN credentials included, for an RTCPeerConnection
 *  (GET /v1/rooms/{room}/ice-servers). None when it names none or cannot say: the host and ICE-TCP paths still work. */
export async function iceServers(base, room, token) {
    try {
        const response = await fetch(`${base}/v1/rooms/${encodeURIComponent(room)}/ice-servers`, {
            headers: { Authorization: "Bearer " + token },
            cache: "no-store",
        });
        if (!response.ok) return [];
        const body = await response.json();
        return Array.isArray(body.iceServers) ? body.iceServers : [];
    } catch {
        return [];
    }
}

/** Resolves once `pc` has gathered its candidates (true), or after `capMs` (false). For cohost-watch.js too. */
export function gathered(pc, capMs = GATHER_CAP_MS) {
    if (pc.iceGatheringState === "complete") return Promise.resolve(true);
    return new Promise((resolve) => {
        const done = (complete) => {
            clearTimeout(timer);
            pc.removeEventListener("icegatheringstatechange", check);
            resolve(complete);
        };
        const check = () => pc.iceGatheringState === "complete" && done(true);
        const timer = setTimeout(() => done(false), capMs);
        pc.addEventListener("icegatheringstatechange", check);
    });
}

/** fetch with the Bearer token; an answer other than 2xx becomes a CohostError with the API's code and message. */
export async function postOffer(url, token, sdp) {
    let response;
    try {
        response = await fetch(url, {
            method: "POST",
            headers: { "Content-Type": "application/sdp", Authorization: "Bearer " + token },
            body: sdp,
        });
    } catch (err) {
        throw new CohostError("Cannot reach the server.", { code: "network", cause: err });
    }
    if (response.ok) return response;
    let error = {};
    try { error = (await response.json()).error || {}; } catch { /* not JSON */ }
    throw new CohostError(error.message || `HTTP ${response.status}`, {
        code: error.code || "http",
        status: response.status,
    });
}
