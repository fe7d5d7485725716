"""Part 11: the RTSP-to-RTMP relay: a room with one RTSP camera (a pulled source) and an RTMP output, beside ffmpeg
relaying the same camera by stream copy and by transcoding to the programme's size and bitrate.

The camera: Python draws 640x360 gray frames carrying the wall clock (latency.py's code) and pipes them to one ffmpeg
(x264 ultrafast, zerolatency) that sends H.264 RTP to GStreamer's RTSP server (Tests/Tools/rtsp_camera.py --rtp-in;
a camera without sound), and to a second ffmpeg, from the same frames, that pushes straight to nginx: the direct path. Three
relays read rtsp://…/cam over TCP and push to nginx: Cohost (room 640x360 at 30 fps, the camera full canvas,
`latencyMs` of the source as configured below), `ffmpeg -c copy -f flv`, and ffmpeg transcoding with x264 veryfast
zerolatency (Cohost's own encoder settings) at the same size, frame rate and bitrate. Four pullers read the streams
back (latency.Puller): each relay's added latency is its age minus the direct path's, at p50 and p95, and the CPU of
each relay process is measured over the same window."""
import os
import subprocess
import sys
import threading
import time

from latency import GRAY, H, W, Clock, Puller, draw, percentile
from lib import ROOT, Cohost, Nginx, Procs, cpu_window, free_port, http, log, wait_tcp

BITRATE_KBPS = 1500
# The source's buffer (BENCH_RELAY_LATENCY_MS): 0 measures what the relay itself adds; the buffer adds itself on top
# (the server's default is 500 ms, for cameras across the internet).
LATENCY_MS = int(os.environ.get("BENCH_RELAY_LATENCY_MS", "0"))


def run(ctx):
    workdir = os.path.join(ctx["workdir"], "relay")
    os.makedirs(workdir, exist_ok=True)
    procs = Procs(workdir)
    clock = Clock()
    stop = threading.Event()
    try:
        nginx = Nginx(procs, workdir)
        rtp_port = free_port(__import__("socket").SOCK_DGRAM)
        rtsp_port = free_port()
        procs.start("camera", ["/usr/bin/python3", os.path.join(ROOT, "Tests/Tools/rtsp_camera.py"), str(rtsp_port),
                               "--rtp-in", str(rtp_port), "--tone", "600"])
        wait_tcp(rtsp_port)
        camera = f"rtsp://127.0.0.1:{rtsp_port}/cam"
        raw_in = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error",
                  "-f", "rawvideo", "-pix_fmt", "gray", "-s", f"{W}x{H}", "-r", "30", "-i", "-", "-pix_fmt", "yuv420p",
                  "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-b:v", "1500k", "-g", "30",
                  "-threads", "1"]
        senders = [
            procs.start("encoder-rtp", raw_in + ["-bsf:v", "dump_extra", "-payload_type", "96", "-f", "rtp",
                                                 f"rtp://127.0.0.1:{rtp_port}?pkt_size=1200"], stdin=subprocess.PIPE),
            procs.start("encoder-direct", raw_in + ["-f", "flv", nginx.url("direct")], stdin=subprocess.PIPE)]
        base = bytes([GRAY]) * (W * H)

        def feed(sender):
            k, t0 = 0, time.monotonic()
            try:
                while not stop.is_set():
                    sender.stdin.write(draw(clock.ms(), base))
                    sender.stdin.flush()
                    k += 1
                    late = int((time.monotonic() - t0) * 30) - k
                    if late > 0:
                        k += late
                    delay = t0 + k / 30 - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
            except (BrokenPipeError, ValueError, OSError):
                pass

        for sender in senders:
            threading.Thread(target=feed, args=(sender,), daemon=True).start()
        time.sleep(2)

        cohost = Cohost(procs)
        cohost.create_room({
            "name": "relay", "canvas": {"width": W, "height": H, "fps": 30, "background": "#202040"},
            "video": {"bitrate": BITRATE_KBPS, "keyint": 1}, "audio": {"bitrate": 128, "channels": 2},
            "layout": {"mode": "custom", "regions": [
                {"userId": "cam", "x": 0, "y": 0, "width": W, "height": H, "fit": "stretch"}]},
            "outputs": [{"url": nginx.url("cohost")}]})
        status, text = http("POST", f"{cohost.base}/v1/rooms/relay/sources", cohost.admin,
                            {"userId": "cam", "url": camera, "transport": "tcp", "latencyMs": LATENCY_MS})
        if status != 201:
            raise RuntimeError(f"add source: {status} {text}")
        pull = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-rtsp_transport", "tcp",
                "-fflags", "nobuffer", "-flags", "low_delay", "-i", camera]
        pullers = {}

        def started(name):
            # One client at a time: GStreamer's RTSP server answers 503 to a client that comes while the shared
            # media is still being prepared for another.
            pullers[name] = Puller(procs, f"pull-{name}", nginx.url(name), clock, crop=False)
            end = time.monotonic() + 30
            while pullers[name].first_valid_ms is None and time.monotonic() < end:
                time.sleep(0.2)
            if pullers[name].first_valid_ms is None:
                procs.check_alive()
                raise RuntimeError(f"no clock frames from {name}")

        started("direct")
        started("cohost")
        copy = procs.start("ffmpeg-copy", pull + ["-c:v", "copy", "-c:a", "copy", "-f", "flv", nginx.url("copy")])
        started("copy")
        transcode = procs.start("ffmpeg-transcode", pull + [
            "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-b:v", f"{BITRATE_KBPS}k",
            "-maxrate", f"{BITRATE_KBPS}k", "-bufsize", f"{BITRATE_KBPS}k", "-g", "30", "-s", f"{W}x{H}", "-r", "30",
            "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k", "-ar", "48000", "-ac", "2", "-f", "flv",
            nginx.url("transcode")])
        started("transcode")
        time.sleep(ctx["warmup"])
        procs.check_alive()
        start = clock.ms()
        cores = cpu_window([cohost.pid, copy.pid, transcode.pid], ctx["window"])
        stop_ms = clock.ms()
        ages = {name: [a for t, a in p.samples if start <= t < stop_ms] for name, p in pullers.items()}
        out = {"window_s": ctx["window"], "latency_ms": LATENCY_MS, "bitrate_kbps": BITRATE_KBPS}
        for name, values in ages.items():
            out[name] = {"frames": len(values), "p50_ms": percentile(values, 50), "p95_ms": percentile(values, 95)}
        for name, pid in (("cohost", cohost.pid), ("copy", copy.pid), ("transcode", transcode.pid)):
            entry = out[name]
            entry["cores"] = round(cores[pid], 3)
            if ages[name] and ages["direct"]:
                entry["added_p50_ms"] = entry["p50_ms"] - out["direct"]["p50_ms"]
                entry["added_p95_ms"] = entry["p95_ms"] - out["direct"]["p95_ms"]
        source = (cohost.room("relay") or {}).get("sources", [{}])[0]
        out["cohost_source"] = {k: source.get(k) for k in ("state", "attempt", "picturesDecoded", "picturesShown",
                                                            "audioBufferedMs", "underruns", "trimmedMs")}
        if out["copy"].get("cores"):
            out["cohost_over_copy_cpu"] = round(out["cohost"]["cores"] / out["copy"]["cores"], 1)
        if out["transcode"].get("cores"):
            out["cohost_over_transcode_cpu"] = round(out["cohost"]["cores"] / out["transcode"]["cores"], 2)
        log("relay:", {k: out[k] for k in ("cohost", "copy", "transcode", "direct")})
        return out
    finally:
        stop.set()
        procs.stop()


if __name__ == "__main__":
    import tempfile
    sys.exit(print(run({"workdir": tempfile.mkdtemp(prefix="cohost-relay-"), "warmup": 5, "window": 10})))
