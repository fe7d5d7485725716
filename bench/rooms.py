"""Part 6: video rooms per machine, measured with `cohost load-test`. Each room: 4 participants, each sending 640x360
VP8 at 30 fps (800 kb/s) and Opus, all joined sendrecv (each receives its mix-minus and the room view); the room
composes 1280x720 at 30 fps and pushes H.264 + AAC to nginx-rtmp. For each R of the steps, one load-test run makes R
fresh rooms; after the warm-up, Cohost's cores are measured over the window while the load tester holds. A step is
held when the load tester finds every room in real time (each sender decoded at >= 90 % of its rate, no frame dropped
to keep up, the output connected at >= 90 % of 30 fps) and Cohost stays under CPU_LIMIT cores; a step that fails is
measured again once (one window can be a burst of the host's steal)."""
import os
import time

from lib import COHOST_BIN, Cohost, Nginx, Procs, cpu_window, hold_load_test, log, machine_load_window, rss_mib

PARTICIPANTS = 4
CPU_LIMIT = 1.6


def _load_test(ctx, cohost, nginx, rooms, prefix):
    """Runs one load test; returns (report, Cohost's cores, the load tester's cores, the machine's load), the cores
    measured while it held everyone."""
    args = ["--rooms", str(rooms), "--participants", str(PARTICIPANTS), "--receive", "--prefix", prefix,
            "--output", nginx.url("{room}")]

    def measure(proc):
        return proc.pid, machine_load_window(lambda: cpu_window([cohost.pid, proc.pid], ctx["window"]))

    report, (tester, (cores, load)) = hold_load_test(ctx, cohost, args, measure, 60 + 5 * rooms * PARTICIPANTS)
    return report, cores[cohost.pid], cores[tester], load


def _step(ctx, cohost, nginx, rooms, attempt):
    report, c, tester, load = _load_test(ctx, cohost, nginx, rooms, f"v{rooms}x{attempt}")
    per_room = report["rooms"]
    held_rooms = sum(1 for r in per_room if r["realTime"])
    fps = [r["serverVideoFpsMin"] for r in per_room if r["serverVideoFpsMin"] is not None]
    out_fps = [r["outputVideoFps"] for r in per_room if r.get("outputVideoFps") is not None]
    step = {"rooms": rooms, "participants": rooms * PARTICIPANTS, "cores": round(c, 3),
            "cores_per_room": round(c / rooms, 3), "load_tester_cores": round(tester, 3),
            **load, "rooms_real_time": held_rooms,
            "min_sender_fps": min(fps) if fps else None, "min_output_fps": round(min(out_fps), 2) if out_fps else None,
            "frames_dropped": sum(r["serverFramesDropped"] for r in per_room),
            "join_ms_max": round(max(r["joinMsMax"] for r in per_room), 1),
            "view_fps_back": round(min(r["returnVideoFps"] for r in per_room), 1),
            "mix_minus_pkt_per_s_back": round(min(r["returnAudioPacketsPerSecond"] for r in per_room), 1),
            "clock_skipped_ticks": report.get("clockSkippedTicks")}
    step["held"] = held_rooms == rooms and c <= CPU_LIMIT
    return step


def run(ctx, steps):
    workdir = os.path.join(ctx["workdir"], "rooms")
    os.makedirs(workdir, exist_ok=True)
    procs = Procs(workdir)
    results = []
    try:
        nginx = Nginx(procs, workdir)
        cohost = Cohost(procs)
        time.sleep(1.0)
        rss0 = rss_mib(cohost.pid)
        for rooms in steps:
            step = _step(ctx, cohost, nginx, rooms, 1)
            if not step["held"]:
                log(f"  video rooms R={rooms}: not held, measuring again: {step}")
                first = step
                step = _step(ctx, cohost, nginx, rooms, 2)
                step["first_window"] = first
            step["rss_after_mib"] = round(rss_mib(cohost.pid) - rss0, 1)
            log(f"  video rooms R={rooms}: {step}")
            results.append(step)
            if not step["held"]:
                break
    finally:
        procs.stop()
    held = [s for s in results if s["held"]]
    best = held[-1] if held else None
    return {"steps": results, "participants_per_room": PARTICIPANTS, "binary": os.path.basename(COHOST_BIN),
            "max_rooms_held": best["rooms"] if best else 0,
            "cores_per_room": best["cores_per_room"] if best else None}
