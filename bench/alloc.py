"""Part 5: heap allocations in the steady state, counted by an LD_PRELOAD shim (malloc_count.c, built here with
gcc) in the real cohost process. Each room is measured twice over the same window: with its output running but
nobody in it (the mix clock, encoders and output alone), then with its participants sending; the difference,
per second and per participant, per received datagram and per decoded video frame, is what the packet and
frame path allocates.

BENCH_ALLOC_TRACE=DIR also turns on malloc_count.c's trace mode (one stack per MALLOC_COUNT_TRACE_EVERY
allocations, default 1 here) and writes each measured window's records alone to DIR/<room>-<window>.bin (with its
.maps), so `python3 bench/alloc_sites.py DIR/voice-base.bin` ranks the sites of exactly that window: the steady
state, without start-up, joins or the warm-up."""
import json
import os
import struct
import subprocess
import shutil
import socket
import time

from lib import Cohost, Nginx, Procs, free_port, http, make_token, metric_values
from video import _replayer, cohost_room

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
TRACE_DIR = os.environ.get("BENCH_ALLOC_TRACE")
TRACE_HEADER, TRACE_RECORD = 8, 32  # uint64 words (malloc_count.c)


def _env(shim, count_file, room):
    """The shim's environment for one cohost; the trace file (if tracing) is the room's own."""
    env = {"LD_PRELOAD": shim, "MALLOC_COUNT_FILE": count_file}
    if TRACE_DIR:
        os.makedirs(TRACE_DIR, exist_ok=True)
        env["MALLOC_COUNT_TRACE"] = os.path.join(TRACE_DIR, f"{room}-all.bin")
        env["MALLOC_COUNT_TRACE_EVERY"] = os.environ.get("MALLOC_COUNT_TRACE_EVERY", "1")
    return env


def _trace_used(room):
    if not TRACE_DIR:
        return None
    return struct.unpack("<2Q", open(os.path.join(TRACE_DIR, f"{room}-all.bin"), "rb").read(16))[1]


def _trace_slice(room, window, start, stop):
    """Copies the records taken from `start` to `stop` into DIR/<room>-<window>.bin, a trace of its own."""
    if start is None:
        return
    path = os.path.join(TRACE_DIR, f"{room}-all.bin")
    with open(path, "rb") as f:
        magic, _, capacity, every = struct.unpack("<4Q", f.read(32))
        end = min(stop, capacity)
        f.seek((TRACE_HEADER + start * TRACE_RECORD) * 8)
        records = f.read(max(0, end - start) * TRACE_RECORD * 8)
    out = os.path.join(TRACE_DIR, f"{room}-{window}.bin")
    n = len(records) // (TRACE_RECORD * 8)
    with open(out, "wb") as f:
        f.write(struct.pack("<8Q", magic, n, n, every, 0, 0, 0, 0) + records)
    shutil.copy(path + ".maps", out + ".maps")


def build_shim(workdir):
    out = os.path.join(workdir, "malloc_count.so")
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", out, os.path.join(BENCH_DIR, "malloc_count.c")],
                   check=True)
    return out


def _allocs(path):
    c = struct.unpack("<8Q", open(path, "rb").read(64))
    return c[0] + c[1] + c[2] + c[5]


def _counters(cohost):
    text = cohost.metrics()
    dgrams = sum(v for _, v in metric_values(text, "cohost_udp_datagrams"))
    frames = sum(v for labels, v in metric_values(text, "cohost_stream_frames_decoded") if labels.get("kind") == "video")
    return dgrams, frames


def _timed_counters(cohost):
    """(when, counters): one scrape's counters, timed at the middle of the request."""
    start = time.monotonic()
    counters = _counters(cohost)
    return (start + time.monotonic()) / 2, counters


def _rate(ctx, cohost, count_file, room=None, window=None):
    """Allocations, datagrams and decoded video frames per second over the window (after the warm-up)."""
    time.sleep(ctx["warmup"])
    # The /metrics scrapes that read the datagram counters happen outside the counted allocations: rendering
    # them allocates per participant, which is the bench's probe, not the packet path.
    # Each rate over its own span.
    m0, (d0, f0) = _timed_counters(cohost)
    a0, t0, traced = _allocs(count_file), time.monotonic(), _trace_used(room)
    time.sleep(ctx["window"])
    a1, t1, used = _allocs(count_file), time.monotonic(), _trace_used(room)
    m1, (d1, f1) = _timed_counters(cohost)
    _trace_slice(room, window, traced, used)
    dt, dm = t1 - t0, m1 - m0
    return {"allocs_per_s": (a1 - a0) / dt, "datagrams_per_s": (d1 - d0) / dm, "video_frames_per_s": (f1 - f0) / dm}


def _summary(base, steady, participants):
    extra = steady["allocs_per_s"] - base["allocs_per_s"]
    return {"participants": participants,
            "allocs_per_s_room_only": round(base["allocs_per_s"], 1),
            "allocs_per_s_with_participants": round(steady["allocs_per_s"], 1),
            "allocs_per_s_per_participant": round(extra / participants, 1),
            "datagrams_per_s": round(steady["datagrams_per_s"], 1),
            "allocs_per_datagram": round(extra / steady["datagrams_per_s"], 2) if steady["datagrams_per_s"] else None,
            "video_frames_per_s": round(steady["video_frames_per_s"], 1)}


def video_room(ctx, shim, n=4):
    count_file = os.path.join(ctx["workdir"], f"malloc-video{n}.bin")
    env = _env(shim, count_file, "video")
    got = {}
    keep = {"before_join": lambda cohost, procs: got.update(base=_rate(ctx, cohost, count_file, "video", "base")),
            "steady": lambda cohost, procs: _rate(ctx, cohost, count_file, "video", "steady")}
    steady = cohost_room(ctx, n, extra_env=env, name="alloc", keep=keep)
    return _summary(got["base"], steady, n)


def voice_room(ctx, shim, speakers=6, receive=False):
    """`receive`: the speakers join sendrecv, so the window also holds the mix-minus encodes and sends."""
    name = "voice-mix-minus" if receive else "voice"
    workdir = os.path.join(ctx["workdir"], f"alloc-{name}")
    os.makedirs(workdir, exist_ok=True)
    count_file = os.path.join(workdir, "malloc-voice.bin")
    procs = Procs(workdir)
    try:
        nginx = Nginx(procs, workdir)
        cohost = Cohost(procs, env=_env(shim, count_file, name))
        cohost.create_room({"name": "voice", "audioOnly": True, "audio": {"bitrate": 64, "channels": 1},
                            "outputs": [{"url": nginx.url("voice")}]})
        base = _rate(ctx, cohost, count_file, name, "base")
        streams = []
        for k in range(speakers):
            cohost.join("voice", f"s{k}", 5000 + k, direction="sendrecv" if receive else "sendonly")
            streams.append({"kind": "audio", "ssrc": 5000 + k, "pt": 111, "dest": ["127.0.0.1", cohost.rtp_port],
                            "track": "voice_dtx" if k < speakers // 2 else "voice", "start": 37 * k})
        _replayer(procs, workdir, ctx, streams, bind=["127.0.0.1", free_port(socket.SOCK_DGRAM)] if receive else None)
        steady = _rate(ctx, cohost, count_file, name, "steady")
        return _summary(base, steady, speakers)
    finally:
        procs.stop()


def _source_counts(cohost, room):
    status, text = http("GET", f"{cohost.base}/v1/rooms/{room}/sources", cohost.admin)
    source = json.loads(text)["sources"][0] if status == 200 else {}
    return source.get("picturesDecoded", 0), source.get("audioFrames", 0), source.get("framesForwarded", 0)


def source_room(ctx, shim):
    """A looping file (640x360 H.264 baseline at 30 fps and AAC) as a source on the canvas, in the mix and in one
    receiver's slot (its own H.264, not decoded for it): the room with its output and the receiver is measured
    first, then with the source. The difference, per picture, is what the source's path allocates: the reader, the
    decoders, the feed and the forwarding."""
    name = "source"
    workdir = os.path.join(ctx["workdir"], "alloc-source")
    os.makedirs(workdir, exist_ok=True)
    count_file = os.path.join(workdir, "malloc-source.bin")
    procs = Procs(workdir)
    try:
        nginx = Nginx(procs, workdir)
        cohost = Cohost(procs, env=_env(shim, count_file, name))
        os.makedirs(cohost.media_dir, exist_ok=True)
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                        "testsrc2=s=640x360:r=30:d=10", "-f", "lavfi", "-i", "sine=f=440:d=10:sample_rate=48000",
                        "-c:v", "libx264", "-profile:v", "baseline", "-g", "60", "-b:v", "1000k", "-pix_fmt",
                        "yuv420p", "-c:a", "aac", "-shortest", os.path.join(cohost.media_dir, "clip.mp4")],
                       check=True, timeout=120)
        cohost.create_room({"name": "src", "returnVideo": "none",
                            "canvas": {"width": 640, "height": 360, "fps": 30},
                            "outputs": [{"url": nginx.url("src")}]})
        # The receiver: an Opus sender (so that Cohost learns its address) with one H.264 slot.
        sdp = "\r\n".join([
            "v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "c=IN IP4 127.0.0.1", "t=0 0",
            "m=audio 9 RTP/AVP 111", "a=rtpmap:111 opus/48000/2", "a=ssrc:7001", "a=sendonly",
            "m=video 9 RTP/AVP 102", "a=mid:s1", "a=rtpmap:102 H264/90000",
            "a=fmtp:102 packetization-mode=1;profile-level-id=42e01f", "a=rtcp-fb:102 nack pli", "a=recvonly"]) + "\r\n"
        status, text = http("POST", f"{cohost.base}/v1/rooms/src/participants",
                            make_token(cohost.key, cohost.secret, "src", "viewer"), sdp, "application/sdp")
        if status != 201:
            raise RuntimeError(f"join src/viewer: {status} {text}")
        _replayer(procs, workdir, ctx, [{"kind": "audio", "ssrc": 7001, "pt": 111,
                                         "dest": ["127.0.0.1", cohost.rtp_port], "track": "voice", "start": 0}],
                  bind=["127.0.0.1", free_port(socket.SOCK_DGRAM)])
        base = _rate(ctx, cohost, count_file, name, "base")
        status, text = http("POST", f"{cohost.base}/v1/rooms/src/sources", cohost.admin,
                            {"userId": "clip", "url": "file://clip.mp4", "loop": True})
        if status != 201:
            raise RuntimeError(f"add source: {status} {text}")
        time.sleep(ctx["warmup"])
        p0, au0, f0 = _source_counts(cohost, "src")
        a0, t0, traced = _allocs(count_file), time.monotonic(), _trace_used(name)
        time.sleep(ctx["window"])
        a1, t1, used = _allocs(count_file), time.monotonic(), _trace_used(name)
        p1, au1, f1 = _source_counts(cohost, "src")
        _trace_slice(name, "steady", traced, used)
        dt = t1 - t0
        extra = (a1 - a0) / dt - base["allocs_per_s"]
        pictures, forwarded = (p1 - p0) / dt, (f1 - f0) / dt
        return {"allocs_per_s_room_only": round(base["allocs_per_s"], 1),
                "allocs_per_s_with_source": round((a1 - a0) / dt, 1),
                "source_pictures_per_s": round(pictures, 1),
                "source_audio_frames_per_s": round((au1 - au0) / dt, 1),
                "source_units_forwarded_per_s": round(forwarded, 1),
                "allocs_per_source_picture": round(extra / pictures, 2) if pictures else None}
    finally:
        procs.stop()


def run(ctx, n=4):
    shim = build_shim(ctx["workdir"])
    return {"video_room": video_room(ctx, shim, n), "voice_room": voice_room(ctx, shim),
            "voice_room_mix_minus": voice_room(ctx, shim, receive=True), "source_room": source_room(ctx, shim)}
