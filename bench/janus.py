"""Part 3b: Janus AudioBridge on the same voice senders. R rooms x 6 plain-RTP Opus participants (Janus's
`allow_rtp_participants`), fed by the same replayed speakers as Cohost's voice step of that size (same tracks, 3
of 6 with DTX, same offsets), rooms at 48 kHz like Cohost's mix. Janus decodes every participant, mixes each room
and encodes a mix-minus Opus stream back to every participant; those streams come back to the replayer, which
counts them (a Janus that mixed nothing would look cheap). It has no RTMP output. Reported: Janus's cores and %
of a core per participant, beside Cohost's per-speaker figure. Runs when `janus` is on PATH (`make bench`
installs it)."""
import json
import os
import shutil
import socket
import time
import urllib.request

from lib import Procs, cpu_window, free_port, log, machine_load_window, wait_tcp

LIB_DIRS = ("/usr/lib/x86_64-linux-gnu/janus", "/usr/lib/aarch64-linux-gnu/janus", "/usr/lib/janus",
            "/opt/janus/lib/janus")


def _lib_dir():
    return next((d for d in LIB_DIRS if os.path.isdir(os.path.join(d, "plugins"))), None)


def _write_config(confdir, lib, http_port, rtp_range):
    """Janus with only the AudioBridge plugin and the HTTP transport, on loopback."""
    def others(kind, keep):
        names = sorted(n for n in os.listdir(os.path.join(lib, kind)) if n.endswith(".so") and n != keep)
        return ",".join(names)
    with open(os.path.join(confdir, "janus.jcfg"), "w") as f:
        f.write(f"""general: {{
  configs_folder = "{confdir}"
  plugins_folder = "{lib}/plugins"
  transports_folder = "{lib}/transports"
  events_folder = "{lib}/events"
  loggers_folder = "{lib}/loggers"
  debug_level = 3
  session_timeout = 0
}}
nat: {{ ice_enforce_list = "lo" }}
plugins: {{ disable = "{others('plugins', 'libjanus_audiobridge.so')}" }}
transports: {{ disable = "{others('transports', 'libjanus_http.so')}" }}
events: {{ broadcast = false }}
""")
    with open(os.path.join(confdir, "janus.transport.http.jcfg"), "w") as f:
        f.write(f"""general: {{ json = "compact" base_path = "/janus" http = true port = {http_port} ip = "127.0.0.1" https = false }}
admin: {{ admin_http = false }}
""")
    with open(os.path.join(confdir, "janus.plugin.audiobridge.jcfg"), "w") as f:
        f.write(f"""general: {{ rtp_port_range = "{rtp_range}" local_ip = "127.0.0.1" events = false }}
""")


class JanusAPI:
    """The Janus HTTP API: one session, a plugin handle per call site, long-poll for asynchronous events."""

    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}/janus"
        self.n = 0
        self.session = self._post(self.base, {"janus": "create"})["data"]["id"]

    def _post(self, url, body):
        self.n += 1
        body = dict(body, transaction=f"t{self.n}")
        req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            reply = json.loads(r.read())
        if reply.get("janus") == "error":
            raise RuntimeError(f"janus: {reply}")
        return reply

    def attach(self):
        reply = self._post(f"{self.base}/{self.session}", {"janus": "attach", "plugin": "janus.plugin.audiobridge"})
        return reply["data"]["id"]

    def message(self, handle, body):
        """A plugin request: synchronous ones answer at once; `join` is acknowledged, then its event is polled."""
        reply = self._post(f"{self.base}/{self.session}/{handle}", {"janus": "message", "body": body})
        if reply.get("janus") == "success":
            return reply["plugindata"]["data"]
        deadline = time.time() + 10
        while time.time() < deadline:
            with urllib.request.urlopen(f"{self.base}/{self.session}?maxev=1", timeout=35) as r:
                event = json.loads(r.read())
            if event.get("sender") == handle and "plugindata" in event:
                return event["plugindata"]["data"]
        raise RuntimeError(f"janus: no answer to {body}")


def run(ctx, rooms, speakers):
    """`rooms` x `speakers` participants on Janus AudioBridge; None when janus is not installed."""
    lib = _lib_dir()
    if not shutil.which("janus") or lib is None:
        return None
    workdir = os.path.join(ctx["workdir"], "janus")
    confdir = os.path.join(workdir, "conf")
    os.makedirs(confdir, exist_ok=True)
    http_port = free_port()
    _write_config(confdir, lib, http_port, "42000-43999")
    procs = Procs(workdir)
    # Janus connects each plain-RTP participant's socket to the address given at join: media must come from
    # there, and the mix-minus goes back there. So the replayer sends from one known port, and counts.
    sender_port = free_port(socket.SOCK_DGRAM)
    try:
        janus = procs.start("janus", ["janus", "-F", confdir, "-C", os.path.join(confdir, "janus.jcfg"), "-o"])
        wait_tcp(http_port, timeout=20)
        api = JanusAPI(http_port)
        admin = api.attach()
        streams = []
        for r in range(rooms):
            room = 1000 + r
            api.message(admin, {"request": "create", "room": room, "sampling_rate": 48000,
                                "allow_rtp_participants": True, "audiolevel_event": False})
            for k in range(speakers):
                joined = api.message(api.attach(), {
                    "request": "join", "room": room, "display": f"s{k}", "codec": "opus",
                    "rtp": {"ip": "127.0.0.1", "port": sender_port, "payload_type": 111}})
                if joined.get("audiobridge") != "joined" or "rtp" not in joined:
                    raise RuntimeError(f"janus join refused: {joined}")
                ssrc = 100000 + r * 10 + k
                streams.append({"kind": "audio", "ssrc": ssrc, "pt": 111,
                                "dest": [joined["rtp"]["ip"], joined["rtp"]["port"]],
                                "track": "voice_dtx" if k < speakers // 2 else "voice", "start": 37 * k + 11 * r})
        cfg = os.path.join(workdir, "replay.json")
        json.dump({"opus": ctx["opus"], "streams": streams, "bind": ["127.0.0.1", sender_port]}, open(cfg, "w"))
        replay = procs.start("replay", ["python3", os.path.join(ctx["bench_dir"], "rtp_replay.py"), cfg])
        time.sleep(ctx["warmup"])
        procs.check_alive()
        cores, load = machine_load_window(lambda: cpu_window([janus.pid, replay.pid], ctx["window"]))
        procs.stop(replay)
        summary = json.loads(open(os.path.join(workdir, "replay.log")).read().strip().splitlines()[-1])
        back = summary["received"] / summary["seconds"]
        participants = rooms * speakers
        result = {"rooms": rooms, "participants": participants, "cores": round(cores[janus.pid], 3),
                  "cores_per_participant_pct": round(100 * cores[janus.pid] / participants, 3),
                  "sender_cores": round(cores[replay.pid], 3), **load,
                  "mix_minus_packets_per_s": round(back, 1)}
        log(f"  janus R={rooms}: {result}")
        return result
    finally:
        procs.stop()
