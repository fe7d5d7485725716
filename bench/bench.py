"""`make bench`: every benchmark, a table on stdout and bench/results.json (full runs only).

Environment: BENCH_QUICK=1 (short windows, N=2, R=5,10: a smoke run, not figures to quote); BENCH_PARTS
(comma list of video,latency,voice,alloc,return,rooms,cluster,forwarding,simulcast,relay,outputs,playback; default
all); BENCH_WARMUP / BENCH_WINDOW (seconds);
BENCH_SIZES (e.g. 2,4,9); BENCH_REPEAT (windows of each mixer per N, the cheapest counting; default 3, 1 quick); BENCH_VOICE_STEPS (e.g. 10,25,50,75,100);
BENCH_ROOM_STEPS (video rooms of 4 per load-test step, e.g. 1,2,3); COHOST_BIN (default .build/release/cohost); BENCH_OUT (where to write
the JSON; default bench/results.json for a full run, else the run's work directory); BENCH_KEEP=1 (keep logs).
"""
import datetime
import json
import os
import shutil
import sys
import tempfile
import time
import traceback

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import alloc  # noqa: E402
import cluster  # noqa: E402
import forwarding  # noqa: E402
import latency  # noqa: E402
import media  # noqa: E402
import outputs  # noqa: E402
import playback  # noqa: E402
import relay  # noqa: E402
import report  # noqa: E402
import returnpath  # noqa: E402
import rooms  # noqa: E402
import video  # noqa: E402
import voice  # noqa: E402
from lib import COHOST_BIN, QUICK, ROOT, log, machine_info  # noqa: E402

CACHE = os.environ.get("BENCH_CACHE", "/tmp/cohost-bench-cache")


def _ints(name, default):
    value = os.environ.get(name)
    return [int(x) for x in value.split(",") if x.strip()] if value else default


def config():
    return {
        "quick": QUICK,
        "warmup_s": float(os.environ.get("BENCH_WARMUP", 3 if QUICK else 10)),
        "window_s": float(os.environ.get("BENCH_WINDOW", 5 if QUICK else 20)),
        "video_sizes": _ints("BENCH_SIZES", [2] if QUICK else [2, 4, 9]),
        "simulcast_sizes": _ints("BENCH_SIMULCAST_SIZES", [2] if QUICK else [4, 9]),
        "video_repeat": int(os.environ.get("BENCH_REPEAT", 1 if QUICK else 3)),
        "voice_steps": _ints("BENCH_VOICE_STEPS", [5, 10] if QUICK else [10, 25, 35, 40, 45, 50, 55, 60, 75, 100]),
        "room_steps": _ints("BENCH_ROOM_STEPS", [1, 2] if QUICK else [1, 2, 3, 4, 5, 6]),
        "parts": os.environ.get("BENCH_PARTS", "video,latency,voice,alloc,return,rooms,cluster,forwarding,simulcast,relay,outputs,playback,labels").split(","),
    }


def in_own_network():
    """Re-executes the bench inside a network namespace with only loopback up (every part talks to 127.0.0.1 only;
    the browser participant's ICE can then pair nothing else). Needs root; without it the bench runs as it is."""
    if os.environ.get("COHOST_BENCH_NETNS") == "1" or os.geteuid() != 0 or not shutil.which("unshare"):
        return
    os.environ["COHOST_BENCH_NETNS"] = "1"
    script = 'ip link set lo up && exec "$0" "$@"'
    os.execvp("unshare", ["unshare", "--net", "--", "sh", "-c", script, sys.executable] + sys.argv)


def main():
    in_own_network()
    if not os.path.exists(COHOST_BIN):
        sys.exit(f"{COHOST_BIN} missing: swift build -c release --product cohost")
    cfg = config()
    workdir = tempfile.mkdtemp(prefix="cohost-bench-")
    ivf, opus = media.prepare(CACHE)
    ctx = {"workdir": workdir, "ivf": ivf, "opus": opus, "bench_dir": os.path.dirname(os.path.abspath(__file__)),
           "simulcast": media.prepare_simulcast(CACHE),
           "warmup": cfg["warmup_s"], "window": cfg["window_s"], "repeat": cfg["video_repeat"]}
    started = time.monotonic()
    results = {"schema": 1, "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "machine": machine_info(), "config": cfg,
               "video": None, "latency": None, "voice": None, "alloc": None, "return": None, "rooms": None,
               "cluster": None, "forwarding": None, "simulcast": None, "relay": None, "outputs": None,
               "playback": None, "labels": None, "errors": {}}
    steps = [("video", lambda: video.run(ctx, cfg["video_sizes"])),
             ("latency", lambda: latency.run(ctx, load=1 if QUICK else 3)),
             ("voice", lambda: voice.run(ctx, cfg["voice_steps"])),
             ("alloc", lambda: alloc.run(ctx, n=2 if QUICK else 4)),
             ("return", lambda: returnpath.run(ctx)),
             ("rooms", lambda: rooms.run(ctx, cfg["room_steps"])),
             ("cluster", lambda: cluster.run(ctx)),
             ("forwarding", lambda: forwarding.run(ctx)),
             ("simulcast", lambda: video.run_simulcast(ctx, cfg["simulcast_sizes"])),
             ("relay", lambda: relay.run(ctx)),
             ("outputs", lambda: outputs.run(ctx)),
             ("playback", lambda: playback.run(ctx)),
             ("labels", lambda: video.run_labels(ctx))]
    for name, fn in steps:
        if name not in cfg["parts"]:
            continue
        log(f"== {name}")
        try:
            results[name] = fn()
        except Exception as e:  # one failed part must not lose the others' figures
            traceback.print_exc()
            results["errors"][name] = f"{type(e).__name__}: {e}"
    results["memory"] = report.memory(results)
    results["targets"] = report.targets(results)
    results["machine"]["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    results["duration_s"] = round(time.monotonic() - started)
    # Only a full run of every part replaces the committed bench/results.json; smoke and partial runs write
    # into their work directory (or BENCH_OUT).
    complete = not QUICK and all(p in cfg["parts"] for p in ("video", "latency", "voice", "alloc", "return", "rooms", "cluster",
                                                             "forwarding", "simulcast", "relay", "outputs",
                                                             "playback"))
    keep = bool(results["errors"] or os.environ.get("BENCH_KEEP") or not complete)
    out = os.environ.get("BENCH_OUT") or (os.path.join(ROOT, "bench", "results.json") if complete
                                          else os.path.join(workdir, "results.json"))
    with open(out, "w") as f:
        json.dump(results, f, indent=2, sort_keys=True)
        f.write("\n")
    print(report.table(results))
    print(f"\nwrote {out} in {results['duration_s']} s")
    if keep:
        print(f"logs kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if results["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
