"""Part 6: the return path. (a) What the room view adds: the N=4 video room of part 1 with its participants
joined sendonly (nothing back) and sendrecv (mix-minus and the 640x360 room view back to each), windows in turns,
the cheapest of each. (b) Return latency: bench/ReturnProbe (a Swift client on Cohost's own codecs) joins a
beeping participant that burns its capture time into its frames and a listener; it reports how long after the
beep's first packet was sent the listener received its onset in the mix-minus, and how old each decoded picture
of the room view was on arrival (p50/p95). (c) The same probe with the listener's video line a receive slot (a room
without a room view): the beeper's own pictures forwarded, so the two figures give how far its voice in the
mix-minus runs behind its forwarded picture (target: at most 100 ms behind, at most 40 ms ahead)."""
import json
import os
import subprocess

import video
from lib import ROOT, Cohost, Procs, log

PROBE = os.environ.get("RETURN_PROBE_BIN", os.path.join(ROOT, ".build/release/ReturnProbe"))


def _view_cost(ctx, n=4):
    repeat = max(1, int(ctx.get("repeat", 1)))
    off, on = [], []
    for k in range(repeat):
        off.append(video.cohost_room(ctx, n, name=f"view-off-{k}"))
        log(f"  N={n} nothing back ({k + 1}/{repeat}): {off[-1]}")
        on.append(video.cohost_room(ctx, n, name=f"view-on-{k}", receive=True))
        log(f"  N={n} mix-minus + room view back ({k + 1}/{repeat}): {on[-1]}")
    a, b = min(off, key=lambda s: s["cores"]), min(on, key=lambda s: s["cores"])
    return {"participants": n, "nothing_back": a, "with_return": b,
            "added_cores": round(b["cores"] - a["cores"], 3),
            "added_pct_of_room": round(100 * (b["cores"] - a["cores"]) / a["cores"], 1) if a["cores"] else None,
            "samples": [{"off": x["cores"], "on": y["cores"]} for x, y in zip(off, on)]}


def _latency(ctx, forward=False):
    if not os.path.exists(PROBE):
        raise RuntimeError(f"{PROBE} missing: swift build -c release --product ReturnProbe")
    workdir = os.path.join(ctx["workdir"], "return-latency")
    os.makedirs(workdir, exist_ok=True)
    procs = Procs(workdir)
    try:
        cohost = Cohost(procs)
        seconds = max(10, int(ctx["window"]))
        out = subprocess.run([PROBE, "--base", cohost.base, "--rtp-port", str(cohost.rtp_port), "--key", cohost.key,
                              "--secret", cohost.secret, "--seconds", str(seconds)] + (["--forward"] if forward else []),
                             capture_output=True, text=True, timeout=seconds + 60)
        if out.returncode != 0:
            raise RuntimeError(f"ReturnProbe failed: {out.stderr.strip()}")
        return json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        procs.stop()


def run(ctx):
    cost = _view_cost(ctx)
    log(f"  room view cost: {cost['added_cores']} cores ({cost['added_pct_of_room']} % of the room)")
    latency = _latency(ctx)
    log(f"  return latency: {latency}")
    forwarded = _latency(ctx, forward=True)
    sync = {"audio_delay_p50_ms": forwarded["audio_delay_p50_ms"],
            "picture_age_p50_ms": forwarded["view_age_p50_ms"],
            "picture_age_p95_ms": forwarded["view_age_p95_ms"],
            "audio_behind_video_p50_ms": round(forwarded["audio_delay_p50_ms"] - forwarded["view_age_p50_ms"], 1),
            "probe": forwarded}
    log(f"  forwarded picture against the voice: {sync}")
    return {"view_cost": cost, "latency": latency, "forwarded_sync": sync}
