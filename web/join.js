// The guest join page: /join/{room}#token=<participant token>.
// Camera and microphone preview with device pickers, Join (through cohost.js), each co-host's own camera in a tile
// (receive slots), the room view and the room's sound, voice meters, mute toggles, Leave, and a clear message when the
// call ends.
import { join, tokenClaims } from "./cohost.js";
import { createCohostTiles } from "./join-cohosts.js";
import { startMeter } from "./join-meter.js";
import { createPeopleList } from "./join-people.js";
import { ENDINGS, mediaSentence, relaySentence, sentence, STATES } from "./join-text.js";

const $ = (id) => document.getElementById(id);
const app = $("app");

const page = {
    room: null,
    token: null,
    userId: null,
    api: location.origin,
    tracks: { audio: null, video: null }, // the page's own camera and microphone tracks
    muted: { audio: false, video: false },
    devicesReady: false, // Join waits for the camera and microphone (or for knowing there are none)
    call: null,
    meter: null, // the local voice meter (WebAudio)
    simulcast: true, // a camera of 960×540 or more in three layers (?simulcast=0: one)
};

/** Co-hosts shown in tiles of their own at most (the receive slots the page asks for). */
const SLOTS = 3;
const cohosts = createCohostTiles($("cohosts"), $("cohost-template"));
const people = createPeopleList({
    list: $("participants"),
    template: $("participant-template"),
    title: $("people-title"),
    self: () => page.userId,
    selfName: () => $("display-name").value.trim(),
    inCall: () => app.dataset.phase === "call",
});

// ------------------------------------------------------------------------------------------- link and token

function readLink() {
    const query = new URLSearchParams(location.search);
    const match = location.pathname.match(/\/join\/([^/]+)\/?$/);
    const pathRoom = match ? decodeURIComponent(match[1]) : query.get("room");
    // A development page on another origin than the API may name it: ?api=http://127.0.0.1:7880 (the server's
    // Content-Security-Policy keeps a page it serves to its own origin anyway).
    if (query.get("api")) page.api = query.get("api").replace(/\/+$/, "");
    page.simulcast = query.get("simulcast") !== "0";

    // The token: from the link's fragment into this tab's sessionStorage (a reload keeps working), and out of the
    // address bar (a screenshot or a copied address does not leak it).
    const key = "cohost.token:" + location.pathname + location.search;
    const fromLink = new URLSearchParams(location.hash.slice(1)).get("token");
    if (fromLink) history.replaceState(history.state, "", location.pathname + location.search);
    try {
        if (fromLink) sessionStorage.setItem(key, fromLink);
        page.token = sessionStorage.getItem(key) || fromLink;
    } catch {
        page.token = fromLink; // storage refused (a strict privacy mode): this load only
    }
    const claims = page.token ? tokenClaims(page.token) : null;
    page.userId = claims?.sub || null;
    // A name in the token is the producer's and wins; otherwise the guest's own, remembered on this browser.
    const nameField = $("display-name");
    if (claims?.name) {
        nameField.value = claims.name;
        nameField.disabled = true;
    } else {
        try {
            nameField.value = localStorage.getItem("cohost.name") || "";
        } catch {
            /* storage refused: the field starts empty */
        }
    }
    page.room = pathRoom || (claims?.room !== "*" ? claims?.room : null) || null;

    $("room-name").textContent = page.room || "No room";
    $("user-name").textContent = page.userId ? `as ${page.userId}` : "";
    document.title = page.room ? `${page.room} · Cohost` : "Cohost";

    if (!page.token) {
        return (
            "This link has no invitation in it. Open the whole link you were sent, or ask the producer for a new " +
            "one."
        );
    }
    if (!claims || typeof claims.sub !== "string") {
        return "This link's invitation is damaged. Copy the whole link, or ask the producer for a new one.";
    }
    if (!page.room) return "This link names no room. Ask the producer for a new link.";
    if (claims.room && claims.room !== "*" && claims.room !== page.room) {
        return (
            `This invitation is for the room “${claims.room}”, not “${page.room}”. ` +
            "Ask the producer for the right link."
        );
    }
    if (typeof claims.exp === "number" && claims.exp * 1000 + 60_000 < Date.now()) {
        // The server decides (this device's clock may be wrong); say it now rather than after the camera started.
        notice("This invitation seems to have expired. If joining fails, ask the producer for a new link.", "info");
    }
    return null;
}

function notice(text, kind = "error") {
    const el = $("notice");
    el.textContent = text || "";
    el.dataset.kind = kind;
    el.hidden = !text;
}

// ------------------------------------------------------------------------------------------- camera and microphone

const AUDIO = { echoCancellation: true, noiseSuppression: true, autoGainControl: true };

function constraints(kind, deviceId) {
    const base = kind === "audio" ? { ...AUDIO } : { width: { ideal: 1280 }, height: { ideal: 720 } };
    return deviceId ? { ...base, deviceId: { exact: deviceId } } : base;
}

/** Both devices in one prompt; when that fails, each alone (a machine without a camera can still talk). */
async function openDevices() {
    if (!navigator.mediaDevices?.getUserMedia) {
        throw Object.assign(new Error("no mediaDevices"), { name: "SecurityError" });
    }
    try {
        const stream = await navigator.mediaDevices.getUserMedia({
            audio: constraints("audio"),
            video: constraints("video"),
        });
        return { audio: stream.getAudioTracks()[0] || null, video: stream.getVideoTracks()[0] || null };
    } catch (both) {
        if (both.name === "NotAllowedError" || both.name === "SecurityError") throw both;
        const out = { audio: null, video: null };
        for (const kind of ["audio", "video"]) {
            try {
                out[kind] = (await navigator.mediaDevices.getUserMedia({ [kind]: constraints(kind) })).getTracks()[0];
            } catch { /* that kind is missing */ }
        }
        if (!out.audio && !out.video) throw both;
        return out;
    }
}

async function startDevices() {
    page.devicesReady = false;
    try {
        const tracks = await openDevices();
        for (const kind of ["audio", "video"]) if (tracks[kind]) await useTrack(tracks[kind]);
        if (!tracks.audio || !tracks.video) {
            notice(
                tracks.audio
                    ? "No camera was found: you will join with your voice only."
                    : "No microphone was found: the room will not hear you.",
                "info",
            );
        }
    } catch (err) {
        notice(mediaSentence(err));
    }
    await listDevices();
  navigator.mediaDevices?.addEventListener?.("devicechange", listDevices);
  page.devicesReady = true;
  setPhase(app.dataset.phase);
}

/** Makes `track` the page's track of its kind: preview, meter, mute state, and the call's sender. */
async function useTrack(track) {
    const kind = track.kind;
    const old = page.tracks[kind];
    page.tracks[kind] = track;
    if (page.call) await page.call.replaceTrack(track); // takes the call's mute state
    else track.enabled = !page.muted[kind];
    if (old && old !== track) old.stop();
    if (kind === "video") $("preview").srcObject = new MediaStream([track]);
    else page.meter = startMeter(track, (level) => people.setLevel(page.userId, level), page.meter);
    renderToggles();
}

async function listDevices() {
    if (!navigator.mediaDevices?.enumerateDevices) return;
    const devices = await navigator.mediaDevices.enumerateDevices();
    const pickers = [
        ["video", $("camera-select"), "Camera"],
        ["audio", $("mic-select"), "Microphone"],
    ];
    for (const [kind, select, label] of pickers) {
        const current = page.tracks[kind]?.getSettings().deviceId;
        const options = devices.filter((d) => d.kind === kind + "input" && d.deviceId);
        select.replaceChildren(
            ...options.map((d, i) => {
                const option = new Option(d.label || `${label} ${i + 1}`, d.deviceId);
                option.selected = d.deviceId === current;
                return option;
            }),
        );
        if (!options.length) select.append(new Option(`No ${label.toLowerCase()}`, ""));
        select.disabled = options.length === 0 || app.dataset.phase === "ended" || app.dataset.phase === "joining";
    }
}

async function pickDevice(kind, deviceId) {
    if (!deviceId || deviceId === page.tracks[kind]?.getSettings().deviceId) return;
    try {
        const stream = await navigator.mediaDevices.getUserMedia({ [kind]: constraints(kind, deviceId) });
        await useTrack(stream.getTracks()[0]);
        notice(null);
    } catch (err) {
        notice(mediaSentence(err));
        await listDevices(); // back to the device in use
    }
}

function stopDevices() {
    for (const kind of ["audio", "video"]) {
    page.tracks[kind]?.stop();
    page.tracks[kind] = null;
    }
    $("preview").srcObject = null;
    page.meter?.stop();
}

// ------------------------------------------------------------------------------------------- the call

/** The guest's display name for the join (the labels on the programme and the lists show it); null: the user id. */
function displayName() {
    const field = $("display-name");
    if (field.disabled) return null; // the token's own name
    const name = field.value.trim().slice(0, 64);
    try {
        if (name) localStorage.setItem("cohost.name", name);
    } catch {
        /* not remembered */
    }
    return name || null;
}

async function joinRoom() {
    setPhase("joining");
    notice(null);
    let call;
    const name = displayName();
    try {
        call = await join({
            room: page.room,
            token: page.token,
            url: page.api,
            audio: page.tracks.audio || false,
            video: page.tracks.video || false,
            slots: SLOTS,
            name,
            // libwebrtc sends three layers from a 960×540 capture up; a smaller camera goes as one stream.
            simulcast: page.simulcast && (page.tracks.video?.getSettings().width ?? 0) >= 960,
        });
    } catch (err) {
        setPhase("setup");
        notice(sentence(err));
        if (err?.code === "kicked") showKicked(false);
        return;
    }
    page.call = call;
    if (name) people.add(page.userId, true, name);
    for (const kind of ["audio", "video"]) call.setMuted(kind, page.muted[kind]);
    call.on("state", (state) => setCallState(state));
    const relayRefused = ({ code }) => {
        if (call.pc.connectionState !== "connected") notice(relaySentence(code));
    };
    call.relayErrors.slice(-1).forEach(relayRefused);
    call.on("relayError", relayRefused);
    call.on("levels", (levels) => {
        for (const [id, level] of Object.entries(levels)) if (id !== page.userId) people.setLevel(id, level);
    });
    cohosts.attach(call);
    call.on("activeSpeaker", (id) => {
        people.markSpeaker(id);
    });
    call.on("joined", ({ userId, name }) => people.add(userId, true, name));
    call.on("left", ({ userId, self, reason }) => (self ? ended(reason) : people.remove(userId)));
    call.on("kicked", () => showKicked(true));
    playRoom(call.remoteStream);
    if (matchMedia("(max-width: 899px)").matches) $("devices").open = false; // the call first on a phone
    setPhase("call");
    setCallState(call.pc.connectionState);
}

function playRoom(stream) {
    const view = $("room-view");
    $("view-wait").hidden = false; // until the first picture (the "resize" listener in start())
    view.srcObject = new MediaStream(stream.getVideoTracks());
    view.play().catch(() => {}); // muted: allowed; the audio element below carries the sound

    // Played unmuted: Chromium feeds a remote track to WebAudio and getStats' audio energy only while it plays.
    const audio = $("room-audio");
    audio.srcObject = new MediaStream(stream.getAudioTracks());
    audio.play().then(
        () => {
            $("play-sound").hidden = true;
        },
        () => {
            $("play-sound").hidden = false;
        },
    );
}

function leaveRoom() {
  page.call?.leave(); // the "left" event (self) ends the page's call
}

function ended(reason) {
    const [title, text, canRejoin] = ENDINGS[reason] || ENDINGS.failed;
    page.call = null;
    $("ended-title").textContent = title;
    $("ended-text").textContent = text;
    $("rejoin").hidden = !canRejoin;
    if (reason === "kicked") showKicked(true);
    for (const el of [$("room-view"), $("room-audio")]) el.srcObject = null;
    cohosts.clear();
    people.removeOthers();
    stopDevices(); // the camera light goes off
    setCallState("closed");
    setPhase("ended");
}

function showKicked(inCall) {
    $("kicked").hidden = false;
    $("kicked").textContent = inCall
        ? "The producer removed you from the room."
        : "The producer removed you from this room earlier; this link cannot be used to come back.";
    if (!inCall) {
        setPhase("ended");
        $("ended-title").textContent = "You were removed from the room";
        $("ended-text").textContent = "";
        $("rejoin").hidden = true;
        notice(null);
        stopDevices();
    }
}

async function rejoin() {
    $("kicked").hidden = true;
    $("devices").open = true;
    setPhase("setup");
    await startDevices();
}

// ------------------------------------------------------------------------------------------- rendering

function setPhase(phase) {
    app.dataset.phase = phase;
    const inCall = phase === "call";
    $("join").hidden = inCall || phase === "ended";
    $("join").disabled = phase !== "setup" || !page.devicesReady;
    $("join").textContent = phase === "joining" ? "Joining…" : "Join";
    $("leave").hidden = !inCall;
    $("programme").hidden = !inCall;
    $("ended").hidden = phase !== "ended";
    // Not while joining: the offer is being made with the tracks of now.
    for (const id of ["camera-select", "mic-select"]) {
        $(id).disabled = phase === "ended" || phase === "joining" || !$(id).options.length || !$(id).value;
    }
    renderToggles();
    people.renderTitle();
}

function setCallState(state) {
    app.dataset.callState = state;
    const status = $("status");
    status.hidden = app.dataset.phase !== "call";
    status.textContent = STATES[state] || state;
    status.dataset.state = state;
}

function renderToggles() {
    const toggles = [
        ["audio", "mic", "Mute mic", "Unmute mic"],
        ["video", "cam", "Stop camera", "Start camera"],
    ];
    for (const [kind, id, on, off] of toggles) {
        const button = $(id);
        button.textContent = page.muted[kind] ? off : on;
        button.setAttribute("aria-pressed", String(page.muted[kind]));
        button.disabled = !page.tracks[kind] || app.dataset.phase === "ended";
    }
    $("camera-off").hidden = !(page.muted.video || !page.tracks.video);
}

function toggle(kind) {
    page.muted[kind] = !page.muted[kind];
    if (page.call) page.call.setMuted(kind, page.muted[kind]);
    else if (page.tracks[kind]) page.tracks[kind].enabled = !page.muted[kind];
    renderToggles();
}

// ------------------------------------------------------------------------------------------- start

function start() {
    $("join").addEventListener("click", joinRoom);
    $("leave").addEventListener("click", leaveRoom);
    $("programme").addEventListener("click", () => {
        // Pressed: the programme is hidden.
        const shown = $("programme").getAttribute("aria-pressed") === "true";
        $("programme").setAttribute("aria-pressed", String(!shown));
        $("programme").textContent = shown ? "Hide the programme" : "Show the programme";
        document.querySelector(".view").hidden = !shown;
    });
    $("rejoin").addEventListener("click", rejoin);
    $("mic").addEventListener("click", () => toggle("audio"));
    $("cam").addEventListener("click", () => toggle("video"));
    $("camera-select").addEventListener("change", (e) => pickDevice("video", e.target.value));
    $("mic-select").addEventListener("change", (e) => pickDevice("audio", e.target.value));
    const view = $("room-view");
    const showView = () => {
        $("view-wait").hidden = view.videoWidth > 0;
    };
    view.addEventListener("resize", showView);
    view.addEventListener("playing", showView);
    const soundPlays = () => {
        $("play-sound").hidden = true;
    };
    $("play-sound").addEventListener("click", () => $("room-audio").play().then(soundPlays, () => {}));
    addEventListener("pagehide", () => page.call?.leave());

    const problem = readLink();
    if (page.userId) people.add(page.userId);
    if (problem) {
        app.dataset.phase = "blocked";
        notice(problem);
        return;
    }
    setPhase("setup");
    startDevices();
}

start();
