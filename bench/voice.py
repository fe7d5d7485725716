"""Part 3: voice rooms. R audio-only rooms x 6 Opus speakers (3 with DTX), each room pushing AAC to nginx-rtmp and
sending every speaker its mix-minus (the speakers join sendrecv; each step's replayer sends from one port and
drains what comes back there).
R grows in steps (rooms are added, never restarted) until a room's output falls behind real time or Cohost passes
1.6 cores, in two windows running (one window can be a burst of the host's steal). Speakers are replayed by one Python process per step (not counted in Cohost's CPU).

First, idle rooms: 90 voice rooms and 10 720p rooms with nobody in them and no output (rooms created ahead of
their users), against the same server with no room at all; they are closed before the steps."""
import json
import os
import time

import socket

import janus
from lib import Cohost, Nginx, Procs, cpu_window, free_port, http, log, machine_load_window, metric_values, rss_mib

SPEAKERS = 6
AAC_FPS = 48000 / 1024          # AAC frames per second at 48 kHz
REALTIME = 0.97                 # a room keeps real time when its output sends at least 97 % of that
CPU_LIMIT = 1.6


def _add_rooms(ctx, procs, workdir, cohost, nginx, first, last):
    streams = []
    for r in range(first, last):
        room = f"voice{r}"
        cohost.create_room({"name": room, "audioOnly": True, "maxParticipants": SPEAKERS,
                            "audio": {"bitrate": 64, "channels": 1}, "outputs": [{"url": nginx.url(room)}]})
        for k in range(SPEAKERS):
            ssrc = 100000 + r * 10 + k
            cohost.join(room, f"s{k}", ssrc, direction="sendrecv")
            streams.append({"kind": "audio", "ssrc": ssrc, "pt": 111, "dest": ["127.0.0.1", cohost.rtp_port],
                            "track": "voice_dtx" if k < SPEAKERS // 2 else "voice", "start": 37 * k + 11 * r})
    cfg = os.path.join(workdir, f"replay-{first}-{last}.json")
    json.dump({"opus": ctx["opus"], "streams": streams, "bind": ["127.0.0.1", free_port(socket.SOCK_DGRAM)]},
              open(cfg, "w"))
    return procs.start(f"replay-{first}-{last}", ["python3", os.path.join(ctx["bench_dir"], "rtp_replay.py"), cfg])


def _room_rates(cohost, rooms, seconds):
    """Each room's output AAC frames per second, from the `cohost_output_audio_fps` gauge (None if missing)."""
    text = cohost.metrics()
    fps = {labels.get("room"): v for labels, v in metric_values(text, "cohost_output_audio_fps")}
    return {r: fps.get(r) for r in rooms}


IDLE_VOICE, IDLE_VIDEO = 90, 10


def _idle_rooms(ctx, cohost):
    """Cores of the server with no room, then with the idle rooms; per idle room in % of a core."""
    window = min(ctx["window"], 10)
    empty = cpu_window([cohost.pid], window)[cohost.pid]
    names = [f"idle{r}" for r in range(IDLE_VOICE + IDLE_VIDEO)]
    for i, name in enumerate(names):
        body = {"name": name, "audioOnly": True} if i < IDLE_VOICE else \
            {"name": name, "canvas": {"width": 1280, "height": 720, "fps": 30}}
        cohost.create_room(body)
    time.sleep(min(ctx["warmup"], 3))
    idle = cpu_window([cohost.pid], window)[cohost.pid]
    for name in names:
        http("DELETE", f"{cohost.base}/v1/rooms/{name}", cohost.admin)
    result = {"voice_rooms": IDLE_VOICE, "video_rooms": IDLE_VIDEO, "no_rooms_cores": round(empty, 4),
              "cores": round(idle, 4), "cores_per_room_pct": round(100 * max(0.0, idle - empty) / len(names), 4)}
    log(f"  idle rooms: {result}")
    return result


def _return_packets(cohost):
    """Mix-minus packets Cohost has sent so far, every participant together."""
    return sum(v for labels, v in metric_values(cohost.metrics(), "cohost_return_packets")
               if labels.get("kind") == "audio")


def _measure_step(ctx, procs, cohost, replayers, have, rss0):
    """One window over the `have` rooms running: Cohost's cores, each room's output rate, the mix-minus packets
    sent a second, whether it held."""
    procs.check_alive()
    pids = [cohost.pid] + [p.pid for p in replayers]
    sent0, t0 = _return_packets(cohost), time.monotonic()
    cores, load = machine_load_window(lambda: cpu_window(pids, ctx["window"]))
    back = (_return_packets(cohost) - sent0) / (time.monotonic() - t0)
    rooms = [f"voice{r}" for r in range(have)]
    rates = _room_rates(cohost, rooms, ctx["window"])
    known = [v for v in rates.values() if v is not None]
    slow = [r for r, v in rates.items() if v is not None and v < REALTIME * AAC_FPS]
    c = cores[cohost.pid]
    step = {"rooms": have, "speakers": have * SPEAKERS, "cores": round(c, 3),
            "cores_per_speaker_pct": round(100 * c / (have * SPEAKERS), 3),
            "sender_cores": round(sum(cores[p.pid] for p in replayers), 3), **load,
            "rss_per_room_mib": round((rss_mib(cohost.pid) - rss0) / have, 2),
            "min_room_audio_fps": round(min(known), 2) if known else None,
            "rooms_behind": len(slow), "rooms_reporting": len(known),
            "mix_minus_packets_per_s": round(back, 1)}
    step["held"] = bool(known) and not slow and c <= CPU_LIMIT
    return step


def run(ctx, steps):
    workdir = os.path.join(ctx["workdir"], "voice")
    os.makedirs(workdir, exist_ok=True)
    procs = Procs(workdir)
    results = []
    try:
        nginx = Nginx(procs, workdir)
        cohost = Cohost(procs)
        time.sleep(1.0)
        idle = _idle_rooms(ctx, cohost)
        time.sleep(1.0)
        rss0 = rss_mib(cohost.pid)
        have = 0
        replayers = []
        for target in steps:
            replayers.append(_add_rooms(ctx, procs, workdir, cohost, nginx, have, target))
            have = target
            time.sleep(ctx["warmup"])
            step = _measure_step(ctx, procs, cohost, replayers, have, rss0)
            if not step["held"]:
                # A window can fall behind because the host stole the cores (BENCHMARKS.md): a step fails when a
                # second window, right after, falls behind too. Both windows are kept.
                log(f"  voice R={have}: not held, measuring again: {step}")
                first = step
                step = _measure_step(ctx, procs, cohost, replayers, have, rss0)
                step["first_window"] = first
            log(f"  voice R={have}: {step}")
            results.append(step)
            if not step["held"]:
                break
    finally:
        procs.stop()
    held = [s for s in results if s["held"]]
    best = held[-1] if held else None
    # Janus AudioBridge on the senders of the first step, alone on the machine (Cohost has stopped). A Janus that
    # fails is reported as such; Cohost's figures stand.
    try:
        janus_result = janus.run(ctx, steps[0], SPEAKERS) if results else None
    except Exception as e:  # noqa: BLE001 (any failure of a third-party server)
        log(f"  janus failed: {e}")
        janus_result = f"janus failed: {e}"
    return {"steps": results, "idle": idle, "max_rooms_held": best["rooms"] if best else 0,
            "cores_per_speaker_pct": best["cores_per_speaker_pct"] if best else None,
            "rss_per_voice_room_mib": best["rss_per_room_mib"] if best else None,
            "janus": janus_result if janus_result else "janus not installed"}
