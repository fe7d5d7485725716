// docs/client.md's example.js, with the room and the API origin taken from the fragment too
// (#room=…&token=…&api=…), and the call left in window.call for test_join_page.py.
import { join } from "/web/cohost.js";

const args = new URLSearchParams(location.hash.slice(1));
const state = document.getElementById("state");
try {
  const call = await join({ room: args.get("room"), token: args.get("token"), url: args.get("api") });
  window.call = call;
  document.getElementById("room").srcObject = call.remoteStream; // room view + mix-minus, unmuted
  state.textContent = call.pc.connectionState;
  call.on("state", (s) => { state.textContent = s; });
  call.on("levels", (levels) => console.log(levels));
  call.on("kicked", ({ by }) => { state.textContent = `removed by ${by}`; });
  call.on("left", ({ self, reason }) => { if (self) state.textContent = `call over: ${reason}`; });
  document.getElementById("leave").onclick = () => call.leave();
} catch (err) {
  state.textContent = `${err.code} (${err.status}): ${err.message}`;
}
