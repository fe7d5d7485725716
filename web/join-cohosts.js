// join-cohosts.js — the join page's co-host tiles: each co-host's own camera (or screen share, as the large tile)
// in a tile of its own, from the call's receive slots (cohost.js `track` events), with its name, a ring while it
// speaks and a card while its camera is off.

/** A tile's ring lights at or above this voice level (0–100). */
const SPEAKING_LEVEL = 20;

/** The tiles in `box`, made from `template` (a <template> holding one tile). */
export function createCohostTiles(box, template) {
    const cameraOff = new Set(); // co-hosts who said their camera is off

    /** The tile of a co-host's camera or screen share (made when `create`). */
    function tile(userId, create = true, source = "camera") {
        let el = [...box.children].find((t) => t.dataset.userId === userId && t.dataset.source === source);
        if (el || !create) return el || null;
        el = template.content.firstElementChild.cloneNode(true);
        el.dataset.userId = userId;
        el.dataset.source = source;
        resized.observe(el.querySelector("video"));
        el.querySelector(".name").textContent = source === "screen" ? `${userId}'s screen` : userId;
        if (source === "screen") {
            el.classList.add("screen");
            box.prepend(el);
        } else {
            box.append(el);
        }
        box.hidden = false;
        return el;
    }

    function paintCamera(userId) {
        const el = tile(userId, false);
        if (!el) return;
        const off = cameraOff.has(userId);
        el.querySelector(".card").hidden = !off;
        el.classList.toggle("camera-off", off);
    }

    function show({ userId, source, mid, stream }) {
        const el = tile(userId, true, source);
        el.dataset.mid = mid;
        const video = el.querySelector("video");
        if (video.srcObject !== stream) {
            video.srcObject = stream;
            video.play().catch(() => {}); // muted: allowed
        }
        paintCamera(userId);
        sizeSlot(el);
    }

    let call = null;
    const sizing = new Map(); // mid → the timer of a size not sent yet
    /** Tells Cohost the tile's size (device pixels), once it has settled for 200 ms: a simulcast sender's layer
     *  that covers it is sent. */
    function sizeSlot(el) {
        const video = el.querySelector("video");
        const mid = el.dataset.mid;
        if (!call || !mid || !video.clientWidth) return;
        clearTimeout(sizing.get(mid));
        sizing.set(
            mid,
            setTimeout(() => {
                sizing.delete(mid);
                const scale = devicePixelRatio || 1;
                call.setSlotSize(mid, { width: video.clientWidth * scale, height: video.clientHeight * scale })
                    .catch(() => {}); // the slot stays at the size it had
            }, 200),
        );
    }
    const resized = new ResizeObserver((entries) => {
        for (const entry of entries) sizeSlot(entry.target.closest("[data-mid]") || entry.target);
    });

    function hide({ userId, source, mid }) {
        const el = tile(userId, false, source);
        // The slot may show this co-host again already, or another slot may have them.
        if (!el || el.dataset.mid !== mid) return;
        el.remove();
        box.hidden = box.children.length === 0;
    }

    return {
        /** Follows a call's slots, levels and camera states. */
        attach(joined) {
            call = joined;
            call.on("track", show);
            call.on("trackEnded", hide);
            call.on("levels", (levels) => {
                for (const [id, level] of Object.entries(levels)) {
                    tile(id, false)?.classList.toggle("speaking", level >= SPEAKING_LEVEL);
                }
            });
            call.on("updated", ({ userId, camera }) => {
                if (camera) cameraOff.delete(userId);
                else cameraOff.add(userId);
                paintCamera(userId);
            });
        },
        /** The call ended: no tiles. */
        clear() {
            box.replaceChildren();
            box.hidden = true;
            cameraOff.clear();
        },
    };
}
