"""Part 8: what forwarding costs. One room of 4 `cohost load-test` participants, each sending 640x360 VP8 at 30 fps
(800 kb/s) and Opus, with no output: once with no receive slots, once with 3 each (every participant receives the
three others' cameras, forwarded). The two alternate (A B A B A B) so a burst of the host's steal hits both alike;
the cheapest window of each counts. Reported: Cohost's cores for each, the difference, and what came back on the
slots per receiver (packets a second, kb/s), from the load tester's own count. Then the same two rooms once more
under the allocation counter of part 5 (malloc_count.c), to show what forwarding allocates per forwarded packet."""
import os
import time

import alloc
from lib import Cohost, Procs, cpu_window, hold_load_test, log

PARTICIPANTS = 4
SLOTS = 3
#: The added cost forwarding may have (the target: 0.03 cores for a room of 4 receiving 3 each).
LIMIT_CORES = 0.03


def _window(ctx, cohost, slots, prefix, count_file=None):
    args = ["--rooms", "1", "--participants", str(PARTICIPANTS), "--slots", str(slots), "--prefix", prefix]

    def measure(proc):
        allocs0, t0 = (alloc._allocs(count_file), time.monotonic()) if count_file else (0, 0)
        cores = cpu_window([cohost.pid], ctx["window"])[cohost.pid]
        allocs = (alloc._allocs(count_file) - allocs0) / (time.monotonic() - t0) if count_file else None
        return cores, allocs

    report, (cores, allocs_per_s) = hold_load_test(ctx, cohost, args, measure)
    room = report["rooms"][0]
    out = {"cores": round(cores, 3), "forwarded_pkt_per_s": round(room["forwardedPacketsPerSecond"], 1),
           "forwarded_kbps": round(room["forwardedKbps"], 1), "real_time": room["realTime"]}
    if allocs_per_s is not None:
        out["allocs_per_s"] = round(allocs_per_s, 1)
    return out


def run(ctx):
    workdir = os.path.join(ctx["workdir"], "forwarding")
    os.makedirs(workdir, exist_ok=True)
    procs = Procs(workdir)
    windows = {0: [], SLOTS: []}
    try:
        cohost = Cohost(procs)
        for i in range(max(1, ctx["repeat"])):
            for slots in (0, SLOTS):
                w = _window(ctx, cohost, slots, f"f{slots}x{i}")
                log(f"  forwarding, {slots} slots each: {w}")
                windows[slots].append(w)
    finally:
        procs.stop()
    # Allocations: a cohost of its own under the counter (it slows every call a little, so not the CPU windows).
    counted = {}
    procs = Procs(workdir)
    try:
        shim = alloc.build_shim(workdir)
        count_file = os.path.join(workdir, "malloc-forwarding.bin")
        cohost = Cohost(procs, name="cohost-alloc", env={"LD_PRELOAD": shim, "MALLOC_COUNT_FILE": count_file})
        for slots in (0, SLOTS):
            counted[slots] = _window(ctx, cohost, slots, f"a{slots}", count_file=count_file)
            log(f"  forwarding allocations, {slots} slots each: {counted[slots]}")
    finally:
        procs.stop()
    forwarded_total = counted[SLOTS]["forwarded_pkt_per_s"] * PARTICIPANTS
    extra_allocs = counted[SLOTS]["allocs_per_s"] - counted[0]["allocs_per_s"]
    without = min(windows[0], key=lambda w: w["cores"])
    with_slots = min(windows[SLOTS], key=lambda w: w["cores"])
    added = round(with_slots["cores"] - without["cores"], 3)
    return {"participants": PARTICIPANTS, "slots_each": SLOTS, "cores_without_slots": without["cores"],
            "cores_with_slots": with_slots["cores"], "added_cores": added, "limit_cores": LIMIT_CORES,
            "forwarded_pkt_per_s_per_receiver": with_slots["forwarded_pkt_per_s"],
            "forwarded_kbps_per_receiver": with_slots["forwarded_kbps"],
            "allocs_per_s_without_slots": counted[0]["allocs_per_s"],
            "allocs_per_s_with_slots": counted[SLOTS]["allocs_per_s"],
            "allocs_per_forwarded_packet": round(extra_allocs / forwarded_total, 3) if forwarded_total else None,
            "windows": windows}
