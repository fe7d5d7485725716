"""Part 5: heap allocations in the steady state, counted by an LD_PRELOAD shim (malloc_count.c, built here with
gcc) in the real cohost process. Each room is measured twice over the same window: with its output running but
nobody in it (the mix clock, encoders and output alone), then with its participants sending; the difference,
per second and per participant, per received datagram and per decoded video frame, is what the packet and
frame path allocates."""
import json
import os
import struct
import subprocess
import time

from lib import Cohost, Nginx, Procs, metric_values
from video import _replayer, cohost_room

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))


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


def _rate(ctx, cohost, count_file):
    """Allocations, datagrams and decoded video frames per second over the window (after the warm-up)."""
    time.sleep(ctx["warmup"])
    a0, (d0, f0), t0 = _allocs(count_file), _counters(cohost), time.monotonic()
    time.sleep(ctx["window"])
    a1, (d1, f1), t1 = _allocs(count_file), _counters(cohost), time.monotonic()
    dt = t1 - t0
    return {"allocs_per_s": (a1 - a0) / dt, "datagrams_per_s": (d1 - d0) / dt, "video_frames_per_s": (f1 - f0) / dt}


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
    env = {"LD_PRELOAD": shim, "MALLOC_COUNT_FILE": count_file}
    got = {}
    keep = {"before_join": lambda cohost, procs: got.update(base=_rate(ctx, cohost, count_file)),
            "steady": lambda cohost, procs: _rate(ctx, cohost, count_file)}
    steady = cohost_room(ctx, n, extra_env=env, name="alloc", keep=keep)
    return _summary(got["base"], steady, n)


def voice_room(ctx, shim, speakers=6):
    workdir = os.path.join(ctx["workdir"], "alloc-voice")
    os.makedirs(workdir, exist_ok=True)
    count_file = os.path.join(workdir, "malloc-voice.bin")
    procs = Procs(workdir)
    try:
        nginx = Nginx(procs, workdir)
        cohost = Cohost(procs, env={"LD_PRELOAD": shim, "MALLOC_COUNT_FILE": count_file})
        cohost.create_room({"name": "voice", "audioOnly": True, "audio": {"bitrate": 64, "channels": 1},
                            "outputs": [{"url": nginx.url("voice")}]})
        base = _rate(ctx, cohost, count_file)
        streams = []
        for k in range(speakers):
            cohost.join("voice", f"s{k}", 5000 + k)
            streams.append({"kind": "audio", "ssrc": 5000 + k, "pt": 111, "dest": ["127.0.0.1", cohost.rtp_port],
                            "track": "voice_dtx" if k < speakers // 2 else "voice", "start": 37 * k})
        _replayer(procs, workdir, ctx, streams)
        steady = _rate(ctx, cohost, count_file)
        return _summary(base, steady, speakers)
    finally:
        procs.stop()


def run(ctx, n=4):
    shim = build_shim(ctx["workdir"])
    return {"video_room": video_room(ctx, shim, n), "voice_room": voice_room(ctx, shim)}
