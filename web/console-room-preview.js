// console-room-preview.js — the room page's programme preview: the programme itself over WHEP (its own H.264, muted)
// when this browser decodes the room's profile, else GET …/snapshot about 2.5 times a second; shown in the preview
// card and, as a still every 400 ms, under the layout editor's boxes, with how old the last frame is.

import { apiBase, errorSentence, isAbort } from "./api.js";
import { h, messageLine, setText } from "./console-dom.js";
import { watch } from "./cohost-watch.js";

const SNAPSHOT_EVERY_MS = 400;
/** How long the WHEP picture may take to show before the preview falls back to snapshots. */
const WHEP_PICTURE_MS = 5000;

function loaded(img) {
    return img.decode ? img.decode().catch(() => {}) : Promise.resolve();
}

/** Shows one snapshot in the preview and the editor; older blob URLs go once both show the new one. */
async function showFrame(view, preview, blob) {
    const url = URL.createObjectURL(blob);
    preview.liveURLs.push(url);
    preview.img.src = url;
    const editor = view.editor;
    if (editor) editor.setBackdrop(url);
    await Promise.all([loaded(preview.img), editor ? loaded(editor.backdrop) : null]);
    while (preview.liveURLs.length > 1 && preview.liveURLs[0] !== url) URL.revokeObjectURL(preview.liveURLs.shift());
    preview.lastFrameAt = Date.now();
    preview.failures = 0;
    preview.status.hide();
}

/** One snapshot, then the next one SNAPSHOT_EVERY_MS after this one started; stops while the room is gone. */
async function snapshotLoop(view, preview) {
    preview.running = !(view.destroyed || view.gone || (view.info && view.info.audioOnly));
    if (!preview.running) return;
    const started = performance.now();
    let stop = false;
    if (!document.hidden && view.info) {
        try {
            const blob = await view.call("GET", "/snapshot", { as: "blob" });
            if (view.destroyed) return;
            await showFrame(view, preview, blob);
        } catch (error) {
            if (isAbort(error) || view.destroyed) return;
            if (error.status === 401) {
                view.ctx.authFailed(error);
                return;
            }
            // 404: the room closed (the room poll says so and restarts the loop when it is back)
            stop = error.status === 404 || error.code === "audio_only";
            if (!stop) {
                preview.failures += 1;
                if (preview.failures >= 3) preview.status.error(errorSentence(error));
            }
        }
    }
    if (stop || view.destroyed || view.gone) {
        preview.running = false;
        return;
    }
    const wait = Math.max(0, SNAPSHOT_EVERY_MS - (performance.now() - started));
    preview.timer = setTimeout(() => snapshotLoop(view, preview), preview.failures ? Math.max(wait, 2000) : wait);
}

function paintAge(view, preview) {
    if (view.destroyed) return;
    if (preview.session) {
        setText(preview.note, "live (WHEP)");
        return;
    }
    if (!preview.lastFrameAt) return;
    const seconds = Math.max(0, Math.round((Date.now() - preview.lastFrameAt) / 100) / 10);
    setText(preview.note, `snapshot ${seconds.toFixed(1)} s ago`);
}

/** The programme over WHEP in the preview's video; true once its picture shows. Any failure (no H.264 of the room's
 *  profile in this browser, a refusal) leaves the preview to the snapshots. */
async function startWHEP(view, preview) {
    let session = null;
    try {
        session = await watch({ room: view.name, token: view.ctx.token, url: apiBase(), video: preview.video });
        // A video line the answer rejected (no H.264 of the room's profile here): snapshots at once.
        const line = session.pc.getTransceivers().find((t) => t.receiver.track.kind === "video");
        if (!line || ["inactive", "stopped"].includes(line.currentDirection)) throw new Error("no picture");
        const deadline = performance.now() + WHEP_PICTURE_MS;
        while (!preview.video.videoWidth && performance.now() < deadline && !view.destroyed) {
            await new Promise((r) => setTimeout(r, 100));
        }
        if (!preview.video.videoWidth || view.destroyed) throw new Error("no picture");
    } catch {
        if (session) await session.stop();
        return false;
    }
    preview.session = session;
    preview.video.hidden = false;
    preview.img.hidden = true;
    preview.status.hide();
    stillLoop(view, preview);
    return true;
}

/** The layout editor's backdrop: a still of the WHEP picture every SNAPSHOT_EVERY_MS, drawn here (no request). */
function stillLoop(view, preview) {
    if (view.destroyed || !preview.session) return;
    const editor = view.editor;
    const video = preview.video;
    if (editor && video.videoWidth) {
        const canvas = document.createElement("canvas");
        canvas.width = video.videoWidth;
        canvas.height = video.videoHeight;
        canvas.getContext("2d").drawImage(video, 0, 0);
        canvas.toBlob(async (blob) => {
            if (!blob || view.destroyed) return;
            const url = URL.createObjectURL(blob);
            preview.liveURLs.push(url);
            editor.setBackdrop(url);
            await loaded(editor.backdrop);
            while (preview.liveURLs.length > 1 && preview.liveURLs[0] !== url) {
                URL.revokeObjectURL(preview.liveURLs.shift());
            }
        });
    }
    preview.lastFrameAt = Date.now();
    preview.timer = setTimeout(() => stillLoop(view, preview), SNAPSHOT_EVERY_MS);
}

/** WHEP first (once per page), then snapshots when it cannot show the picture. */
async function startPreview(view, preview) {
    if (preview.session) return;
    preview.running = !(view.destroyed || view.gone || (view.info && view.info.audioOnly));
    if (!preview.running) return;
    if (!preview.triedWHEP) {
        preview.triedWHEP = true;
        if (await startWHEP(view, preview)) return;
    }
    snapshotLoop(view, preview);
}

export function createPreview(view) {
    const img = h("img", { alt: `Programme of ${view.name}`, dataset: { testid: "preview" }, draggable: false });
    const video = h("video", { dataset: { testid: "preview-video" }, autoplay: true, playsInline: true });
    video.muted = true;
    video.hidden = true;
    const note = h("span", { class: "muted small" }, "");
    const frame = h("div", { class: "video-frame preview" }, img, video);
    const status = messageLine();
    const el = h(
        "section",
        { class: "card preview-card" },
        h("header", {}, h("h2", {}, "Programme"), note),
        frame,
        status.el,
    );
    const preview = {
        img,
        video,
        session: null, // the WHEP session while the preview plays it
        triedWHEP: false,
        note,
        status,
        liveURLs: [], // blob URLs still shown somewhere, oldest first
        lastFrameAt: 0,
        failures: 0,
        running: false,
        timer: null,
    };
    const ageTimer = setInterval(() => paintAge(view, preview), 500);
    return {
        el,
        img,
        get running() {
            return preview.running || Boolean(preview.session);
        },
        start: () => startPreview(view, preview),
        /** Cancels the next snapshot; start() begins again once `running` is false. */
        stop: () => clearTimeout(preview.timer),
        /** The canvas's own shape (presets are portrait), never taller than most of the window. */
        fit(canvas) {
            frame.style.aspectRatio = `${canvas.width} / ${canvas.height}`;
            frame.style.maxWidth = `calc(65vh * ${canvas.width / canvas.height})`;
        },
        destroy() {
            clearTimeout(preview.timer);
            clearInterval(ageTimer);
            if (preview.session) preview.session.stop();
            preview.session = null;
            for (const url of preview.liveURLs.splice(0)) URL.revokeObjectURL(url);
        },
    };
}
