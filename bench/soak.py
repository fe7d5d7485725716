"""`make soak`: RSS of cohost before and during SOAK_MINUTES (default 10) of one steady 720p room with 4 replayed
participants; prints RSS every minute, the readings at minute 2 and at the end, and their ratio (target 1 +- 5 %).
Writes bench/soak.json (shorter runs: into their work directory)."""
import json
import os
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import media  # noqa: E402
from lib import ROOT, log, machine_info, rss_mib  # noqa: E402
from video import cohost_room  # noqa: E402


def main():
    minutes = float(os.environ.get("SOAK_MINUTES", "10"))
    n = int(os.environ.get("SOAK_PARTICIPANTS", "4"))
    ivf, opus = media.prepare(os.environ.get("BENCH_CACHE", "/tmp/cohost-bench-cache"))
    ctx = {"workdir": tempfile.mkdtemp(prefix="cohost-soak-"), "ivf": ivf, "opus": opus,
           "bench_dir": os.path.dirname(os.path.abspath(__file__)), "warmup": 0, "window": 0}
    readings = {}

    def before(cohost, procs):
        readings["room_without_participants"] = round(rss_mib(cohost.pid), 1)

    def steady(cohost, procs):
        t0 = time.monotonic()
        minute = 0
        while minute < minutes:
            time.sleep(max(0.0, t0 + 60 * (minute + 1) - time.monotonic()))
            procs.check_alive()
            minute += 1
            readings[f"minute_{minute}"] = round(rss_mib(cohost.pid), 1)
            log(f"  minute {minute}: RSS {readings[f'minute_{minute}']} MiB")
        return readings

    cohost_room(ctx, n, name="soak", keep={"before_join": before, "steady": steady})
    last = int(minutes)
    m2, end = readings.get("minute_2"), readings.get(f"minute_{last}")
    ratio = round(end / m2, 4) if m2 and end else None
    result = {"machine": machine_info(), "participants": n, "minutes": minutes, "rss_mib": readings,
              "minute_2_mib": m2, "end_mib": end, "ratio_end_over_minute_2": ratio,
              "within_5_percent": ratio is not None and abs(ratio - 1) <= 0.05}
    # Only a run of the full 10 minutes replaces the committed bench/soak.json.
    out = os.path.join(ROOT, "bench", "soak.json") if minutes >= 10 else os.path.join(ctx["workdir"], "soak.json")
    with open(out, "w") as f:
        json.dump(result, f, indent=2, sort_keys=True)
        f.write("\n")
    print(f"RSS of the room before anyone joined {readings['room_without_participants']} MiB; minute 2: {m2} MiB; minute {last}: {end} MiB; "
          f"ratio {ratio} ({'within' if result['within_5_percent'] else 'OUTSIDE'} +-5 %)")
    return 0 if result["within_5_percent"] else 1


if __name__ == "__main__":
    sys.exit(main())
