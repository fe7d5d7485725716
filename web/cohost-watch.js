// cohost-watch.js: play a Cohost room's programme from a browser over WHEP, nothing sent. Typed by cohost.d.ts
// (watch), documented in docs/whep.md and docs/client.md; it shares cohost.js's errors and offer path.
//
//   import { watch } from "/web/cohost-watch.js";
//   const session = await watch({ room: "show", token: viewerToken, video });
//   await session.stop();

import { CohostError, gathered, iceServers, postOffer } from "./cohost.js";

/** Plays `room`'s programme over WHEP with any token of the room (a viewer token included): its mix and its own
 *  H.264, nothing sent. Resolves to { pc, stream, stop() } once the answer is applied; `video` (an element) is given
 *  the stream. stop() ends the session (DELETE of the answer's Location). */
export async function watch({ room, token, url = location.origin, video = null } = {}) {
    if (!room || !token) throw new CohostError("watch() needs a room and a token", { code: "invalid_argument" });
    const base = String(url).replace(/\/+$/, "");
    const pc = new RTCPeerConnection({ iceServers: await iceServers(base, room, token) });
    const stream = new MediaStream();
    pc.addEventListener("track", (e) => stream.addTrack(e.track));
    let location = null;
    try {
        pc.addTransceiver("audio", { direction: "recvonly" });
        pc.addTransceiver("video", { direction: "recvonly" });
        await pc.setLocalDescription(await pc.createOffer());
        await gathered(pc);
        const response = await postOffer(`${base}/whep/${encodeURIComponent(room)}`, token, pc.localDescription.sdp);
        location = response.headers.get("Location");
        await pc.setRemoteDescription({ type: "answer", sdp: await response.text() });
    } catch (err) {
        pc.close();
        throw err;
    }
    if (video) video.srcObject = stream;
    return {
        pc,
        stream,
        async stop() {
            // The session first, while its transport is still up (closed first, the server may end it itself).
            const at = location;
            location = null;
            if (at) {
                await fetch(new URL(at, base), { method: "DELETE", headers: { Authorization: "Bearer " + token } })
                    .catch(() => {});
            }
            pc.close();
        },
    };
}
