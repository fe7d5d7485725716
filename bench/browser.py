"""A headless Chromium participant for the latency part: a page draws the bench clock's code (the same 32 blocks and
complement rows as latency.draw) onto a 640x360 canvas every 5 ms, sends canvas.captureStream(30) over WebRTC
(sendonly VP8) to Cohost, and this process does the HTTP join for it (no CORS involved). Playwright drives Debian's
chromium; the bench runs inside a network namespace with only loopback (bench.py), so ICE pairs 127.0.0.1 only."""
import http.client
import json
import time

PAGE = """<!doctype html><html><body><script>
const W = 640, H = 360, BITS = 32, BW = 20, ROW1 = 20, ROW2 = 60, RH = 28;
const canvas = document.createElement('canvas');
canvas.width = W; canvas.height = H;
document.body.appendChild(canvas);
const g = canvas.getContext('2d');
window.epochMs = 0;
function draw() {
  const ms = (Date.now() - window.epochMs) >>> 0;
  g.fillStyle = 'rgb(128,128,128)'; g.fillRect(0, 0, W, H);
  for (let i = 0; i < BITS; i++) {
    const bit = (ms >>> (BITS - 1 - i)) & 1;
    g.fillStyle = bit ? '#fff' : '#000'; g.fillRect(i * BW, ROW1, BW, RH);
    g.fillStyle = bit ? '#000' : '#fff'; g.fillRect(i * BW, ROW2, BW, RH);
  }
}
setInterval(draw, 5);
window.makeOffer = async () => {
  window.pc = new RTCPeerConnection();
  const track = canvas.captureStream(30).getVideoTracks()[0];
  const tx = window.pc.addTransceiver(track, {direction: 'sendonly'});
  const vp8 = RTCRtpSender.getCapabilities('video').codecs.filter(c => /vp8|rtx/i.test(c.mimeType));
  tx.setCodecPreferences(vp8);
  await window.pc.setLocalDescription(await window.pc.createOffer());
  // Gathering may never say "complete" here (a TCP candidate that cannot finish): the host candidate is enough.
  await new Promise(done => {
    if (window.pc.iceGatheringState === 'complete') return done();
    setTimeout(done, 2000);
    window.pc.onicegatheringstatechange = () => { if (window.pc.iceGatheringState === 'complete') done(); };
  });
  return window.pc.localDescription.sdp;
};
window.answer = async sdp => { await window.pc.setRemoteDescription({type: 'answer', sdp}); };
window.state = () => window.pc ? window.pc.connectionState : 'none';
window.sent = async () => {
  let bytes = 0, frames = 0;
  (await window.pc.getStats()).forEach(r => {
    if (r.type === 'outbound-rtp' && r.kind === 'video') { bytes += r.bytesSent; frames += r.framesEncoded; }
  });
  return {bytes, frames};
};
</script></body></html>"""

ARGS = ["--use-fake-ui-for-media-stream", "--allow-loopback-in-peer-connection", "--no-sandbox",
        "--disable-features=WebRtcHideLocalIpsWithMdns",
        "--disable-background-timer-throttling", "--disable-renderer-backgrounding"]


class BrowserParticipant:
    """`join` puts the page in `room` as `user`; `close` ends the browser. `epoch` is the bench clock's (s)."""

    def __init__(self, epoch):
        from playwright.sync_api import sync_playwright  # imported here: only this part needs it
        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
        self.page = self._browser.new_page()
        self.page.set_content(PAGE)
        self.page.evaluate(f"window.epochMs = {int(epoch * 1000)}")

    def join(self, cohost, room, user):
        from lib import make_token
        offer = self.page.evaluate("window.makeOffer()")
        token = make_token(cohost.key, cohost.secret, room, user)
        conn = http.client.HTTPConnection("127.0.0.1", cohost.http_port, timeout=10)
        conn.request("POST", f"/v1/rooms/{room}/participants", offer.encode(),
                     {"Authorization": f"Bearer {token}", "Content-Type": "application/sdp"})
        response = conn.getresponse()
        answer = response.read().decode()
        if response.status != 201:
            raise RuntimeError(f"browser join: {response.status} {answer}")
        self.page.evaluate("sdp => window.answer(sdp)", answer)
        end = time.monotonic() + 15
        while time.monotonic() < end:
            state = self.page.evaluate("window.state()")
            if state == "connected":
                return
            if state in ("failed", "closed"):
                break
            time.sleep(0.1)
        raise RuntimeError(f"the browser's PeerConnection did not connect (state {state})")

    def sent(self):
        return self.page.evaluate("window.sent()")

    def close(self):
        try:
            self._browser.close()
        finally:
            self._playwright.stop()
