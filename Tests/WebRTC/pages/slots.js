// A viewer with receive slots and nothing to send (#room=…&token=…&api=…&slots=N): each slot's stream plays in
// #slot as the `track` events say, and the call is left in window.call for test_join_page.py to subscribe.
import { join } from "/web/cohost.js";

const args = new URLSearchParams(location.hash.slice(1));
const state = document.getElementById("state");
try {
  const call = await join({
    room: args.get("room"), token: args.get("token"), url: args.get("api"),
    audio: false, video: false, slots: Number(args.get("slots") || 1),
  });
  window.call = call;
  state.textContent = call.pc.connectionState;
  call.on("state", (s) => { state.textContent = s; });
  call.on("track", ({ userId, stream }) => {
    document.getElementById("slot").srcObject = stream;
    document.getElementById("shown").textContent = userId;
  });
  call.on("trackEnded", () => { document.getElementById("shown").textContent = "nobody"; });
} catch (err) {
  state.textContent = `${err.code} (${err.status}): ${err.message}`;
}
