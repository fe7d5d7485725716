"""Part 2: glass-to-glass added latency and join-to-first-frame.

One live sender: Python draws 640x360 gray frames with the wall clock (ms since the run's epoch) as 32 black/white
blocks (and their complement, as a check) and pipes them to one ffmpeg that sends VP8 + Opus RTP to Cohost and,
from the same frames, H.264 (ultrafast, zerolatency, video only) straight to nginx: the direct path. Cohost's room
holds that participant 1:1 at the canvas's top-left (plus replayed participants for load) and pushes to nginx.
Two pullers (ffmpeg, 1 decoder thread, low_delay) read both streams back as raw gray; each decoded frame's age is
now minus its code. Added latency = Cohost path minus direct path, at p50 and p95. The live participant's voice is
beeps sent from this process, and a third puller hears them in the programme: the voice's age (voice_age.py), which a
player that lines sound and picture up by timestamp waits for; the direct path carries no sound to compare it with.

Beside them, a headless Chromium participant ("web", browser.py) sends a canvas on which its page draws the same
clock code, over WebRTC (ICE, DTLS-SRTP, VP8 from Chrome's own encoder), at the canvas's top-right: a third puller
reads its code back from the programme. Its age includes Chrome's capture, encoder and pacer, which the direct path
does not have; its added latency is reported the same way (minus the direct path).

Both of the live participant's streams carry sender reports that map RTP time to the wall clock at capture, as a
WebRTC sender's do: the beeper's for the voice, and for the picture a relay in front of ffmpeg (ffmpeg's own map RTP
time to its start-up, tens of ms after the first frame was drawn; Cohost's lip-sync would rightly hold every picture
back by that error)."""
import json
import os
import signal
import socket
import struct
import subprocess
import threading
import time

import media
import voice_age
from lib import Cohost, Nginx, Procs, log, metric_values
from browser import BrowserParticipant
from video import _replayer

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)   # Linux; same value as SCM_TIMESTAMPNS
W, H, BITS, BW = 640, 360, 32, 20
ROW1, ROW2, RH = 20, 60, 28
WHITE, BLACK, GRAY = 235, 16, 128


class Clock:
    def __init__(self):
        self.epoch = time.time()

    def ms(self):
        return int((time.time() - self.epoch) * 1000)


def draw(value, base):
    frame = bytearray(base)
    for i in range(BITS):
        bit = (value >> (BITS - 1 - i)) & 1
        on, off = bytes([WHITE]) * BW, bytes([BLACK]) * BW
        a, b = (on, off) if bit else (off, on)
        for y in range(ROW1, ROW1 + RH):
            frame[y * W + i * BW:y * W + (i + 1) * BW] = a
        for y in range(ROW2, ROW2 + RH):
            frame[y * W + i * BW:y * W + (i + 1) * BW] = b
    return bytes(frame)


def read_code(frame):
    """The ms value a frame carries, or None when the two rows do not disagree everywhere (not our picture)."""
    value = 0
    for i in range(BITS):
        x = i * BW + BW // 2
        a = sum(frame[(ROW1 + RH // 2 + d) * W + x + d] for d in (-4, 0, 4)) / 3
        b = sum(frame[(ROW2 + RH // 2 + d) * W + x + d] for d in (-4, 0, 4)) / 3
        if (a > GRAY) == (b > GRAY) or abs(a - b) < 60:
            return None
        value = value << 1 | (1 if a > b else 0)
    return value


def _stall(pid, ms, stop):
    """BENCH_STALL_MS: stops Cohost for `ms` every 2 s (SIGSTOP, SIGCONT), as a stalled machine would, so that its
    clock skips ticks; the senders go on, and their packets wait in the socket buffers."""
    try:
        while not stop.wait(2.0):
            try:
                os.kill(pid, signal.SIGSTOP)
                time.sleep(ms / 1000)
            finally:
                os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        pass   # Cohost exited (the run ended or it crashed, which the run reports)


def skipped_ticks(cohost):
    return int(sum(v for _, v in metric_values(cohost.metrics(), "cohost_clock_skipped_ticks")))


class Puller:
    """ffmpeg reading an RTMP stream to raw gray 640x360 (cropped from the top-left); a thread decodes codes."""

    def __init__(self, procs, name, url, clock, crop, crop_x=0):
        vf = f"crop=640:360:{crop_x}:0" if crop else "null"
        self.proc = procs.start(name, [
            "ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-fflags", "nobuffer", "-flags", "low_delay",
            "-threads", "1", "-analyzeduration", "3000000", "-rw_timeout", "30000000", "-i", url, "-map", "0:v", "-vf", vf, "-fps_mode", "passthrough",
            "-pix_fmt", "gray", "-f", "rawvideo", "-"], stdout=subprocess.PIPE)
        self.clock = clock
        self.samples = []   # (arrival ms, age ms)
        self.frames = 0
        self.first_valid_ms = None
        self.last_code = None
        self.last_frame = None
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        size = W * H
        out = self.proc.stdout
        while True:
            frame = out.read(size)
            if len(frame) < size:
                return
            now = self.clock.ms()
            self.frames += 1
            self.last_frame = frame
            code = read_code(frame)
            if code is None or code == self.last_code:
                continue   # not our picture, or a repeat of one already seen: its first sighting is its age
            self.last_code = code
            if self.first_valid_ms is None:
                self.first_valid_ms = now
            self.samples.append((now, now - code))


class VideoRelay:
    """Forwards the live VP8 sender's RTP to Cohost and sends the stream's RTCP sender reports itself (ffmpeg runs
    with -rtpflags skip_rtcp): frame k has RTP time base + 3000 k (ffmpeg stamps piped frames by their index at
    30 fps) and was drawn at `first_wall` + k/30, so a report at wall time w says RTP base + (w - first_wall) x 90 kHz."""

    def __init__(self, dest, ssrc, clock):
        self.dest, self.ssrc, self.clock = tuple(dest), ssrc, clock
        self.rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        # The kernel stamps each datagram's arrival: how long it then waited for this thread (the GIL, shared with
        # the pullers and the beeper) is time the Cohost path is charged for and the direct path is not.
        self.rx.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.rx.bind(("127.0.0.1", 0))
        self.rx.settimeout(0.2)
        self.port = self.rx.getsockname()[1]
        self.tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.base = None
        self.first_wall = None   # set by the feeder when frame 0 is drawn
        self.skipped = lambda: 0  # set by the run: ticks the VP8 feeder skipped so far
        self.packets = self.octets = 0
        self.held = []   # (forward time on the run's clock in ms, ms between the datagram's arrival and its forwarding)
        self.stop = threading.Event()
        threading.Thread(target=self._forward, daemon=True).start()
        threading.Thread(target=self._reports, daemon=True).start()

    def _forward(self):
        while not self.stop.is_set():
            try:
                data, anc, _, _ = self.rx.recvmsg(2048, 64)
            except socket.timeout:
                continue
            except OSError:
                return
            if len(data) >= 12 and self.base is None:
                self.base = struct.unpack("!I", data[4:8])[0]
            self.tx.sendto(data, self.dest)
            for level, kind, value in anc:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(value) >= 16:
                    sec, nsec = struct.unpack_from("qq", value)
                    now = time.time()
                    self.held.append((int((now - self.clock.epoch) * 1000), (now - sec - nsec / 1e9) * 1000))
            self.packets += 1
            self.octets += max(0, len(data) - 12)

    def _reports(self):
        while not self.stop.wait(0.5):
            if self.base is None or self.first_wall is None:
                continue
            wall = time.time()
            # Ticks the feeder skipped were never written: ffmpeg numbered the next frame on, so RTP time
            # runs that many frames behind the drawing clock.
            rtp = self.base + int((wall - self.first_wall - self.skipped() / 30) * 90000)
            self.tx.sendto(media.sender_report(self.ssrc, wall, rtp, self.packets, self.octets), self.dest)

    def close(self):
        self.stop.set()
        self.rx.close()
        self.tx.close()


def browser_window(ctx, clock, cohost, closers, via, direct, web):
    """The Chromium participant joins after the main window (its encoder shares these two cores, which must not
    weigh on the figures above) and a second window measures its picture's age beside the live sender's."""
    try:
        browser = BrowserParticipant(clock.epoch)
        closers.append(browser)
        joined_ms = clock.ms()  # from the offer: Chromium's own start-up is not the join's
        browser.join(cohost, "lat", "web")
    except Exception as e:  # noqa: BLE001 (Playwright's errors and the join's alike): reported, not fatal
        log("browser participant:", e)
        return {"error": f"{type(e).__name__}: {e}"}
    out = {"join_to_connected_ms": clock.ms() - joined_ms}
    time.sleep(max(3.0, ctx["warmup"] / 2))
    start = clock.ms()
    time.sleep(ctx["window"])
    stop_ms = clock.ms()
    for name, puller in (("browser", web), ("live", via), ("direct", direct)):
        values = [a for t, a in puller.samples if start <= t < stop_ms]
        out[name] = {"frames": len(values), "p50_ms": percentile(values, 50), "p95_ms": percentile(values, 95)}
    for name in ("browser", "live"):
        if out[name]["frames"] and out["direct"]["frames"]:
            out[name]["added_p50_ms"] = out[name]["p50_ms"] - out["direct"]["p50_ms"]
            out[name]["added_p95_ms"] = out[name]["p95_ms"] - out["direct"]["p95_ms"]
    out["join_to_first_frame_ms"] = web.first_valid_ms - joined_ms if web.first_valid_ms else None
    out["sent"] = browser.sent()
    return out


def even(v):
    return int(v) // 2 * 2


def spread(values):
    """p50, p95 and max of `values` (ms, to 0.1), None each when there are none."""
    r = lambda v: None if v is None else round(v, 1)
    return {"p50": r(percentile(values, 50)), "p95": r(percentile(values, 95)), "max": r(max(values, default=None))}


def percentile(values, p):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def run(ctx, load=3):
    workdir = os.path.join(ctx["workdir"], "latency")
    os.makedirs(workdir, exist_ok=True)
    procs = Procs(workdir)
    clock = Clock()
    stop = threading.Event()
    stop_relay = []
    try:
        nginx = Nginx(procs, workdir)
        cohost = Cohost(procs)
        n = load + 1
        # The live sender top-left and the browser top-right, each 1:1; the replayed load in the lower half.
        lower = [(even(i * 1280 / load), 360, even((i + 1) * 1280 / load) - even(i * 1280 / load), 360)
                 for i in range(load)]
        regions = [("live", (0, 0, 640, 360)), ("web", (640, 0, 640, 360))] + [
            (f"p{i + 1}", r) for i, r in enumerate(lower)]
        cohost.create_room({
            "name": "lat", "canvas": {"width": 1280, "height": 720, "fps": 30, "background": "#202040"},
            "video": {"bitrate": 2000, "keyint": 2}, "audio": {"bitrate": 128, "channels": 2},
            "layout": {"mode": "custom", "regions": [
                {"userId": user, "x": x, "y": y, "width": w, "height": h, "fit": "stretch"}
                for user, (x, y, w, h) in regions]},
            "outputs": [{"url": nginx.url("lat")}]})
        streams = []
        for i in range(1, n):
            cohost.join("lat", f"p{i}", 1000 + i, 2000 + i)
            dest = ["127.0.0.1", cohost.rtp_port]
            streams += [{"kind": "video", "ssrc": 2000 + i, "pt": 96, "dest": dest, "start": 60 * (i % 5)},
                        {"kind": "audio", "ssrc": 1000 + i, "pt": 111, "dest": dest, "track": "tone"}]
        # The live participant's voice is sent from here (voice_age.Beeper), with sender reports that map RTP time
        # to the wall clock exactly; a separate ffmpeg's reports are only right to within its start-up, and
        # Cohost's lip-sync would then (rightly) hold the picture back for that error.
        beeper = voice_age.Beeper(["127.0.0.1", cohost.rtp_port], 1101, clock)
        stop_relay.append(beeper)
        stall_ms = int(os.environ.get("BENCH_STALL_MS", "0"))
        if stall_ms > 0:
            threading.Thread(target=_stall, args=(cohost.pid, stall_ms, stop), daemon=True).start()
        _replayer(procs, workdir, ctx, streams)
        via = Puller(procs, "pull-cohost", nginx.url("lat"), clock, crop=True)
        heard = voice_age.VoicePuller(procs, "pull-cohost-voice", nginx.url("lat"), clock)
        direct = Puller(procs, "pull-direct", nginx.url("direct"), clock, crop=False)
        web = Puller(procs, "pull-cohost-web", nginx.url("lat"), clock, crop=True, crop_x=640)
        # The Cohost puller must be showing the room (without our participant) before the join.
        end = time.monotonic() + 15
        while via.frames < 15 and time.monotonic() < end:
            time.sleep(0.1)
        if via.frames < 15:
            raise RuntimeError("no programme frames from Cohost before the join")

        join_ms = clock.ms()
        cohost.join("lat", "live", 1101, 2101)
        beeper.start()
        relay = VideoRelay(["127.0.0.1", cohost.rtp_port], 2101, clock)
        stop_relay.append(relay)
        rtp = f"rtp://127.0.0.1:{relay.port}?pkt_size=1200"
        raw_in = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error",
                  "-f", "rawvideo", "-pix_fmt", "gray", "-s", f"{W}x{H}", "-r", "30", "-i", "-", "-pix_fmt", "yuv420p"]
        # Three processes so that no output waits on another input's pacing (one ffmpeg with a -re audio input
        # and the piped video would interleave them and hold frames back).
        senders = [
            procs.start("sender-vp8", raw_in + [
                "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "800k", "-g", "60",
                "-auto-alt-ref", "0", "-lag-in-frames", "0", "-threads", "1",
                "-ssrc", str(2101), "-payload_type", "96", "-rtpflags", "skip_rtcp", "-f", "rtp", rtp],
                stdin=subprocess.PIPE),
            procs.start("sender-h264", raw_in + [
                "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-b:v", "1500k", "-g", "30",
                "-threads", "1", "-f", "flv", nginx.url("direct")], stdin=subprocess.PIPE)]
        base = bytes([GRAY]) * (W * H)
        first_sent = []

        dropped = [0] * len(senders)
        relay.skipped = lambda: dropped[0]

        def feed(i, sender):
            # One thread per sender, each stamping a frame with the clock just before handing it over: a
            # shared queue would let a backlog in front of one sender count as latency of its path. A sender
            # that falls behind skips ticks (counted) instead of building a backlog.
            k, t0 = 0, time.monotonic()
            try:
                while not stop.is_set():
                    ms = clock.ms()
                    if not first_sent:
                        first_sent.append(ms)
                    if i == 0 and relay.first_wall is None:
                        relay.first_wall = clock.epoch + ms / 1000
                    sender.stdin.write(draw(ms, base))
                    sender.stdin.flush()
                    k += 1
                    late = int((time.monotonic() - t0) * 30) - k
                    if late > 0:
                        dropped[i] += late
                        k += late
                    delay = t0 + k / 30 - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
            except (BrokenPipeError, ValueError, OSError):
                pass

        for i, sender in enumerate(senders):
            threading.Thread(target=feed, args=(i, sender), daemon=True).start()
        time.sleep(max(3.0, ctx["warmup"]))
        procs.check_alive()
        skipped_before = skipped_ticks(cohost)
        start = clock.ms()
        time.sleep(ctx["window"])
        stop_ms = clock.ms()
        skipped = skipped_ticks(cohost) - skipped_before
        info = cohost.room("lat") or {}
        live = next((p for p in info.get("participants", []) if p.get("userId") == "live"), None)
        ages = {name: [a for t, a in p.samples if start <= t < stop_ms] for name, p in (("cohost", via), ("direct", direct))}
        out = {"window_s": ctx["window"], "load_participants": load}
        # Ticks Cohost's clock skipped in the window (it fell behind: the machine stalled it).
        out["clock_skipped_ticks"] = skipped
        for name, values in ages.items():
            out[name] = {"frames": len(values), "p50_ms": percentile(values, 50), "p95_ms": percentile(values, 95)}
        out["cohost"]["frames_pulled"], out["direct"]["frames_pulled"] = via.frames, direct.frames
        if ages["cohost"] and ages["direct"]:
            out["added_p50_ms"] = out["cohost"]["p50_ms"] - out["direct"]["p50_ms"]
            out["added_p95_ms"] = out["cohost"]["p95_ms"] - out["direct"]["p95_ms"]
        else:
            out["added_p50_ms"] = out["added_p95_ms"] = None
        voice = voice_age.ages(beeper.beeps, heard.onsets, start, stop_ms)
        out["voice"] = {"beeps": len(voice), "beeps_sent": sum(start <= c < stop_ms for c, _ in beeper.beeps),
                        "p50_ms": percentile(voice, 50), "p95_ms": percentile(voice, 95)}
        out["voice_after_picture_p50_ms"] = (out["voice"]["p50_ms"] - out["cohost"]["p50_ms"]
                                             if voice and ages["cohost"] else None)
        out["relay_held_ms"] = spread([h for t, h in relay.held if start <= t < stop_ms])
        out["voice"]["sent_late_ms"] = spread([late for t, late in beeper.late if start <= t < stop_ms])
        out["sender_frames_dropped"] = dropped
        out["cohost_live_participant"] = live   # Cohost's own view of the stream: buffer depth, lip-sync delay
        out["join_to_first_frame_ms"] = via.first_valid_ms - join_ms if via.first_valid_ms else None
        out["join_to_first_sent_frame_ms"] = first_sent[0] - join_ms if first_sent else None
        out["browser"] = browser_window(ctx, clock, cohost, stop_relay, via, direct, web)
        if os.environ.get("BENCH_DEBUG"):
            import urllib.request
            req = urllib.request.Request(f"{cohost.base}/v1/rooms/lat/snapshot", headers={"Authorization": f"Bearer {cohost.admin}"})
            open(os.path.join(workdir, "snapshot.png"), "wb").write(urllib.request.urlopen(req).read())
            open(os.path.join(workdir, "last-cohost.gray"), "wb").write(via.last_frame or b"")
            log("debug files in", workdir)
            for name, p in (("cohost", via), ("direct", direct)):
                with open(os.path.join(workdir, f"ages-{name}.json"), "w") as f:
                    json.dump(p.samples, f)  # (arrival ms, age ms)
                per = {}
                for t, a in p.samples:
                    per.setdefault(t // 1000, []).append(a)
                log(name, [(k, len(v), min(v), max(v)) for k, v in sorted(per.items())])
        return out
    finally:
        stop.set()
        for relay in stop_relay:
            relay.close()
        procs.stop()
