"""A browser guest's own tracks recorded as received (POST /v1/rooms/{room}/recordings) against a real `cohost serve`.

Chromium joins with a magenta camera (a .y4m file) and an 880 Hz microphone (a .wav file), sending VP8 and Opus; its
recording is WebM whose picture is magenta and whose sound is the tone, with as many pictures as Chromium's own
encoder made over the recorded span (nothing was encoded again: Cohost only stored what it received).

Run from this directory: python3 -m unittest -v test_recording   (or Tests/WebRTC/run.sh test_recording)
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True

import harness  # noqa: E402

harness.enter_network_namespace()

import browser  # noqa: E402
import numpy as np  # noqa: E402
from playwright.async_api import async_playwright  # noqa: E402

CONNECT_TIMEOUT = 15.0
TONE = 880
_workdir = None
TONE_WAV = None
MAGENTA_Y4M = None


def setUpModule():
    global _workdir, TONE_WAV, MAGENTA_Y4M
    _workdir = tempfile.mkdtemp(prefix="cohost-recording-")
    TONE_WAV = harness.write_tone_wav(os.path.join(_workdir, "tone.wav"), TONE, seconds=10)
    MAGENTA_Y4M = os.path.join(_workdir, "magenta.y4m")
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                    "color=c=magenta:s=320x240:r=30", "-t", "2", "-pix_fmt", "yuv420p", MAGENTA_Y4M],
                   check=True, timeout=60)


def tearDownModule():
    if _workdir:
        harness.remove_temp_dir(_workdir)


def probe(path, entries):
    out = subprocess.run(["ffprobe", "-v", "error", "-count_packets", "-show_entries", entries, "-of", "json", path],
                         capture_output=True, text=True, timeout=30)
    return json.loads(out.stdout or "{}")


class RecordingTests(unittest.IsolatedAsyncioTestCase):
    cohost = None
    server = None

    @classmethod
    def setUpClass(cls):
        cls.server = browser.PageServer()
        cls.cohost = harness.Cohost(extra_args=["--cors-origins", cls.server.origin])

    @classmethod
    def tearDownClass(cls):
        harness.stop_all(cls.cohost, cls.server)

    async def test_a_browsers_vp8_and_opus_are_recorded_as_it_sent_them(self):
        room = harness.room_for_test(self, width=25)
        self.assertEqual(self.cohost.create_room({"name": room, "returnVideo": "none"}).status, 201)
        playwright = await async_playwright().start()
        try:
            chromium = await browser.launch(playwright, TONE_WAV, video_file=MAGENTA_Y4M)
            page = await browser.BrowserPeer.open(chromium, self.server)
            result = await page.start(f"{self.cohost.base}/v1/rooms/{room}/participants",
                                      self.cohost.token(room, "guest"))
            self.assertEqual(result.get("status"), 201, result)
            self.assertTrue(await page.wait_connected(CONNECT_TIMEOUT), await page.state())

            admin = self.cohost.admin()
            started = await self.cohost.acall("POST", f"/v1/rooms/{room}/recordings", admin, {"userId": "guest"})
            self.assertEqual(started.status, 201, started)
            info = started.json()
            self.assertEqual((info["videoCodec"], info["audio"]), ("vp8", True), info)
            self.assertTrue(info["file"].endswith(".webm"), info)

            def frames():
                r = self.cohost.call("GET", f"/v1/rooms/{room}/recordings", admin)
                return (r.json()["recordings"] or [{}])[0].get("videoFrames", 0)

            self.assertTrue(await harness.await_until(lambda: frames() >= 90, 20), frames())
            stopped = await self.cohost.acall("DELETE", f"/v1/rooms/{room}/recordings/{info['id']}", admin)
            self.assertEqual(stopped.status, 204, stopped)
            await chromium.close()
        finally:
            await playwright.stop()

        path = os.path.join(self.cohost.recordings_dir, info["file"])
        streams = {s["codec_name"]: s for s in probe(path, "stream=codec_name,width,nb_read_packets")["streams"]}
        self.assertEqual(set(streams), {"vp8", "opus"}, streams)
        # Chromium's own encoder's pictures over the span the file's timestamps cover: about 30 a second (it may drop
        # a few), never more, and none added or made again here.
        times = probe(path, "packet=pts_time,stream_index")
        video_index = next(i for i, s in enumerate(probe(path, "stream=codec_name")["streams"])
                           if s["codec_name"] == "vp8")
        stamps = [float(p["pts_time"]) for p in times["packets"] if p["stream_index"] == video_index]
        span = max(stamps) - min(stamps) + 1 / 30
        pictures = int(streams["vp8"]["nb_read_packets"])
        self.assertLessEqual(pictures, span * 30 + 2, (pictures, span))
        self.assertGreaterEqual(pictures, span * 30 * 0.8, (pictures, span))

        rgb = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-frames:v", "1", "-vf", "scale=32:24",
                              "-pix_fmt", "rgb24", "-f", "rawvideo", "-"], capture_output=True, timeout=30).stdout
        mean = np.frombuffer(rgb, dtype=np.uint8).reshape(-1, 3).mean(axis=0)
        self.assertTrue(mean[0] > 180 and mean[1] < 90 and mean[2] > 180, f"magenta: {mean}")
        pcm = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-ss", "1", "-t", "1", "-ac", "1",
                              "-ar", "48000", "-f", "s16le", "-"], capture_output=True, timeout=30).stdout
        levels = harness.tone_levels_db(np.frombuffer(pcm, dtype=np.int16), 48000, [TONE, 440])
        self.assertGreater(levels[TONE], levels[440] + 20, levels)


if __name__ == "__main__":
    unittest.main()
