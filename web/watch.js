// The viewer page: /watch/{room}#token=<viewer token> plays the room's programme over WHEP.
import { watch } from "./cohost-watch.js";

const room = decodeURIComponent(location.pathname.split("/").pop() || "");
const token = new URLSearchParams(location.hash.slice(1)).get("token");
// The token leaves the address bar (and the history) once read.
history.replaceState(null, "", location.pathname + location.search);
const video = document.getElementById("programme");
const status = document.getElementById("status");
const sound = document.getElementById("sound");

function say(text) {
    status.textContent = text;
}

async function start() {
    if (!token) {
        say("This link has no token: ask the producer for a viewer link.");
        return;
    }
    try {
        const session = await watch({ room, token, video });
        window.cohostWatch = session;
        session.pc.addEventListener("connectionstatechange", () => {
            if (session.pc.connectionState === "connected") say("Live");
            if (session.pc.connectionState === "failed") say("The connection failed.");
        });
        // Browsers start a page's sound only after a gesture: the picture plays muted until then.
        video.muted = true;
        sound.hidden = false;
        sound.addEventListener("click", () => {
            video.muted = false;
            sound.hidden = true;
        });
    } catch (error) {
        say(error.message || String(error));
    }
}

start();
