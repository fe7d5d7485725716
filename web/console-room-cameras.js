// console-room-cameras.js — each participant's own camera in its card: the console joins the room as a monitor
// (an admin's hidden receiver: `?monitor=true`, in no layout, mix, list or event; protocol/sdp.md) with receive
// slots, and Cohost forwards every participant's camera to them.

import { apiBase } from "./api.js";
import { join } from "./cohost.js";

/** Cameras shown at most (the monitor's receive slots). */
const SLOTS = 8;
/** The picture a card needs at most (CSS pixels): of a simulcast sender, the layer covering it is sent. */
const CARD = { width: 320, height: 180 };

/** Joins once the room is known to have video; `showCamera(userId, stream | null)` puts a camera in a card. */
export function createCameras(view, showCamera) {
    let call = null;
    let starting = false;
    let stopped = false;

    async function start() {
        if (call || starting || stopped || !view.info || view.info.audioOnly) return;
        starting = true;
        try {
            const joined = await join({
                room: view.name,
                token: view.ctx.token,
                url: apiBase(),
                audio: false,
                video: false,
                slots: SLOTS,
                monitor: true,
            });
            if (stopped) {
                joined.leave();
                return;
            }
            call = joined;
            const scale = devicePixelRatio || 1;
            const size = { width: CARD.width * scale, height: CARD.height * scale };
            call.setSlotSizes(Object.fromEntries([...call.slotStreams.keys()].map((mid) => [mid, size]))).catch(
                () => {}, // the slots stay unsized: the largest layers come
            );
            call.on("track", ({ userId, source, stream }) => source === "camera" && showCamera(userId, stream));
            call.on("trackEnded", ({ userId, source }) => source === "camera" && showCamera(userId, null));
            call.on("left", ({ self }) => {
                if (!self) return;
                call = null; // the room closed or the connection failed: joined again at the next refresh
            });
        } catch {
            // No WebRTC here (an http:// page on another host, a server without DTLS): the cards show no camera.
            stopped = true;
        } finally {
            starting = false;
        }
    }

    return {
        start,
        stop() {
            stopped = true;
            call?.leave();
            call = null;
        },
    };
}
