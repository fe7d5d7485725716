"""Part 13: the programme to its viewers. A 640×360 room (constrained baseline, which aiortc decodes) whose one region shows an aiortc sender burning
its wall-clock millisecond into its picture (16 bits in 80×80 blocks, Tests/TestSupport/BurnedTime.swift's layout),
with a Low-Latency HLS output. (a) Delays: `VIEWERS` aiortc WHEP viewers read the time back from every picture they
decode; an LL-HLS client (blocking reloads, the newest part's segment decoded with ffmpeg) reads it from the newest
picture when each reload returns. Each delay is the wall clock then minus the time in the picture. (b) Cost: Cohost's
cores with the viewers watching and without, in turns over the same window, the cheapest of `ctx["repeat"]`; the
HLS output runs in both. aioice gathers on loopback only, so nothing is sent anywhere but 127.0.0.1."""
import asyncio
import fractions
import json
import os
import re
import statistics
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import aioice.ice
import av
import numpy as np
from aiortc import MediaStreamTrack, RTCPeerConnection, RTCSessionDescription

from lib import Cohost, Procs, cpu_window, http, log, make_token

ROOM = "playback"
VIEWERS = 4


def _loopback_only():
    aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: ["127.0.0.1"] if use_ipv4 else []


def read_code(gray):
    """The burned-in time of a 640×360 luma picture, None when a block is neither clearly white nor black."""
    if gray.shape[0] < 360 or gray.shape[1] < 640:
        return None
    code = 0
    for bit in range(16):
        value = int(gray[40 + (bit // 8) * 100 + 40, (bit % 8) * 80 + 40])
        if value > 200:
            code |= 1 << bit
        elif value >= 50:
            return None
    return code


def age_ms(code):
    return (int(time.time() * 1000) - code) & 0xFFFF


class ClockTrack(MediaStreamTrack):
    kind = "video"

    def __init__(self):
        super().__init__()
        self.start, self.index = None, 0

    async def recv(self):
        if self.start is None:
            self.start = time.monotonic()
        due = self.start + self.index / 30
        await asyncio.sleep(max(0, due - time.monotonic()))
        img = np.full((360, 640, 3), 128, dtype=np.uint8)
        code = int(time.time() * 1000) & 0xFFFF
        for bit in range(16):
            x0, y0 = (bit % 8) * 80, 40 + (bit // 8) * 100
            img[y0:y0 + 80, x0:x0 + 80] = 235 if (code >> bit) & 1 else 16
        frame = av.VideoFrame.from_ndarray(img, format="rgb24")
        frame.pts, frame.time_base = self.index * 3000, fractions.Fraction(1, 90000)
        self.index += 1
        return frame


class ToneTrack(MediaStreamTrack):
    kind = "audio"

    def __init__(self):
        super().__init__()
        self.start, self.index = None, 0

    async def recv(self):
        if self.start is None:
            self.start = time.monotonic()
        await asyncio.sleep(max(0, self.start + self.index * 0.02 - time.monotonic()))
        t = (np.arange(960) + self.index * 960) / 48000
        pcm = (0.3 * 32767 * np.sin(2 * np.pi * 440 * t)).astype(np.int16).reshape(1, -1)
        frame = av.AudioFrame.from_ndarray(pcm, format="s16", layout="mono")
        frame.sample_rate, frame.pts, frame.time_base = 48000, self.index * 960, fractions.Fraction(1, 48000)
        self.index += 1
        return frame


async def _gathered(pc):
    await pc.setLocalDescription(await pc.createOffer())
    while pc.iceGatheringState != "complete":
        await asyncio.sleep(0.05)
    return pc.localDescription.sdp


async def _post(url, token, sdp):
    status, text = await asyncio.to_thread(http, "POST", url, token, sdp, "application/sdp")
    if status != 201:
        raise RuntimeError(f"POST {url}: {status} {text}")
    return text


async def _sender(cohost):
    pc = RTCPeerConnection()
    pc.addTrack(ToneTrack())
    pc.addTrack(ClockTrack())
    answer = await _post(f"{cohost.base}/v1/rooms/{ROOM}/participants",
                         make_token(cohost.key, cohost.secret, ROOM, "anchor"), await _gathered(pc))
    await pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))
    return pc


async def _viewer(cohost, token, delays):
    pc = RTCPeerConnection()
    pc.addTransceiver("audio", direction="recvonly")
    pc.addTransceiver("video", direction="recvonly")
    tasks = []

    @pc.on("track")
    def on_track(track):
        async def drain():
            while True:
                frame = await track.recv()
                if track.kind == "video":
                    code = read_code(frame.to_ndarray(format="gray"))
                    if code is not None:
                        delays.append(age_ms(code))
        tasks.append(asyncio.ensure_future(drain()))

    answer = await _post(f"{cohost.base}/whep/{ROOM}", token, await _gathered(pc))
    await pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))
    return pc, tasks


def _hls_delays(cohost, token, seconds):
    """Blocking reloads for `seconds`: at each return, the newest part's segment is decoded and its newest picture
    read."""
    base = f"{cohost.base}/v1/rooms/{ROOM}/hls/"
    query = "?token=" + urllib.parse.quote(token)
    delays, msn, part, inits = [], None, None, {}
    end = time.monotonic() + seconds
    with tempfile.TemporaryDirectory() as tmp:
        while time.monotonic() < end:
            blocking = f"&_HLS_msn={msn}&_HLS_part={part}" if msn is not None else ""
            status, text = http("GET", base + "index.m3u8" + query + blocking, timeout=15)
            arrived = int(time.time() * 1000)
            if status != 200:
                time.sleep(0.2)
                continue
            # The listed parts (not the preload hint, which the server answers only once it exists).
            parts = [(int(m), int(p)) for m, p in re.findall(r'#EXT-X-PART:[^\n]*URI="p(\d+)\.(\d+)\.m4s', text)]
            maps = re.findall(r'EXT-X-MAP:URI="(init\d+\.mp4)', text)
            if not parts or not maps:
                continue
            msn, newest = parts[-1]
            part = newest + 1
            if maps[-1] not in inits:
                inits[maps[-1]] = urllib.request.urlopen(base + maps[-1] + query, timeout=10).read()
            media = inits[maps[-1]] + b"".join(
                urllib.request.urlopen(f"{base}p{m}.{p}.m4s{query}", timeout=10).read() for m, p in parts if m == msn)
            path = os.path.join(tmp, "part.mp4")
            with open(path, "wb") as f:
                f.write(media)
            gray = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-f", "rawvideo", "-pix_fmt",
                                   "gray", "-s", "640x360", "-"], capture_output=True, timeout=20).stdout
            if len(gray) >= 640 * 360:
                code = read_code(np.frombuffer(gray[-640 * 360:], dtype=np.uint8).reshape(360, 640))
                if code is not None:
                    delays.append((arrived - code) & 0xFFFF)
    return delays


def _summary(values):
    if not values:
        return {"samples": 0}
    ordered = sorted(values)
    return {"samples": len(values), "p50_ms": round(statistics.median(ordered)),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))])}


async def _run(ctx, cohost):
    cohost.create_room({
        "name": ROOM, "canvas": {"width": 640, "height": 360, "fps": 30}, "returnVideo": "none",
        "video": {"profile": "baseline"}, "outputs": [{"kind": "hls"}],
        "layout": {"mode": "custom", "regions": [{"userId": "anchor", "x": 0, "y": 0, "width": 640, "height": 360}]}})
    sender = await _sender(cohost)
    viewer_token = _viewer_token(cohost)
    try:
        await asyncio.sleep(ctx["warmup"])
        turns = {"none": [], "viewers": []}
        whep = []
        for turn in range(max(1, int(ctx.get("repeat", 1)))):
            turns["none"].append(await asyncio.to_thread(lambda: cpu_window([cohost.pid], ctx["window"])[cohost.pid]))
            delays = []
            viewers = [await _viewer(cohost, viewer_token, delays) for _ in range(VIEWERS)]
            await asyncio.sleep(3)
            delays.clear()
            turns["viewers"].append(
                await asyncio.to_thread(lambda: cpu_window([cohost.pid], ctx["window"])[cohost.pid]))
            whep += delays
            for pc, tasks in viewers:
                for t in tasks:
                    t.cancel()
                await pc.close()
            log(f"playback: turn {turn}: {turns['none'][-1]:.3f} cores alone, {turns['viewers'][-1]:.3f} with "
                f"{VIEWERS} WHEP viewers; WHEP delay {_summary(delays)}")
        hls = await asyncio.to_thread(_hls_delays, cohost, viewer_token, max(8, ctx["window"]))
        log(f"playback: LL-HLS delay {_summary(hls)}")
        room = min(turns["none"])
        return {"viewers": VIEWERS, "room_cores": round(room, 3),
                "whep_cores": round(min(turns["viewers"]), 3),
                "whep_added_cores": round(min(turns["viewers"]) - room, 4),
                "whep_added_cores_per_viewer": round((min(turns["viewers"]) - room) / VIEWERS, 4),
                "whep_delay": _summary(whep), "llhls_delay": _summary(hls),
                "turns": {k: [round(v, 3) for v in vs] for k, vs in turns.items()}}
    finally:
        await sender.close()


def _viewer_token(cohost):
    import base64
    import hashlib
    import hmac

    def b64(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    now = int(time.time())
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps({"iss": cohost.key, "sub": "bench-viewer", "room": ROOM, "viewer": True, "iat": now,
                           "exp": now + 3600}).encode())
    sig = hmac.new(cohost.secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(sig)}"


def run(ctx):
    _loopback_only()
    workdir = os.path.join(ctx["workdir"], "playback")
    os.makedirs(workdir, exist_ok=True)
    procs = Procs(workdir)
    try:
        cohost = Cohost(procs)
        return asyncio.run(_run(ctx, cohost))
    finally:
        procs.stop()
