// console-room-preview.js — the room page's programme preview: GET …/snapshot about 2.5 times a second, shown in
// the preview card and under the layout editor's boxes, with how old the last frame is.

import { errorSentence, isAbort } from "./api.js";
import { h, messageLine, setText } from "./console-dom.js";

const SNAPSHOT_EVERY_MS = 400;

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
    if (view.destroyed || !preview.lastFrameAt) return;
    const seconds = Math.max(0, Math.round((Date.now() - preview.lastFrameAt) / 100) / 10);
    setText(preview.note, `snapshot ${seconds.toFixed(1)} s ago`);
}

export function createPreview(view) {
    const img = h("img", { alt: `Programme of ${view.name}`, dataset: { testid: "preview" }, draggable: false });
    const note = h("span", { class: "muted small" }, "");
    const frame = h("div", { class: "video-frame preview" }, img);
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
            return preview.running;
        },
        start: () => snapshotLoop(view, preview),
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
            for (const url of preview.liveURLs.splice(0)) URL.revokeObjectURL(url);
        },
    };
}
