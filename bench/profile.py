"""Where Cohost's CPU goes: one steady room (a voice room of N speakers, default 6, or a 720p room of N video
participants, default 2) sampled for PROFILE_SECONDS (default 30) with `perf record -e cpu-clock` (software
clock: this machine has no hardware counters), then the self-time top of `perf report` by shared object and symbol.
(valgrind 3.19's callgrind crashes in cohost here, and cannot read the DWARF 5 swiftc writes.)

    python3 bench/profile.py voice|video [N]      (PROFILE_ROOMS=R: R voice rooms of N speakers)
"""
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import media  # noqa: E402
from lib import Cohost, Nginx, Procs, free_port, grid_regions  # noqa: E402
from video import _replayer  # noqa: E402


def main():
    kind = sys.argv[1] if len(sys.argv) > 1 else "voice"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else (6 if kind == "voice" else 2)
    seconds = float(os.environ.get("PROFILE_SECONDS", "30"))
    workdir = tempfile.mkdtemp(prefix="cohost-profile-")
    ivf, opus = media.prepare(os.environ.get("BENCH_CACHE", "/tmp/cohost-bench-cache"))
    ctx = {"ivf": ivf, "opus": opus, "bench_dir": os.path.dirname(os.path.abspath(__file__))}
    out = os.path.join(workdir, "perf.data")
    # PROFILE_RETURN=1: participants join sendrecv and receive the return path (mix-minus, room view).
    direction = "sendrecv" if os.environ.get("PROFILE_RETURN") else "sendonly"
    procs = Procs(workdir)
    try:
        nginx = Nginx(procs, workdir)
        cohost = Cohost(procs)
        streams = []
        if kind == "voice":
            for r in range(int(os.environ.get("PROFILE_ROOMS", "1"))):
                cohost.create_room({"name": f"v{r}", "audioOnly": True, "audio": {"bitrate": 64, "channels": 1},
                                    "outputs": [{"url": nginx.url(f"v{r}")}]})
                for k in range(n):
                    ssrc = 5000 + 100 * r + k
                    cohost.join(f"v{r}", f"s{k}", ssrc, direction=direction)
                    streams.append({"kind": "audio", "ssrc": ssrc, "pt": 111, "dest": ["127.0.0.1", cohost.rtp_port],
                                    "track": "voice_dtx" if k < n // 2 else "voice", "start": 37 * k + 7 * r})
        else:
            cohost.create_room({"name": "v", "canvas": {"width": 1280, "height": 720, "fps": 30},
                                "video": {"bitrate": 2000, "keyint": 2},
                                "layout": {"mode": "custom", "regions": [
                                    {"userId": f"p{i}", "x": x, "y": y, "width": w, "height": h, "fit": "stretch"}
                                    for i, (x, y, w, h) in enumerate(grid_regions(n))]},
                                "outputs": [{"url": nginx.url("v")}]})
            for i in range(n):
                cohost.join("v", f"p{i}", 1000 + i, 2000 + i, direction=direction)
                dest = ["127.0.0.1", cohost.rtp_port]
                streams += [{"kind": "video", "ssrc": 2000 + i, "pt": 96, "dest": dest},
                            {"kind": "audio", "ssrc": 1000 + i, "pt": 111, "dest": dest, "track": "tone"}]
        _replayer(procs, workdir, ctx, streams,
                  bind=["127.0.0.1", free_port(socket.SOCK_DGRAM)] if direction == "sendrecv" else None)
        time.sleep(8)
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", *os.environ.get("PROFILE_PERF_ARGS", "").split(), "-F", "999", "-p", str(cohost.pid), "-o", out,
                        "--", "sleep", str(seconds)], check=True, capture_output=True)
    finally:
        procs.stop()
    for sort in ("dso", "dso,symbol"):
        text = subprocess.run(["perf", "report", "-i", out, "--no-children", "--sort", sort, "--stdio",
                               "--percent-limit", "0.7"], capture_output=True, text=True).stdout
        print("\n".join(line[:200] for line in text.splitlines() if line and not line.startswith("#")))
        print()
    print(f"perf data in {out}")


if __name__ == "__main__":
    main()
