"""WHEP playback of a room's programme (POST /whep/{room}) against a real `cohost serve`.

aiortc watches a constrained-baseline room as a viewer: it gets the programme's picture (the sender's green) and its
sound (the sender's 440 Hz), answered in the programme's own H.264 profile, and the viewer never appears in the room.
Chromium opens /watch/{room}#token=… (web/watch.html) in a room whose one region shows a sender burning its wall-clock
time into its picture; the page's picture and sound play, and the time read back from the newest picture Chromium
shows is at most 400 ms behind (loopback).

Run from this directory: python3 -m unittest -v test_whep   (or Tests/WebRTC/run.sh test_whep)
"""

import asyncio
import fractions
import os
import statistics
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True

import harness  # noqa: E402

harness.enter_network_namespace()

import av  # noqa: E402
import browser  # noqa: E402
import numpy as np  # noqa: E402
import peers  # noqa: E402
from playwright.async_api import async_playwright  # noqa: E402

CONNECT_TIMEOUT = 15.0


class BurnedClockTrack(peers.PacedTrack):
    """640×360 mid grey with 16 bits of the wall clock's millisecond in 80×80 blocks (two rows of 8, white for 1),
    the layout of Tests/TestSupport/BurnedTime.swift, 30 frames a second."""

    kind = "video"
    fps = 30

    def _seconds(self, index):
        return index / self.fps

    async def recv(self):
        index = await self._next_index()
        img = np.full((360, 640, 3), 128, dtype=np.uint8)
        code = int(time.time() * 1000) & 0xFFFF
        for bit in range(16):
            x0, y0 = (bit % 8) * 80, 40 + (bit // 8) * 100
            img[y0:y0 + 80, x0:x0 + 80] = 235 if (code >> bit) & 1 else 16
        frame = av.VideoFrame.from_ndarray(img, format="rgb24")
        frame.pts = int(index * 90000 / self.fps)
        frame.time_base = fractions.Fraction(1, 90000)
        return frame


READ_CLOCK = """() => new Promise((resolve) => {
  const v = document.getElementById("programme");
  const read = () => {
    if (!v.videoWidth) return null;
    const c = document.createElement("canvas");
    c.width = 640; c.height = 360;
    const g = c.getContext("2d");
    g.drawImage(v, 0, 0, 640, 360);
    let code = 0;
    for (let bit = 0; bit < 16; bit++) {
      const x = (bit % 8) * 80 + 40, y = 40 + Math.floor(bit / 8) * 100 + 40;
      const d = g.getImageData(x, y, 1, 1).data;
      const luma = (d[0] + d[1] + d[2]) / 3;
      if (luma > 200) code |= 1 << bit; else if (luma >= 50) return null;
    }
    return code;
  };
  // At the moment the newest frame is presented (none within a second: nothing plays).
  const timer = setTimeout(() => resolve(null), 1000);
  v.requestVideoFrameCallback(() => {
    clearTimeout(timer);
    const now = Date.now();
    const code = read();
    resolve(code === null ? -1 : ((now - code) & 0xFFFF));
  });
})"""

STATS = """() => window.cohostWatch ? window.cohostWatch.pc.getStats().then((report) => {
  const out = {state: window.cohostWatch.pc.connectionState,
    answer: window.cohostWatch.pc.remoteDescription.sdp.split(String.fromCharCode(10)).filter((l) => l.startsWith("m=") || l.startsWith("a=fmtp") || l.startsWith("a=rtpmap") || l.startsWith("a=send") || l.startsWith("a=recv")).join(" | "),
    offer: window.cohostWatch.pc.localDescription.sdp.split(String.fromCharCode(10)).filter((l) => l.startsWith("m=") || (l.startsWith("a=fmtp") && l.includes("profile-level-id"))).join(" | ")};
  report.forEach((s) => {
    if (s.type === "inbound-rtp") out[s.kind] = {framesDecoded: s.framesDecoded || 0,
      audioLevel: s.audioLevel || 0, totalAudioEnergy: s.totalAudioEnergy || 0, codecId: s.codecId};
    if (s.type === "codec") out["codec:" + s.id] = s.mimeType + " " + (s.sdpFmtpLine || "");
  });
  return out;
}) : null"""


class WHEPTests(unittest.IsolatedAsyncioTestCase):
    cohost = None

    @classmethod
    def setUpClass(cls):
        cls.cohost = harness.cohost_with_pages([])

    @classmethod
    def tearDownClass(cls):
        harness.stop_all(cls.cohost)

    async def asyncSetUp(self):
        harness.relax_slow_callback_warning()
        self.peers = []
        self.room = harness.room_for_test(self, width=25)

    async def asyncTearDown(self):
        for p in self.peers:
            try:
                await asyncio.wait_for(p.close(), 5)
            except Exception:
                pass

    def diag(self, *extra):
        return "\n".join([str(x) for x in extra] + [
            f"room: {self.cohost.room(self.room)}", "cohost log (tail):", self.cohost.output()[-3000:]])

    async def sender(self, peer, user="anchor"):
        offer = await peer.make_offer()
        r = await self.cohost.acall("POST", f"/v1/rooms/{self.room}/participants",
                                    self.cohost.token(self.room, user), offer, content_type="application/sdp")
        self.assertEqual(r.status, 201, r)
        await peer.accept(r.text)
        self.assertTrue(await peer.wait_connected(CONNECT_TIMEOUT), self.diag("sender not connected"))

    def viewer_token(self):
        return harness.mint_token({"iss": harness.KEY, "sub": "watcher", "room": self.room, "viewer": True,
                                   "iat": int(time.time()), "exp": int(time.time()) + 600})

    async def test_an_aiortc_viewer_gets_the_programmes_picture_and_sound_and_is_no_participant(self):
        r = self.cohost.create_room({"name": self.room, "canvas": {"width": 320, "height": 180, "fps": 15},
                                     "video": {"profile": "baseline"}, "returnVideo": "none"})
        self.assertEqual(r.status, 201, r)
        anchor = peers.Peer(tone_hz=440, colour=(0, 160, 0), gate=None)
        self.peers.append(anchor)
        await self.sender(anchor)

        viewer = peers.Peer(direction="recvonly")
        self.peers.append(viewer)
        offer = await viewer.make_offer()
        r = await self.cohost.acall("POST", f"/whep/{self.room}", self.viewer_token(), offer,
                                    content_type="application/sdp")
        self.assertEqual(r.status, 201, self.diag(r))
        location = r.headers.get("location", "")
        self.assertTrue(location.startswith(f"/whep/{self.room}/whep-"), r.headers)
        # The programme's own profile (constrained baseline here), and nothing received from the viewer.
        video = next(s for m, s in harness.sdp_media_sections(r.text) if m.startswith("m=video"))
        self.assertTrue(any("profile-level-id=42c0" in l for l in video), r.text)
        self.assertIn("a=sendonly", video, r.text)
        await viewer.accept(r.text)
        self.assertTrue(await viewer.wait_connected(CONNECT_TIMEOUT), self.diag("viewer not connected"))

        got = await harness.await_until(
            lambda: viewer.sinks.get("video") and viewer.sinks["video"].frames > 20
            and viewer.sinks.get("audio") and len(viewer.sinks["audio"].audio) > 100, 15)
        self.assertTrue(got, self.diag({k: s.frames for k, s in viewer.sinks.items()}))
        self.assertEqual(viewer.sinks["video"].size, (320, 180))
        levels = harness.tone_levels_db(viewer.sinks["audio"].recent_audio(2), 48000, [440, 660])
        self.assertGreater(levels[440], levels[660] + 20, levels)
        room = self.cohost.room(self.room)
        self.assertEqual([p["userId"] for p in room["participants"]], ["anchor"], room)
        self.assertEqual(room.get("viewers"), 1, room)

        # A viewer token cannot join; the session ends with a DELETE of its Location.
        joined = await self.cohost.acall("POST", f"/v1/rooms/{self.room}/participants", self.viewer_token(),
                                         await peers.Peer().make_offer(), content_type="application/sdp")
        self.assertEqual(joined.status, 403, joined)
        gone = await self.cohost.acall("DELETE", location, self.viewer_token())
        self.assertEqual(gone.status, 200, gone)
        self.assertEqual(self.cohost.room(self.room).get("viewers"), 0)
        again = await self.cohost.acall("DELETE", location, self.viewer_token())
        self.assertEqual(again.status, 404, again)

    async def test_chromium_plays_the_watch_page_within_400ms_of_the_sender(self):
        r = self.cohost.create_room({
            # Main profile: Debian's Chromium offers H.264 constrained baseline, main and high 4:4:4, not high.
            "name": self.room, "canvas": {"width": 640, "height": 360, "fps": 30}, "returnVideo": "none",
            "video": {"profile": "main"},
            "layout": {"mode": "custom", "regions": [{"userId": "anchor", "x": 0, "y": 0, "width": 640,
                                                       "height": 360}]}})
        self.assertEqual(r.status, 201, r)
        anchor = peers.Peer(tone_hz=440, gate=None, video=False)
        anchor.picture = BurnedClockTrack()
        anchor.pc.addTransceiver(anchor.picture, direction="sendrecv")
        self.peers.append(anchor)
        await self.sender(anchor)

        wav = os.path.join(tempfile.mkdtemp(prefix="cohost-whep-"), "silence.wav")
        harness.write_tone_wav(wav, 1000, seconds=2, amplitude=0.0)
        playwright = await async_playwright().start()
        try:
            chromium = await browser.launch(playwright, wav)
            page = await (await chromium.new_context(viewport={"width": 640, "height": 360})).new_page()
            errors = []
            browser.record_errors(page, errors)
            await page.goto(f"{self.cohost.base}/watch/{self.room}#token={self.viewer_token()}")
            async def live():
                return await page.evaluate("() => document.getElementById('status').textContent") == "Live"
            playing = await harness.await_until(live, 15)
            self.assertTrue(playing, self.diag("the page did not go live", errors))
            self.assertNotIn("#token", page.url, "the token leaves the address bar")
            # The sound plays after a gesture, as a viewer's click gives it.
            await page.click("#sound")
            delays, unreadable = [], 0
            for _ in range(40):
                d = await page.evaluate(READ_CLOCK)
                if d is not None and 0 <= d < 10_000:
                    delays.append(d)
                else:
                    unreadable += 1
                await asyncio.sleep(0.1)
            stats = await page.evaluate(STATS)
            harness.note(f"WHEP in Chromium: behind the sender {sorted(delays)} ms; stats {stats}")
            self.assertGreaterEqual(len(delays), 20, self.diag(f"readable pictures: {len(delays)}, not: {unreadable}",
                                                               stats, errors))
            self.assertGreater(stats["video"]["framesDecoded"], 30, stats)
            self.assertGreater(stats["audio"]["totalAudioEnergy"], 0.01, (sorted(delays), stats))
            self.assertTrue(any(str(v).startswith("video/H264") and "profile-level-id=4d" in str(v)
                                for k, v in stats.items() if k.startswith("codec:")), stats)
            self.assertLessEqual(statistics.median(delays), 400, sorted(delays))
            print(f"\n  WHEP in Chromium: the newest picture {sorted(delays)} ms behind the sender", file=sys.stderr)
            await chromium.close()
        finally:
            await playwright.stop()


    async def test_the_consoles_preview_plays_the_programme_over_whep(self):
        r = self.cohost.create_room({"name": self.room, "canvas": {"width": 320, "height": 180, "fps": 15},
                                     "video": {"profile": "main"}, "returnVideo": "none"})
        self.assertEqual(r.status, 201, r)
        anchor = peers.Peer(tone_hz=440, colour=(0, 160, 0), gate=None)
        self.peers.append(anchor)
        await self.sender(anchor)
        wav = os.path.join(tempfile.mkdtemp(prefix="cohost-whep-"), "silence.wav")
        harness.write_tone_wav(wav, 1000, seconds=2, amplitude=0.0)
        playwright = await async_playwright().start()
        try:
            chromium = await browser.launch(playwright, wav)
            page = await (await chromium.new_context(viewport={"width": 1280, "height": 800})).new_page()
            await page.goto(f"{self.cohost.base}/rooms/{self.room}#token={self.cohost.admin()}")
            video = page.locator("[data-testid=preview-video]")

            async def playing():
                return await video.evaluate("v => !v.hidden && v.videoWidth") == 320

            self.assertTrue(await harness.await_until(playing, 20), self.diag("the preview plays no WHEP picture"))
            self.assertTrue(await page.locator("[data-testid=preview]").evaluate("i => i.hidden"))
            room = self.cohost.room(self.room)
            self.assertEqual((room["viewers"], [p["userId"] for p in room["participants"]]), (1, ["anchor"]), room)
            # The picture is the sender's green (its 4:3 picture pillarboxed in the 16:9 canvas: columns 4 to 27 of
            # 32). Its white bar, 16 of 320 pixels wide, may cover any one point, so the middle row is read across
            # the picture and nearly all of it must be green.
            row = await video.evaluate("""v => { const c = document.createElement("canvas"); c.width = 32;
                c.height = 18; const g = c.getContext("2d"); g.drawImage(v, 0, 0, 32, 18);
                const d = g.getImageData(0, 9, 32, 1).data; const out = [];
                for (let i = 0; i < 32; i++) out.push([d[4 * i], d[4 * i + 1], d[4 * i + 2]]);
                return out; }""")
            green = [p for p in row[6:26] if p[1] > 120 and p[1] > p[0] + 50 and p[1] > p[2] + 50]
            self.assertGreaterEqual(len(green), 16, row)
            await chromium.close()
        finally:
            await playwright.stop()


if __name__ == "__main__":
    unittest.main()
