"""Part 7: a cluster of two nodes on one PostgreSQL (docs/cluster.md). Two figures:
- API calls a second on one room, `GET /v1/rooms/{room}` by 8 client threads for the window, sent to the room's
  owner and then to the other node (which forwards each call to the owner); their ratio is the proxy's cost;
- failover: the owner is killed with SIGKILL while its room pushes to nginx-rtmp; the time until the other node
  reports the room's output connected again, and until a fresh pull of the programme decodes a picture again
  (node_timeout is the default 10 s).
PostgreSQL is a throwaway cluster (initdb and pg_ctl, as the `postgres` user when run as root)."""
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request

from lib import COHOST_BIN, Nginx, Procs, free_port, http, log, make_token, wait_tcp

THREADS = 8


class Postgres:
    def __init__(self, workdir):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
        if not bins:
            raise RuntimeError("PostgreSQL not installed: apt-get install postgresql")
        self.bin = bins[-1]
        # Its own directory: the bench's work directory is private to root, and initdb runs as postgres.
        self.dir = tempfile.mkdtemp(prefix="cohost-bench-pg-")
        self.port = free_port()
        self.root = os.geteuid() == 0
        if self.root:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run(["initdb", "-D", f"{self.dir}/data", "-U", "cohost", "--auth=trust", "-E", "UTF8", "--no-sync"])
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(["pg_ctl", "-D", f"{self.dir}/data", "-l", f"{self.dir}/log", "-o", options, "-w", "start"])
        self.url = f"postgres://cohost@127.0.0.1:{self.port}/postgres"

    def _run(self, argv):
        argv = [os.path.join(self.bin, argv[0])] + argv[1:]
        if self.root:
            argv = ["runuser", "-u", "postgres", "--"] + argv
        with open(os.path.join(self.dir, "tool.log"), "ab") as out:
            subprocess.run(argv, check=True, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=60)

    def stop(self):
        try:
            self._run(["pg_ctl", "-D", f"{self.dir}/data", "-m", "immediate", "stop"])
        except Exception:  # noqa: BLE001 (a stop that fails leaves a process the bench's namespace ends)
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


class Node:
    def __init__(self, procs, name, pg, key, secret):
        self.http_port = free_port()
        self.rtp_port = free_port(socket.SOCK_DGRAM, pair=True)
        self.proc = procs.start(f"cohost-{name}", [
            COHOST_BIN, "serve", "--http", f"127.0.0.1:{self.http_port}", "--rtp-port", str(self.rtp_port),
            "--keys", f"{key}:{secret}", "--store", pg.url, "--node-id", name, "--output-hosts", "127.0.0.1",
            "--cluster-secret", "bench-cluster-0123456789abcdef0123456789", "--cluster-hosts", "127.0.0.1",
            "--log-level", "warning"])
        wait_tcp(self.http_port, 20)
        self.base = f"http://127.0.0.1:{self.http_port}"


def _rate(url, token, seconds):
    """Calls a second over `seconds`, THREADS threads each making calls one after another (keep-alive off: each
    call is a new connection, as most API clients make)."""
    count = [0]
    errors = [0]
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def worker():
        while time.monotonic() < end:
            req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
            try:
                with urllib.request.urlopen(req, timeout=5) as r:
                    r.read()
                    ok = r.status == 200
            except OSError:
                ok = False
            with lock:
                if ok:
                    count[0] += 1
                else:
                    errors[0] += 1

    threads = [threading.Thread(target=worker) for _ in range(THREADS)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    return count[0] / wall, errors[0]


def _output_state(node, token, room):
    try:
        status, text = http("GET", f"{node.base}/v1/rooms/{room}", token, timeout=2)
    except OSError:
        return None
    if status != 200:
        return None
    outputs = json.loads(text).get("outputs") or []
    return outputs[0]["state"] if outputs else None


def run(ctx):
    workdir = os.path.join(ctx["workdir"], "cluster")
    os.makedirs(workdir, exist_ok=True)
    procs = Procs(workdir)
    pg = None
    try:
        pg = Postgres(workdir)
        nginx = Nginx(procs, workdir)
        key, secret = "bench", os.urandom(24).hex()
        a = Node(procs, "a", pg, key, secret)
        b = Node(procs, "b", pg, key, secret)
        admin = make_token(key, secret, "*", "bench-admin", admin=True)
        time.sleep(2.0)  # each has seen the other's heartbeat
        body = {"name": "moving", "canvas": {"width": 640, "height": 360, "fps": 30},
                "outputs": [{"url": nginx.url("moving"), "backoff": {"initialMaxMs": 300, "maxMs": 1000}}]}
        status, text = http("POST", f"{a.base}/v1/rooms", admin, body)
        if status != 201:
            raise RuntimeError(f"create: {status} {text}")
        owner_rate, owner_errors = _rate(f"{a.base}/v1/rooms/moving", admin, min(ctx["window"], 10))
        proxy_rate, proxy_errors = _rate(f"{b.base}/v1/rooms/moving", admin, min(ctx["window"], 10))
        deadline = time.monotonic() + 15
        while _output_state(a, admin, "moving") != "connected" and time.monotonic() < deadline:
            time.sleep(0.2)
        killed = time.monotonic()
        os.kill(a.proc.pid, signal.SIGKILL)
        moved_ms = None
        while time.monotonic() - killed < 30:
            if _output_state(b, admin, "moving") == "connected":
                moved_ms = round((time.monotonic() - killed) * 1000)
                break
            time.sleep(0.1)
        # The programme is back when a fresh pull from nginx-rtmp decodes a picture.
        back_ms = None
        flv = os.path.join(workdir, "moving.flv")
        while time.monotonic() - killed < 40:
            subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-rw_timeout", "3000000", "-i",
                            nginx.url("moving"), "-t", "0.5", "-c", "copy", "-f", "flv", "-y", flv],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20)
            if _has_video(flv):
                back_ms = round((time.monotonic() - killed) * 1000)
                break
            time.sleep(0.2)
        result = {"owner_calls_per_s": round(owner_rate, 1), "proxied_calls_per_s": round(proxy_rate, 1),
                  "proxied_over_owner": round(proxy_rate / owner_rate, 3) if owner_rate else None,
                  "call_errors": owner_errors + proxy_errors, "threads": THREADS, "node_timeout_s": 10,
                  "output_connected_again_ms": moved_ms, "programme_pulled_again_ms": back_ms}
        log(f"  cluster: {result}")
        return result
    finally:
        procs.stop()
        if pg:
            pg.stop()


def _has_video(path):
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return False
    r = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets", "-show_entries",
                        "stream=nb_read_packets", "-of", "csv=p=0", path], capture_output=True, text=True, timeout=30)
    try:
        return int(r.stdout.strip() or 0) > 0
    except ValueError:
        return False
