"""Part 12: what an output costs on top of its room. One 720p room of 4 replayed participants with its RTMP output
(video.cohost_room); then, in turns, the same room with nothing more, with an SRT output to an ffmpeg listener
(MPEG-TS over libsrt, the listener discarding it), with a fragmented MP4 recording into the recordings directory, and
with a Low-Latency HLS output played by `HLS_PLAYERS` clients (blocking playlist reloads, every part fetched, as
LL-HLS players do). None encodes again: each is the programme's own H.264 and AAC through a libavformat muxer, so what
it adds is the muxing and the sending (for HLS, also the serving). Cohost's cores are taken over the same window length
for each, the cheapest of `ctx["repeat"]` turns, and the output's own thread's (its muxer and its socket or file) over
the same window."""
import json
import os
import re
import socket
import threading
import time

from lib import Procs, cpu_window, free_port, http, log, thread_cpu_seconds
from video import cohost_room

ROOM = "video4"


HLS_PLAYERS = 8


def _add(cohost, url):
    body = {"kind": "hls"} if url == "hls" else {"url": url}
    status, text = http("POST", f"{cohost.base}/v1/rooms/{ROOM}/outputs", cohost.admin, body)
    if status != 201:
        raise RuntimeError(f"add output {url}: {status} {text}")
    output = json.loads(text)["id"]
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        room = cohost.room(ROOM) or {}
        if any(o.get("id") == output and o.get("state") == "connected" for o in room.get("outputs", [])):
            return output
        time.sleep(0.1)
    raise RuntimeError(f"output {url} did not connect")


def _players(cohost, stop, parts):
    """HLS_PLAYERS threads playing the room's LL-HLS as players do until `stop` is set; `parts` counts what they got."""
    base = f"{cohost.base}/v1/rooms/{ROOM}/hls/"

    def play():
        msn = part = None
        while not stop.is_set():
            query = f"?_HLS_msn={msn}&_HLS_part={part}" if msn is not None else ""
            status, text = http("GET", base + "index.m3u8" + query, cohost.admin)
            if status != 200:
                time.sleep(0.1)
                continue
            listed = re.findall(r'URI="p(\d+)\.(\d+)\.m4s"', text)
            if not listed:
                continue
            m, p = (int(x) for x in listed[-1])
            status, _ = http("GET", f"{base}p{m}.{p}.m4s", cohost.admin)
            if status == 200:
                parts.append(1)
            msn, part = m, p + 1

    threads = [threading.Thread(target=play, daemon=True) for _ in range(HLS_PLAYERS)]
    for t in threads:
        t.start()
    return threads


def _remove(cohost, output):
    http("DELETE", f"{cohost.base}/v1/rooms/{ROOM}/outputs/{output}", cohost.admin)


def run(ctx):
    result = {}

    def steady(cohost, procs):
        workdir = os.path.join(ctx["workdir"], "outputs-extra")
        os.makedirs(workdir, exist_ok=True)
        extra = Procs(workdir)
        try:
            time.sleep(ctx["warmup"])
            turns = {"room": [], "srt": [], "mp4": [], "hls": []}
            threads = {"srt": [], "mp4": [], "hls": []}
            parts_served = []
            for turn in range(ctx["repeat"]):
                for kind in ("room", "srt", "mp4", "hls"):
                    output = listener = None
                    stop, parts = threading.Event(), []
                    if kind == "srt":
                        # ffmpeg's listener ends with its caller's connection: one per turn.
                        port = free_port(socket.SOCK_DGRAM)
                        listener = extra.start(f"srt-listener-{turn}", [
                            "ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error",
                            "-i", f"srt://127.0.0.1:{port}?mode=listener", "-c", "copy", "-f", "mpegts", "/dev/null"])
                        output = _add(cohost, f"srt://127.0.0.1:{port}?streamid=bench&latency=120")
                    elif kind == "mp4":
                        output = _add(cohost, f"file://bench-{turn}.mp4")
                    elif kind == "hls":
                        output = _add(cohost, "hls")
                        players = _players(cohost, stop, parts)
                    time.sleep(2)
                    # The output's own thread (`srt-o2`, `file-o3`): its muxing and sending, whatever the room does.
                    # and, for SRT, libsrt's own threads (`SRT:…`), which no other output of this room has.
                    thread = f"{kind if kind in ('srt', 'hls') else 'file'}-{output}" if output else None
                    prefix = "SRT:" if kind == "srt" else None
                    t0 = thread_cpu_seconds(cohost.pid, thread, prefix=prefix) if thread else 0
                    start = time.monotonic()
                    turns[kind].append(cpu_window([cohost.pid], ctx["window"])[cohost.pid])
                    if thread:
                        used = thread_cpu_seconds(cohost.pid, thread, prefix=prefix) - t0
                        threads[kind].append(used / (time.monotonic() - start))
                    if kind == "hls":
                        stop.set()
                        for t in players:
                            t.join(timeout=10)
                        parts_served.append(len(parts) / (time.monotonic() - start))
                    if output:
                        _remove(cohost, output)
                    if listener:
                        extra.stop(listener)
                    log(f"outputs: {kind} turn {turn}: {turns[kind][-1]:.3f} cores")
            room = min(turns["room"])
            result.update({
                "room_cores": round(room, 3),
                "srt_cores": round(min(turns["srt"]), 3), "mp4_cores": round(min(turns["mp4"]), 3),
                "hls_cores": round(min(turns["hls"]), 3),
                "hls_added_cores": round(min(turns["hls"]) - room, 4),
                "hls_thread_cores": round(sum(threads["hls"]) / len(threads["hls"]), 4),
                "hls_players": HLS_PLAYERS,
                "hls_parts_per_second": round(sum(parts_served) / len(parts_served), 1),
                "srt_added_cores": round(min(turns["srt"]) - room, 4),
                "mp4_added_cores": round(min(turns["mp4"]) - room, 4),
                "srt_thread_cores": round(sum(threads["srt"]) / len(threads["srt"]), 4),
                "mp4_thread_cores": round(sum(threads["mp4"]) / len(threads["mp4"]), 4),
                "turns": {k: [round(v, 3) for v in vs] for k, vs in turns.items()}})
            return result
        finally:
            extra.stop()

    return cohost_room(ctx, 4, name="outputs", keep={"steady": steady})
