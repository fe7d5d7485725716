"""The harness itself, against any cohost (with or without WebRTC): the namespace, tokens, tones, nginx-rtmp and
the programme pull. When these pass, a failure in test_aiortc.py or test_chromium.py is about WebRTC, not about
the plumbing."""

import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True

import harness  # noqa: E402

harness.enter_network_namespace()


class NamespaceTests(unittest.TestCase):
    def test_only_loopback(self):
        import socket

        if not harness.in_network_namespace():
            self.skipTest("COHOST_WEBRTC_NO_NETNS=1")
        self.assertEqual([name for _, name in socket.if_nameindex()], ["lo"])
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            with self.assertRaises(OSError):  # no route out of the namespace
                s.connect(("192.0.2.1", 9))
                s.send(b"x")

    def test_udp_pair_is_even_and_free(self):
        port = harness.free_udp_pair()
        self.assertEqual(port % 2, 0)
        self.assertTrue(harness._udp_can_bind(port) and harness._udp_can_bind(port + 1))


class TokenTests(unittest.TestCase):
    def test_same_bytes_as_cohost_token(self):
        """A token from `cohost token`, re-minted from its own claims, comes out identical."""
        binary = harness.cohost_binary()
        if not os.path.exists(binary):
            self.skipTest(f"no cohost binary at {binary}")
        for admin in (False, True):
            args = [binary, "token", "--key", harness.KEY, "--room", "room-1", "--user", "user_1", "--ttl", "600"]
            r = subprocess.run(args + (["--admin"] if admin else []), capture_output=True, text=True, timeout=30,
                               env=dict(os.environ, COHOST_SECRET=harness.SECRET))
            self.assertEqual(r.returncode, 0, r.stderr)
            cli = r.stdout.strip()
            claims = harness.token_claims(cli)
            self.assertEqual(claims["admin"], admin)
            self.assertEqual(harness.mint_token(claims), cli)

    def test_server_accepts_minted_tokens(self):
        with harness.Cohost() as cohost:
            r = cohost.create_room({"name": "tok"})
            self.assertEqual(r.status, 201, r.text)
            self.assertEqual(cohost.call("GET", "/v1/rooms/tok", cohost.admin("tok")).status, 200)
            self.assertEqual(cohost.call("GET", "/v1/rooms/tok", cohost.token("tok", "guest")).status, 403)
            bad = harness.token("tok", "test-admin", admin=True, secret="another-secret-0123456789abcdef-0123")
            r = cohost.call("GET", "/v1/rooms/tok", bad)
            self.assertEqual((r.status, r.error_code), (401, "token_bad_signature"))


class ToneTests(unittest.TestCase):
    def test_wav_round_trip_and_goertzel(self):
        with tempfile.TemporaryDirectory() as d:
            path = harness.write_tone_wav(os.path.join(d, "t.wav"), 880, seconds=2, amplitude=0.5)
            samples, rate = harness.read_wav_mono(path)
        self.assertEqual(rate, 48000)
        self.assertAlmostEqual(len(samples) / rate, 2.0, delta=0.01)
        levels = harness.tone_levels_db(samples[:48000], rate, [880, 660, 440, 1000])
        self.assertAlmostEqual(levels[880], -6.0, delta=0.3)
        for f in (660, 440, 1000):
            self.assertLess(levels[f], -60, levels)

    def test_two_tones_are_told_apart(self):
        import numpy as np

        n = np.arange(96000)
        mix = 0.25 * 32767 * np.sin(2 * np.pi * 440 * n / 48000) + 0.05 * 32767 * np.sin(2 * np.pi * 660 * n / 48000)
        levels = harness.tone_levels_db(mix.astype(np.int16), 48000, [440, 660, 880])
        self.assertAlmostEqual(levels[440], -12.0, delta=0.5)
        self.assertAlmostEqual(levels[660], -26.0, delta=0.5)
        self.assertLess(levels[880], -60)


class ProgrammeTests(unittest.TestCase):
    """nginx-rtmp, an output added over the API, and the pull: a plain-RTP ffmpeg participant (no WebRTC) shows at
    its rectangle and is heard at its frequency; the rectangle of a user who is not there shows the background."""

    def test_plain_rtp_participant_in_pulled_programme(self):
        with harness.Cohost() as cohost, harness.NginxRTMP() as nginx:
            room = "prog"
            layout = {"mode": "custom", "regions": [
                {"userId": "ff", "x": 640, "y": 0, "width": 640, "height": 360},
                {"userId": "nobody", "x": 0, "y": 0, "width": 640, "height": 360}]}
            r = cohost.create_room({"name": room, "canvas": {"width": 1280, "height": 720, "fps": 30,
                                                                     "background": "#204080"},
                                    "layout": layout})
            self.assertEqual(r.status, 201, r.text)
            r = cohost.add_output(room, nginx.url(room))
            self.assertEqual(r.status, 201, r.text)
            r = cohost.join(room, "ff", harness.plain_offer(7001, 7002))
            self.assertEqual(r.status, 201, r.text)
            ff = harness.FFmpegParticipant(cohost.rtp_port, colour="red", tone_hz=660, audio_ssrc=7001,
                                           video_ssrc=7002)
            try:
                cohost.wait_output_connected(room)
                ok = harness.wait_until(lambda: cohost.streams(room, "ff").get("video", {}).get("framesDecoded", 0) > 5,
                                        15)
                self.assertTrue(ok, f"no decoded frames from ffmpeg: {cohost.room(room)}\n{cohost.output()[-3000:]}")
                time.sleep(1.0)
                path = os.path.join(cohost.workdir, "prog.flv")
                harness.pull(nginx.url(room), 3, path)
                info = harness.probe(path)
                self.assertEqual(info["video"], (1280, 720), info)
                frames = harness.decode_frames(path, fps=2)
                self.assertGreater(len(frames), 2)
                last = frames[-1]
                ff_rect = harness.rect_stats(last, 640, 0, 640, 360)
                empty = harness.rect_stats(last, 0, 0, 640, 360)
                self.assertGreater(ff_rect["r"], 180, ff_rect)
                self.assertLess(ff_rect["g"], 60, ff_rect)
                for c, v in (("r", 0x20), ("g", 0x40), ("b", 0x80)):  # the background
                    self.assertAlmostEqual(empty[c], v, delta=8, msg=str(empty))
                self.assertLess(empty["std"], 3, empty)
                audio = harness.decode_audio(path)
                levels = harness.tone_levels_db(audio[-96000:], 48000, [660, 440, 880])
                self.assertGreater(levels[660], -40, levels)
                self.assertLess(levels[440], levels[660] - 30, levels)
            finally:
                ff.stop()


if __name__ == "__main__":
    unittest.main()
