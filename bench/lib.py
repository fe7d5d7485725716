"""Shared helpers for the benchmarks: processes, ports, nginx-rtmp, cohost, tokens, HTTP, CPU and RSS.

Stdlib only. Every process started here is tracked by its pid and stopped by that pid (never by name).
"""
import base64
import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COHOST_BIN = os.environ.get("COHOST_BIN", os.path.join(ROOT, ".build/release/cohost"))
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
QUICK = os.environ.get("BENCH_QUICK") == "1"


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- processes

class Procs:
    """Processes started by one benchmark step; stop() ends exactly those (by pid)."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.items = []

    def start(self, name, argv, stdin=None, stdout=None, env=None):
        logf = open(os.path.join(self.workdir, f"{name}.log"), "wb")
        p = subprocess.Popen(argv, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                             stdout=stdout if stdout is not None else logf, stderr=logf,
                             env=env, start_new_session=True)
        self.items.append((name, p, logf))
        return p

    def stop(self, proc=None, timeout=5):
        targets = [t for t in self.items if proc is None or t[1] is proc]
        for _, p, _ in reversed(targets):
            if p.poll() is None:
                try:
                    p.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for name, p, logf in reversed(targets):
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            logf.close()
        self.items = [t for t in self.items if t not in targets]

    def check_alive(self):
        for name, p, _ in self.items:
            if p.poll() is not None:
                tail = open(os.path.join(self.workdir, f"{name}.log"), "rb").read()[-1500:].decode(errors="replace")
                raise RuntimeError(f"{name} exited with {p.returncode}:\n{tail}")


def free_port(kind=socket.SOCK_STREAM, pair=False):
    """A free loopback port (for UDP with pair=True: an even port whose successor is free too, for RTCP)."""
    for _ in range(200):
        s = socket.socket(socket.AF_INET, kind)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        if not pair:
            s.close()
            return port
        if port % 2 == 0 and port < 65534:
            t = socket.socket(socket.AF_INET, kind)
            try:
                t.bind(("127.0.0.1", port + 1))
                t.close()
                s.close()
                return port
            except OSError:
                t.close()
        s.close()
    raise RuntimeError("no free port")


# ---------------------------------------------------------------- /proc readings

def cpu_seconds(pid):
    """utime + stime of a whole process (all threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def thread_cpu_seconds(pid, *names, prefix=None):
    """utime + stime of the threads of `pid` named one of `names` (their comm, 15 characters at most) or starting
    with `prefix`, in seconds."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                comm = f.read().strip()
            if comm not in [n[:15] for n in names] and not (prefix and comm.startswith(prefix)):
                continue
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except FileNotFoundError:
            continue
    return total / CLK_TCK


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_window(pids, seconds, poll=None):
    """Cores used by each pid over `seconds` of wall time: {pid: cores}. `poll()` is called about once a second."""
    t0 = time.monotonic()
    c0 = {p: cpu_seconds(p) for p in pids}
    end = t0 + seconds
    while True:
        now = time.monotonic()
        if now >= end:
            break
        time.sleep(min(1.0, end - now))
        if poll:
            poll()
    t1 = time.monotonic()
    return {p: (cpu_seconds(p) - c0[p]) / (t1 - t0) for p in pids}


def machine_load_window(seconds_fn):
    """Total busy cores of the machine over a call, and how much of it was stolen by the hypervisor (from /proc/stat):
    tells how noisy the box was. Returns (result, {"machine_busy_cores", "steal_cores"}).

    Steal is time this VM's cores were ready to run but the host ran something else: with it above a few hundredths
    of a core, every process's CPU time in the window reads high too (the same work takes longer on a shared core),
    so a mixer measured in such a window looks dearer than it is.

    Busy is every core's wall time minus its idle + iowait, not the sum of /proc/stat's busy fields: on a tickless
    kernel idle is measured exactly, while user/system are sampled at the scheduler tick, so work done in wakeups
    shorter than a tick (a voice room's 20 ms ticks, one datagram at a time) mostly goes uncounted there. With the
    fields' sum, 10 voice rooms using 0.18 cores (their own utime + stime) showed a machine 0.01 cores busy."""
    def idle_and_steal():
        with open("/proc/stat") as f:
            parts = [int(x) for x in f.readline().split()[1:]]
        return (parts[3] + parts[4]) / CLK_TCK, (parts[7] if len(parts) > 7 else 0) / CLK_TCK
    a, steal_a = idle_and_steal()
    t0 = time.monotonic()
    result = seconds_fn()
    b, steal_b = idle_and_steal()
    wall = time.monotonic() - t0
    busy = max(0.0, (os.cpu_count() or 1) - (b - a) / wall) if wall > 0 else 0.0
    steal = max(0.0, (steal_b - steal_a) / wall) if wall > 0 else 0.0
    return result, {"machine_busy_cores": round(busy, 3), "steal_cores": round(steal, 3)}


def machine_info():
    model = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu_model": model,
            "load_avg_at_start": [round(x, 2) for x in os.getloadavg()]}


# ---------------------------------------------------------------- tokens and HTTP

def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_token(key, secret, room, user, admin=False, ttl=3600):
    now = int(time.time())
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {"iss": key, "sub": user, "room": room, "admin": admin, "iat": now - 5, "exp": now + ttl}
    body = _b64(json.dumps(claims, separators=(",", ":")).encode())
    sig = hmac.new(secret.encode(), f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{_b64(sig)}"


def http(method, url, token=None, body=None, content_type="application/json", timeout=10):
    data = None
    headers = {}
    if body is not None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        headers["Content-Type"] = content_type
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


# ---------------------------------------------------------------- servers

class Nginx:
    """A private nginx-rtmp on a free loopback port (same shape as Tests/TestSupport/NginxRTMP.swift)."""

    def __init__(self, procs, workdir):
        self.port = free_port()
        prefix = os.path.join(workdir, "nginx")
        os.makedirs(os.path.join(prefix, "logs"), exist_ok=True)
        module = next((p for p in ("/usr/lib/nginx/modules/ngx_rtmp_module.so",
                                   "/usr/share/nginx/modules/ngx_rtmp_module.so") if os.path.exists(p)), None)
        if module is None:
            raise RuntimeError("nginx rtmp module not found: run scripts/ensure-packages.sh --test")
        conf = os.path.join(prefix, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"load_module {module};\n"
                    f"daemon off; master_process off; pid {prefix}/nginx.pid; error_log {prefix}/logs/error.log;\n"
                    "worker_rlimit_nofile 8192;\n"
                    "events { worker_connections 4096; }\n"
                    f"rtmp {{ server {{ listen 127.0.0.1:{self.port}; chunk_size 4096;\n"
                    "  application live { live on; record off; } } }\n")
        self.proc = procs.start("nginx", ["nginx", "-p", prefix, "-c", conf])
        wait_tcp(self.port)

    def url(self, name):
        return f"rtmp://127.0.0.1:{self.port}/live/{name}"


def wait_tcp(port, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


class Cohost:
    """`cohost serve` on free loopback ports with a random API key; `env` may add LD_PRELOAD, `wrapper` is a
    command to run it under (valgrind, heaptrack, ...)."""

    def __init__(self, procs, name="cohost", env=None, wrapper=(), start_timeout=20):
        self.http_port = free_port()
        self.rtp_port = free_port(socket.SOCK_DGRAM, pair=True)
        self.key = "bench"
        self.secret = os.urandom(24).hex()  # cohost refuses secrets under 32 bytes
        full_env = dict(os.environ)
        full_env.update(env or {})
        data_dir = tempfile.mkdtemp(prefix="data-", dir=procs.workdir)
        self.media_dir = os.path.join(data_dir, "media")
        self.recordings_dir = os.path.join(data_dir, "recordings")
        self.proc = procs.start(name, list(wrapper) + [COHOST_BIN, "serve", "--data-dir", data_dir,
                                       "--media-dir", self.media_dir, "--recordings-dir", self.recordings_dir,
                                       "--http", f"127.0.0.1:{self.http_port}",
                                       "--rtp-port", str(self.rtp_port), "--keys", f"{self.key}:{self.secret}",
                                       "--output-hosts", "127.0.0.1", "--log-level", os.environ.get("BENCH_LOG_LEVEL", "warning")], env=full_env)
        self.pid = self.proc.pid
        end = time.monotonic() + start_timeout
        while time.monotonic() < end:
            try:
                if http("GET", self.base + "/healthz", timeout=1)[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            raise RuntimeError("cohost did not answer /healthz")
        self.admin = make_token(self.key, self.secret, "*", "bench-admin", admin=True)

    @property
    def base(self):
        return f"http://127.0.0.1:{self.http_port}"

    def create_room(self, body):
        status, text = http("POST", self.base + "/v1/rooms", self.admin, body)
        if status != 201:
            raise RuntimeError(f"create room: {status} {text}")

    def join(self, room, user, audio_ssrc, video_ssrc=None, direction="sendonly", rids=None):
        """`direction` "sendrecv": the participant also receives the return path (mix-minus, room view). `rids`:
        the video is sent as these simulcast layers instead of on `video_ssrc`."""
        sdp = simulcast_offer(audio_ssrc, rids, direction) if rids else offer(audio_ssrc, video_ssrc, direction)
        token = make_token(self.key, self.secret, room, user)
        status, text = http("POST", f"{self.base}/v1/rooms/{room}/participants", token, sdp, "application/sdp")
        if status != 201:
            raise RuntimeError(f"join {room}/{user}: {status} {text}")
        return text

    def room(self, room):
        status, text = http("GET", f"{self.base}/v1/rooms/{room}", self.admin)
        return json.loads(text) if status == 200 else None

    def metrics(self):
        return http("GET", self.base + "/metrics")[1]


def simulcast_offer(audio_ssrc, rids, direction="sendonly"):
    """A plain-RTP offer whose video is sent as simulcast layers `rids` (no a=ssrc: each layer's SSRC is learnt from
    the RID its first packets carry, header extension id 10)."""
    lines = ["v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "c=IN IP4 127.0.0.1", "t=0 0",
             "m=audio 9 RTP/AVP 111", "a=rtpmap:111 opus/48000/2", f"a=ssrc:{audio_ssrc}", f"a={direction}",
             "m=video 9 RTP/AVP 96", "a=rtpmap:96 VP8/90000", "a=rtcp-fb:96 nack pli",
             "a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"]
    lines += [f"a=rid:{rid} send" for rid in rids]
    lines += ["a=simulcast:send " + ";".join(rids), f"a={direction}"]
    return "\r\n".join(lines) + "\r\n"


def offer(audio_ssrc, video_ssrc=None, direction="sendonly"):
    lines = ["v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "c=IN IP4 127.0.0.1", "t=0 0",
             "m=audio 9 RTP/AVP 111", "a=rtpmap:111 opus/48000/2", f"a=ssrc:{audio_ssrc}", f"a={direction}"]
    if video_ssrc is not None:
        lines += ["m=video 9 RTP/AVP 96", "a=rtpmap:96 VP8/90000", f"a=ssrc:{video_ssrc}", f"a={direction}"]
    return "\r\n".join(lines) + "\r\n"


def metric_values(text, name):
    """[(labels dict, value)] of one Prometheus metric."""
    out = []
    for line in text.splitlines():
        if not line.startswith(name):
            continue
        head, _, value = line.rpartition(" ")
        labels = {}
        if "{" in head:
            if head[:head.index("{")] != name:
                continue
            for part in head[head.index("{") + 1:head.rindex("}")].split(","):
                if "=" in part:
                    k, v = part.split("=", 1)
                    labels[k.strip()] = v.strip().strip('"')
        elif head != name:
            continue
        try:
            out.append((labels, float(value)))
        except ValueError:
            pass
    return out


def grid_regions(n, width=1280, height=720):
    """Cohost's grid cells (LayoutEngine: columns = ceil(sqrt n)), each holding a 16:9 tile centred
    ("contain"), snapped to even pixels. Used for both Cohost (custom layout) and the ffmpeg mixer."""
    cols = 1
    while cols * cols < n:
        cols += 1
    rows = (n + cols - 1) // cols
    even = lambda v: int(v) // 2 * 2
    out = []
    for i in range(n):
        c, r = i % cols, i // cols
        x0, x1 = even(c * width / cols), even((c + 1) * width / cols)
        y0, y1 = even(r * height / rows), even((r + 1) * height / rows)
        cw, ch = x1 - x0, y1 - y0
        w, h = (cw, even(cw * 9 / 16)) if cw * 9 <= ch * 16 else (even(ch * 16 / 9), ch)
        out.append((x0 + even((cw - w) / 2), y0 + even((ch - h) / 2), w, h))
    return out


def hold_load_test(ctx, cohost, args, measure, hold_timeout=60):
    """Runs `cohost load-test` against `cohost` with `args` (and --json, --seconds covering the warm-up and the
    window); once it holds its participants and the warm-up passed, calls `measure(proc)` (the window's
    measurement), then waits for the report. Returns (report, what `measure` returned)."""
    import threading

    seconds = ctx["warmup"] + ctx["window"] + 2
    cmd = [COHOST_BIN, "load-test", "--url", cohost.base, "--token", cohost.admin, "--seconds", str(seconds),
           "--json"] + list(args)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    holding = threading.Event()
    err_lines = []

    def read_stderr():
        for line in proc.stderr:
            err_lines.append(line.rstrip())
            if line.startswith("holding "):
                holding.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    if not holding.wait(hold_timeout):
        proc.kill()
        raise RuntimeError(f"load-test did not hold its participants: {err_lines[-5:]}")
    time.sleep(ctx["warmup"])
    measured = measure(proc)
    out, _ = proc.communicate(timeout=120)
    reader.join(timeout=5)
    if proc.returncode != 0:
        raise RuntimeError(f"load-test exited {proc.returncode}: {err_lines[-5:]}")
    return json.loads(out), measured

