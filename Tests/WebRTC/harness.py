"""Shared plumbing for the WebRTC end-to-end tests (test_aiortc.py, test_chromium.py, test_harness.py).

What it gives:
  * enter_network_namespace(): the process re-executes itself under `unshare --net` (fresh network namespace,
    only loopback, brought up here), so nothing a test starts can reach or be reached from outside;
  * free loopback ports (TCP, and an even UDP port whose neighbour is free too);
  * Cohost: a `cohost serve` process started like Tests/EndToEndTests/CohostHarness.swift does, its output in a
    file for failure messages, plus HTTP helpers for its API;
  * mint_token(): room tokens byte for byte as Sources/Rooms/Token (RoomToken.mint + CompactJWS.sign) makes them;
  * NginxRTMP: a private nginx-rtmp like Tests/TestSupport/NginxRTMP.swift, and pull()/decode helpers that fetch
    the programme with ffmpeg and decode pictures (RGB) and sound (48 kHz mono s16);
  * FFmpegParticipant: a plain-RTP ffmpeg participant (VP8 + Opus), as the Swift suites use;
  * write_tone_wav() for Chromium's fake microphone, tone_level_db() (Goertzel) for measuring a tone in PCM;
  * ParticipantChecks: packets, decoded video and leave times of a participant, as every client's tests check them;
  * stop_process(), stop_all(), remove_temp_dir(): one way to end what a test started.

Environment:
  COHOST_BIN                       the cohost binary (default <repo>/.build/debug/cohost)
  COHOST_WEBRTC_NO_NETNS=1         do not enter a network namespace (debugging only: ports are still loopback)
  COHOST_WEBRTC_ALLOW_UNSUPPORTED=1  a WebRTC join answered 415 unsupported_transport skips the test instead of
                                   failing it (for running the suites against a server without WebRTC)
  COHOST_WEBRTC_KEEP=1             keep the temporary directories (cohost log, pulled FLVs) after the run
  COHOST_WEBRTC_VERBOSE=1          print what the tests measured (tone levels, bitrates, leave times)
"""

import base64
import hashlib
import hmac
import json
import math
import os
import random
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import wave

sys.dont_write_bytecode = True  # no __pycache__ in the tree

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))  # Tests/WebRTC -> repository root
WEB_DIR = os.path.join(ROOT, "web")  # the console and join pages, as cohost --web-dir serves them

KEY = "testkey"
#: 32 bytes or more: cohost refuses shorter secrets (same as CohostHarness.swift).
SECRET = "testsecret-0123456789abcdef-0123456789"

_NETNS_MARK = "COHOST_WEBRTC_NETNS"


def keep_files():
    return os.environ.get("COHOST_WEBRTC_KEEP") == "1"


def remove_temp_dir(path):
    """Removes a directory the run made; COHOST_WEBRTC_KEEP=1 keeps it to look at after a failure."""
    if not keep_files():
        shutil.rmtree(path, ignore_errors=True)


def stop_process(proc, timeout=5):
    """SIGTERM, then SIGKILL if it is still there after `timeout` s; reaps it and closes its stderr pipe, so no
    helper process outlives its test or leaves a zombie behind."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)
    if proc.stderr is not None:
        proc.stderr.close()


def stop_all(*things):
    """Stops, in order, what a setUpClass started; None where it failed before starting that one."""
    for thing in things:
        if thing is not None:
            thing.stop()


def relax_slow_callback_warning():
    """IsolatedAsyncioTestCase runs its loop in debug mode, which reports every step over 0.1 s: on two busy cores
    with Chromium or aiortc starting that is noise. Steps over a second are still reported."""
    import asyncio

    asyncio.get_running_loop().slow_callback_duration = 1.0


def room_for_test(testcase, width=35):
    """A room of its own for each test: the test's name (without `test_`, at most `width` characters) and a
    random suffix, so a test's room says which test made it."""
    import uuid

    return f"{testcase._testMethodName[5:5 + width]}-{uuid.uuid4().hex[:6]}"


class Stoppable:
    """`with` support for the helpers below, which all end with stop()."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def note(*parts):
    """Prints a measurement (levels, bitrates, times) to stderr when COHOST_WEBRTC_VERBOSE=1."""
    if os.environ.get("COHOST_WEBRTC_VERBOSE") == "1":
        print("  [measured]", *parts, file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------------ namespace

def enter_network_namespace():
    """Makes this process run in a network namespace of its own with only `lo`, up.

    Outside one, the process replaces itself (exec) with `unshare --net -- <python> <same arguments>`; the
    re-executed process finds the mark in its environment, brings `lo` up and returns. Call it before anything
    opens a socket or starts a process (test modules call it at import). Needs root (or CAP_SYS_ADMIN)."""
    if os.environ.get("COHOST_WEBRTC_NO_NETNS") == "1":
        return
    if os.environ.get(_NETNS_MARK) != "inside":
        if shutil.which("unshare") is None:
            raise RuntimeError("unshare (util-linux) is needed to run the WebRTC tests in a network namespace")
        env = dict(os.environ)
        env[_NETNS_MARK] = "inside"
        # sys.orig_argv (3.10+) keeps `-m unittest …`; sys.argv would name unittest's __main__.py instead.
        args = list(sys.orig_argv[1:]) if hasattr(sys, "orig_argv") else list(sys.argv)
        argv = ["unshare", "--net", "--", sys.executable] + args
        sys.stdout.flush()
        sys.stderr.flush()
        os.execvpe("unshare", argv, env)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    names = sorted(name for _, name in socket.if_nameindex())
    if names != ["lo"]:
        raise RuntimeError(f"expected only lo in the test namespace, found {names}")


def in_network_namespace():
    return os.environ.get(_NETNS_MARK) == "inside"


def patch_aioice_for_loopback():
    """aioice (aiortc's ICE) leaves 127.0.0.1 out of its host candidates: inside the namespace it would then
    offer no candidate at all (`m=audio 9`, `c=IN IP4 0.0.0.0`, no a=candidate). Make it gather on loopback."""
    import aioice.ice

    def loopback_addresses(use_ipv4, use_ipv6):
        return ["127.0.0.1"] if use_ipv4 else []

    aioice.ice.get_host_addresses = loopback_addresses


# ------------------------------------------------------------------------------------------------ ports

def free_tcp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _udp_can_bind(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def free_udp_pair():
    """An even UDP port whose neighbour above is free too (RTP and RTCP, as cohost's --rtp-port wants)."""
    for _ in range(200):
        port = random.randrange(20000, 60000, 2)
        if _udp_can_bind(port) and _udp_can_bind(port + 1):
            return port
    raise RuntimeError("no two adjacent free UDP ports")


def wait_tcp(port, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.02)
    return False


# ------------------------------------------------------------------------------------------------ HTTP

class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lower-cased names
        self.body = body  # bytes

    @property
    def text(self):
        return self.body.decode("utf-8", errors="replace")

    def json(self):
        return json.loads(self.body.decode("utf-8")) if self.body else None

    @property
    def error_code(self):
        """`error.code` of a refusal, or None."""
        try:
            return (self.json() or {}).get("error", {}).get("code")
        except (ValueError, AttributeError):
            return None

    def __repr__(self):
        return f"<{self.status} {self.text[:400]!r}>"


def http(method, url, token=None, body=None, content_type=None, headers=None, timeout=15):
    """One HTTP request; never raises for an HTTP status. `body` may be bytes, str or a JSON-able object
    (sent as application/json unless `content_type` says otherwise)."""
    data = None
    hdrs = dict(headers or {})
    if body is not None:
        if isinstance(body, bytes):
            data = body
        elif isinstance(body, str):
            data = body.encode()
        else:
            data = json.dumps(body).encode()
            content_type = content_type or "application/json"
    if content_type:
        hdrs["Content-Type"] = content_type
    if token:
        hdrs["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return Response(r.status, {k.lower(): v for k, v in r.headers.items()}, r.read())
    except urllib.error.HTTPError as e:
        return Response(e.code, {k.lower(): v for k, v in e.headers.items()}, e.read())


async def ahttp(*args, **kwargs):
    """`http` off the event loop (aiortc and Playwright keep running while a request waits)."""
    import asyncio

    return await asyncio.to_thread(http, *args, **kwargs)


# ------------------------------------------------------------------------------------------------ tokens

def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


#: CompactJWS.hs256Header, byte for byte.
HS256_HEADER = b'{"alg":"HS256","typ":"JWT"}'


def mint_token(claims, secret=SECRET):
    """As RoomToken.mint: the claims as JSON with sorted keys and no whitespace (JSONEncoder with .sortedKeys,
    .withoutEscapingSlashes; nil optionals left out), signed HS256 over `b64url(header).b64url(payload)`."""
    payload = json.dumps({k: v for k, v in claims.items() if v is not None}, sort_keys=True,
                         separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    signing_input = _b64url(HS256_HEADER) + "." + _b64url(payload)
    mac = hmac.new(secret.encode("utf-8"), signing_input.encode("ascii"), hashlib.sha256).digest()
    return signing_input + "." + _b64url(mac)


def token(room, user, admin=False, ttl=600, key=KEY, secret=SECRET, now=None, nbf=None):
    """A room token as CohostHarness.token(room:user:admin:ttl:) mints it (iss, sub, room, admin, exp, iat)."""
    now = int(time.time()) if now is None else now
    return mint_token({"iss": key, "sub": user, "room": room, "admin": bool(admin), "exp": now + ttl,
                       "nbf": nbf, "iat": now}, secret)


def token_claims(tok):
    """The (unverified) claims of a token."""
    payload = tok.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


# ------------------------------------------------------------------------------------------------ cohost

def cohost_binary():
    path = os.environ.get("COHOST_BIN")
    return path if path else os.path.join(ROOT, ".build", "debug", "cohost")


class UnknownFlag(RuntimeError):
    """cohost refused a command-line flag (a feature the binary does not have yet)."""

    def __init__(self, flag, output):
        super().__init__(f"cohost does not know {flag}: {output.strip()[-600:]}")
        self.flag = flag
        self.output = output


class Cohost(Stoppable):
    """A real `cohost serve` on free loopback ports (like CohostHarness.swift). Its stdout and stderr go to
    `log_path`; `output()` returns them for failure messages. Use as a context manager or call stop()."""

    # 127.0.0.1 is the one host outputs, sources and webhooks may reach: nginx-rtmp and the rest run there.
    STANDARD_ARGUMENTS = ["--keys", f"{KEY}:{SECRET}", "--log-level", "info", "--auto-create-rooms", "true",
                          "--output-hosts", "127.0.0.1", "--webhook-hosts", "127.0.0.1"]

    def __init__(self, extra_args=(), arguments=None, env=None, binary=None):
        self.binary = binary or cohost_binary()
        if not os.path.exists(self.binary):
            raise RuntimeError(f"no cohost binary at {self.binary} (set COHOST_BIN or build first)")
        self.workdir = tempfile.mkdtemp(prefix="cohost-webrtc-")
        self.recordings_dir = os.path.join(self.workdir, "recordings")
        self.log_path = os.path.join(self.workdir, "cohost.log")
        self.proc = None
        base = list(arguments) if arguments is not None else (
            self.STANDARD_ARGUMENTS + ["--recordings-dir", self.recordings_dir,
                                       "--media-dir", os.path.join(self.workdir, "media")])
        last = None
        for _ in range(5):
            self.http_port = free_tcp_port()
            self.rtp_port = free_udp_pair()
            self.argv = [self.binary, "serve", "--http", f"127.0.0.1:{self.http_port}",
                         "--rtp-port", str(self.rtp_port), "--data-dir", os.path.join(self.workdir, "data")
                         ] + base + list(extra_args)
            self.proc = self._spawn(env)
            try:
                self._wait_for_health()
                return
            except UnknownFlag:
                self.stop()
                raise
            except RuntimeError as e:
                last = e
                self._terminate()
        self.stop()
        raise last or RuntimeError("cohost did not start")

    def _spawn(self, env):
        """Starts the binary; while a build is still writing it (ETXTBSY) waits up to 60 s."""
        import errno

        deadline = time.monotonic() + 60
        while True:
            with open(self.log_path, "ab") as log:
                try:
                    return subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=dict(os.environ, **(env or {})),
                                            start_new_session=True)
                except OSError as e:
                    if e.errno != errno.ETXTBSY or time.monotonic() > deadline:
                        raise
            time.sleep(1)

    def _wait_for_health(self, timeout=15.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if http("GET", self.url("/healthz"), timeout=1).status == 200:
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                out = self.output()
                m = re.search(r"[Uu]nknown option '?(--[A-Za-z0-9-]+)", out)
                if m:
                    raise UnknownFlag(m.group(1), out)
                raise RuntimeError(f"cohost exited ({self.proc.returncode}): {out[-3000:]}")
            time.sleep(0.1)
        raise RuntimeError(f"cohost did not answer /healthz within {timeout} s: {self.output()[-3000:]}")

    # -- lifetime

    def _terminate(self):
        if self.proc is not None:
            stop_process(self.proc)

    def stop(self):
        self._terminate()
        remove_temp_dir(self.workdir)

    @property
    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def output(self, tail=20000):
        try:
            with open(self.log_path, "rb") as f:
                data = f.read()
            return data[-tail:].decode("utf-8", errors="replace")
        except OSError:
            return ""

    # -- API

    @property
    def base(self):
        return f"http://127.0.0.1:{self.http_port}"

    def url(self, path):
        return self.base + path

    def token(self, room, user, admin=False, ttl=600):
        return token(room, user, admin=admin, ttl=ttl)

    def admin(self, room="*"):
        return token(room, "test-admin", admin=True)

    def call(self, method, path, token=None, body=None, content_type=None, headers=None, timeout=15):
        return http(method, self.url(path), token=token, body=body, content_type=content_type, headers=headers,
                    timeout=timeout)

    async def acall(self, *args, **kwargs):
        import asyncio

        return await asyncio.to_thread(self.call, *args, **kwargs)

    def create_room(self, body):
        """POST /v1/rooms with an admin token; returns the Response (201 expected)."""
        return self.call("POST", "/v1/rooms", self.admin(), body)

    def join(self, room, user, sdp, token=None):
        """POST /v1/rooms/{room}/participants with the offer; the Response's body is the answer on 201."""
        return self.call("POST", f"/v1/rooms/{room}/participants", token or self.token(room, user), sdp,
                         content_type="application/sdp")

    def room(self, room):
        r = self.call("GET", f"/v1/rooms/{room}", self.admin())
        return r.json() if r.status == 200 else None

    def participant(self, room, user):
        info = self.room(room) or {}
        return next((p for p in info.get("participants", []) if p.get("userId") == user), None)

    def streams(self, room, user):
        """A participant's inbound stream statistics by kind ("audio", "video")."""
        p = self.participant(room, user) or {}
        return {s["kind"]: s for s in p.get("streams", [])}

    def returns(self, room, user):
        p = self.participant(room, user) or {}
        return {s["kind"]: s for s in p.get("returns", [])}

    def add_output(self, room, url, **options):
        return self.call("POST", f"/v1/rooms/{room}/outputs", self.admin(), dict(url=url, **options))

    def wait_output_connected(self, room, timeout=15.0):
        deadline = time.monotonic() + timeout
        state = None
        while time.monotonic() < deadline:
            info = self.room(room) or {}
            outs = info.get("outputs", [])
            state = [o.get("state") for o in outs]
            if outs and all(s == "connected" for s in state):
                return True
            time.sleep(0.2)
        raise AssertionError(f"outputs of {room} not connected within {timeout} s: {state}")


def cohost_with_pages(extra_args, serve_pages=True):
    """A Cohost that serves web/ itself (`--web-dir`) when `serve_pages`; a binary that does not know that flag yet
    starts without it, and the test's own page server stands in for it."""
    if serve_pages:
        try:
            return Cohost(extra_args=list(extra_args) + ["--web-dir", WEB_DIR])
        except UnknownFlag as e:
            if e.flag != "--web-dir":
                raise
    return Cohost(extra_args=extra_args)


def wait_until(predicate, timeout, interval=0.1):
    """Polls `predicate` until it is truthy (returns its value) or `timeout` passes (returns the last value)."""
    deadline = time.monotonic() + timeout
    value = predicate()
    while not value and time.monotonic() < deadline:
        time.sleep(interval)
        value = predicate()
    return value


async def await_until(predicate, timeout, interval=0.1):
    """`wait_until` for coroutines: `predicate` may be sync or async; never blocks the loop."""
    import asyncio
    import inspect

    async def value():
        v = predicate()
        return await v if inspect.isawaitable(v) else v

    deadline = time.monotonic() + timeout
    v = await value()
    while not v and time.monotonic() < deadline:
        await asyncio.sleep(interval)
        v = await value()
    return v


class ParticipantChecks:
    """What the aiortc, Chromium and join-page tests ask cohost's API about a participant of `self.room` on
    `self.cohost`, with `self.diag(...)` in the failure messages: the same counters, whatever the client."""

    async def streams(self, user):
        import asyncio

        return await asyncio.to_thread(self.cohost.streams, self.room, user)

    async def assert_packets_increase(self, user, kinds=("audio", "video"), window=1.5):
        """Each of `kinds` of the user's inbound streams counts more packets after `window` seconds than before."""
        import asyncio

        async def flowing():
            s = await self.streams(user)
            return all(s.get(k, {}).get("packets", 0) > 0 for k in kinds)

        ok = await await_until(flowing, 10, interval=0.25)
        self.assertTrue(ok, self.diag(f"{user}: no packets on {kinds} within 10 s"))
        before = await self.streams(user)
        await asyncio.sleep(window)
        after = await self.streams(user)
        for kind in kinds:
            self.assertGreater(after[kind]["packets"], before[kind]["packets"],
                               self.diag(f"{user} {kind} packets did not increase: {before[kind]} -> {after[kind]}"))
        return after

    async def video_decoded(self, user):
        """Whether cohost has decoded a picture of the user's video."""
        return (await self.streams(user)).get("video", {}).get("framesDecoded", 0) > 0

    async def gone(self, user, timeout):
        """Seconds until the user left the room (None if still there after `timeout`)."""
        import asyncio

        start = time.monotonic()

        async def absent():
            return await asyncio.to_thread(self.cohost.participant, self.room, user) is None

        if await await_until(absent, timeout, interval=0.05):
            return time.monotonic() - start
        return None


# ------------------------------------------------------------------------------------------------ SDP

def sdp_lines(sdp):
    return [line for line in sdp.replace("\r\n", "\n").split("\n") if line]


def sdp_join(lines):
    return "\r\n".join(lines) + "\r\n"


def strip_ssrc_lines(sdp):
    """The offer without any `a=ssrc:` or `a=ssrc-group:` line."""
    return sdp_join([l for l in sdp_lines(sdp) if not l.startswith(("a=ssrc:", "a=ssrc-group:"))])


def sdp_media_sections(sdp):
    """[(m-line, [lines of the section])] in order."""
    sections = []
    for line in sdp_lines(sdp):
        if line.startswith("m="):
            sections.append((line, [line]))
        elif sections:
            sections[-1][1].append(line)
    return sections


def sdp_ssrcs(sdp):
    """{kind: first a=ssrc of that m= line} (the media SSRC; the ssrc-group's first one)."""
    out = {}
    for mline, lines in sdp_media_sections(sdp):
        kind = mline[2:].split(" ")[0]
        group = next((l for l in lines if l.startswith("a=ssrc-group:FID ")), None)
        if group:
            out[kind] = int(group.split(" ")[1])
            continue
        first = next((l for l in lines if l.startswith("a=ssrc:")), None)
        if first:
            out[kind] = int(first[len("a=ssrc:"):].split(" ")[0])
    return out


def is_unsupported_transport(response):
    return response.status == 415 and response.error_code == "unsupported_transport"


def allow_unsupported():
    return os.environ.get("COHOST_WEBRTC_ALLOW_UNSUPPORTED") == "1"


def check_join(testcase, response, what="join"):
    """Asserts a WebRTC join (or WHIP POST) answered 201. A 415 unsupported_transport (a server without WebRTC)
    skips the test instead when COHOST_WEBRTC_ALLOW_UNSUPPORTED=1."""
    if is_unsupported_transport(response) and allow_unsupported():
        testcase.skipTest(f"{what}: the server does not take WebRTC offers yet (415 unsupported_transport)")
    if response.status == 404 and what.startswith("WHIP") and allow_unsupported():
        testcase.skipTest(f"{what}: the server has no WHIP endpoint yet (404)")
    testcase.assertEqual(response.status, 201, f"{what} answered {response.status}: {response.text[:2000]}")


# ------------------------------------------------------------------------------------------------ nginx-rtmp

NGINX_RTMP_MODULE = "/usr/lib/nginx/modules/ngx_rtmp_module.so"


class NginxRTMP(Stoppable):
    """A private nginx with the RTMP module in the foreground on a free loopback port (NginxRTMP.swift's config:
    `live on`, and with record=True `record all; record_path <dir>; record_unique off;`)."""

    def __init__(self, record=False):
        self.records = record
        self.directory = tempfile.mkdtemp(prefix="cohost-nginx-")
        self.proc = None
        for attempt in range(1, 4):
            self.port = free_tcp_port()
            with open(os.path.join(self.directory, "nginx.conf"), "w") as f:
                f.write(self._config())
            try:
                self._launch()
                return
            except RuntimeError:
                if attempt < 3 and "Address already in use" in self.error_log():
                    try:
                        os.remove(os.path.join(self.directory, "error.log"))
                    except OSError:
                        pass
                    continue
                self.stop()
                raise

    def _config(self):
        record = (f"record all; record_path {self.directory}; record_unique off;" if self.records
                  else "record off;")
        return (f"load_module {NGINX_RTMP_MODULE};\n"
                "daemon off;\nmaster_process off;\nworker_processes 1;\n"
                f"error_log {self.directory}/error.log info;\n"
                f"pid {self.directory}/nginx.pid;\n"
                "events { worker_connections 64; }\n"
                "rtmp {\n    server {\n"
                f"        listen 127.0.0.1:{self.port};\n"
                "        chunk_size 4096;\n"
                "        application live {\n            live on;\n"
                f"            {record}\n"
                "        }\n    }\n}\n")

    def _launch(self):
        pid_file = os.path.join(self.directory, "nginx.pid")
        if os.path.exists(pid_file):
            os.remove(pid_file)
        self.proc = subprocess.Popen(["nginx", "-p", self.directory + "/", "-c", "nginx.conf"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        deadline = time.monotonic() + 5
        while not (os.path.exists(pid_file) and wait_tcp(self.port, timeout=0.05)):
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace")
                raise RuntimeError(f"nginx exited: {err} {self.error_log()}")
            if time.monotonic() > deadline:
                self._terminate()
                raise RuntimeError(f"nginx not listening on {self.port}: {self.error_log()}")
            time.sleep(0.02)

    def url(self, stream):
        return f"rtmp://127.0.0.1:{self.port}/live/{stream}"

    def recording_path(self, stream):
        return os.path.join(self.directory, f"{stream}.flv")

    def error_log(self):
        try:
            with open(os.path.join(self.directory, "error.log")) as f:
                return f.read()
        except OSError:
            return ""

    def _terminate(self):
        if self.proc is not None:
            stop_process(self.proc)
        self.proc = None

    def stop(self):
        self._terminate()
        remove_temp_dir(self.directory)


# ------------------------------------------------------------------------------------------------ programme

def pull(url, seconds, path, timeout=None):
    """Pulls `seconds` of a stream (RTMP from nginx, or any URL ffmpeg reads) into an FLV at `path` (copied, not
    re-encoded). Raises with ffmpeg's stderr on failure."""
    timeout = timeout or seconds + 20
    cmd = ["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-rw_timeout", "10000000", "-i", url,
           "-t", str(seconds), "-c", "copy", "-f", "flv", "-y", path]
    r = subprocess.run(cmd, capture_output=True, timeout=timeout)
    if r.returncode != 0 or not os.path.exists(path) or os.path.getsize(path) == 0:
        raise RuntimeError(f"pulling {url} failed ({r.returncode}): {r.stderr.decode(errors='replace')[-2000:]}")
    return path


async def apull(url, seconds, path, timeout=None):
    import asyncio

    return await asyncio.to_thread(pull, url, seconds, path, timeout)


async def apull_frames(url, seconds, path, fps=2, least=1, tries=3):
    """Pulls like apull and decodes the pictures; pulls again (up to `tries` times) while fewer than `least` decode,
    since a pull that starts just before a keyframe reaches it can hold a stream header and no picture."""
    import asyncio

    frames = []
    for _ in range(tries):
        await apull(url, seconds, path)
        frames = await asyncio.to_thread(decode_frames, path, fps)
        if len(frames) >= least:
            break
    return frames


def probe(path):
    """{"video": (width, height) or None, "audio": (rate, channels) or None, "duration": s}."""
    r = subprocess.run(["ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json", path],
                       capture_output=True, timeout=30)
    info = json.loads(r.stdout or b"{}")
    out = {"video": None, "audio": None, "duration": float(info.get("format", {}).get("duration", 0) or 0)}
    for s in info.get("streams", []):
        if s.get("codec_type") == "video" and out["video"] is None:
            out["video"] = (int(s["width"]), int(s["height"]))
        if s.get("codec_type") == "audio" and out["audio"] is None:
            out["audio"] = (int(s.get("sample_rate", 0)), int(s.get("channels", 0)))
    return out


def decode_frames(path, fps=2, start=0.0):
    """Pictures of a media file as numpy uint8 arrays (height, width, 3) RGB, `fps` of them a second from
    `start` seconds on."""
    import numpy as np

    size = probe(path)["video"]
    if size is None:
        return []
    w, h = size
    if w * h == 0:
        # A stream whose header came before any keyframe: nothing to decode.
        return []
    cmd = ["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-ss", str(start), "-i", path,
           "-map", "0:v:0", "-vf", f"fps={fps}", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
    r = subprocess.run(cmd, capture_output=True, timeout=120)
    frame = w * h * 3
    n = len(r.stdout) // frame
    return [np.frombuffer(r.stdout[i * frame:(i + 1) * frame], dtype=np.uint8).reshape(h, w, 3) for i in range(n)]


def decode_audio(path, rate=48000, start=0.0):
    """The sound of a media file as numpy int16, mono (channels averaged), at `rate`."""
    import numpy as np

    cmd = ["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-ss", str(start), "-i", path,
           "-map", "0:a:0", "-ac", "1", "-ar", str(rate), "-f", "s16le", "-"]
    r = subprocess.run(cmd, capture_output=True, timeout=120)
    return np.frombuffer(r.stdout[: len(r.stdout) // 2 * 2], dtype="<i2")


def rect_stats(frame, x, y, w, h, inset=8):
    """Mean R, G, B, mean luma (BT.601) and luma standard deviation of a rectangle of an RGB frame, `inset`
    pixels in from each edge (away from borders and scaling seams)."""
    import numpy as np

    region = frame[y + inset:y + h - inset, x + inset:x + w - inset].astype(np.float64)
    luma = 0.299 * region[..., 0] + 0.587 * region[..., 1] + 0.114 * region[..., 2]
    r, g, b = (float(region[..., i].mean()) for i in range(3))
    return {"r": r, "g": g, "b": b, "luma": float(luma.mean()), "std": float(luma.std())}


def save_ppm(frame, path):
    """An RGB frame as a binary PPM (for looking at a failure; no imaging library needed)."""
    h, w, _ = frame.shape
    with open(path, "wb") as f:
        f.write(f"P6 {w} {h} 255\n".encode())
        f.write(frame.tobytes())


# ------------------------------------------------------------------------------------------------ ffmpeg participant

def plain_offer(audio_ssrc, video_ssrc=None, direction="sendonly"):
    """A plain-RTP offer as CohostHarness.offer makes it (Opus PT 111, VP8 PT 96)."""
    lines = ["v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "c=IN IP4 127.0.0.1", "t=0 0",
             "m=audio 9 RTP/AVP 111", "a=rtpmap:111 opus/48000/2", f"a=ssrc:{audio_ssrc}", f"a={direction}"]
    if video_ssrc is not None:
        lines += ["m=video 9 RTP/AVP 96", "a=rtpmap:96 VP8/90000", f"a=ssrc:{video_ssrc}", f"a={direction}"]
    return sdp_join(lines)


class FFmpegParticipant:
    """An ffmpeg sending a solid colour (VP8, PT 96) and a sine (Opus, PT 111) over plain RTP to cohost's media
    port, as the Swift suites' startFFmpegParticipant does. Join with plain_offer() first."""

    def __init__(self, rtp_port, colour="red", tone_hz=660, audio_ssrc=1001, video_ssrc=1002, size="320x180",
                 fps=15, gate=(300, 100)):
        """`gate` (on_ms, off_ms): the tone switched on and off (see write_tone_wav); None: a steady sine."""
        url = f"rtp://127.0.0.1:{rtp_port}?pkt_size=1200"
        if gate:
            on, off = gate[0] / 1000, (gate[0] + gate[1]) / 1000
            source = f"aevalsrc=0.5*sin(2*PI*{tone_hz}*t)*lt(mod(t\\,{off})\\,{on}):s=48000"
        else:
            source = f"sine=frequency={tone_hz}:sample_rate=48000"
        args = ["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-f", "lavfi", "-i", source]
        if video_ssrc is not None:
            args += ["-f", "lavfi", "-i", f"color=c={colour}:s={size}:r={fps}",
                     "-map", "1:v", "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "200k",
                     "-g", "15", "-ssrc", str(video_ssrc), "-payload_type", "96", "-f", "rtp", url]
        args += ["-map", "0:a", "-c:a", "libopus", "-b:a", "64k", "-application", "audio",
                 "-ssrc", str(audio_ssrc), "-payload_type", "111", "-f", "rtp", url]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, start_new_session=True)

    def stop(self):
        stop_process(self.proc)


# ------------------------------------------------------------------------------------------------ tones

def write_tone_wav(path, freq, seconds=10.0, rate=48000, amplitude=0.5, gate=None):
    """A 16-bit mono WAV of a sine (Chromium's --use-file-for-fake-audio-capture loops it). The length is rounded
    to whole cycles so the loop has no click.

    `gate` (on_ms, off_ms) switches the tone on and off like syllables, so the voice meters and the active speaker
    see speech-like onsets. Keep `seconds` a multiple of the gate's period."""
    cycles = max(1, round(freq * seconds))
    n = round(cycles * rate / freq)
    peak = amplitude * 32767
    if gate:
        on, period = int(rate * gate[0] / 1000), int(rate * (gate[0] + gate[1]) / 1000)
    else:
        on, period = n, n
    samples = struct.pack(f"<{n}h", *(int(round(peak * math.sin(2 * math.pi * freq * i / rate)))
                                      if i % period < on else 0 for i in range(n)))
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples)
    return path


def read_wav_mono(path):
    """(samples as a list of ints, rate) of a 16-bit WAV, channels averaged."""
    with wave.open(path, "rb") as w:
        rate, channels, n = w.getframerate(), w.getnchannels(), w.getnframes()
        data = struct.unpack(f"<{n * channels}h", w.readframes(n))
    if channels > 1:
        data = [sum(data[i:i + channels]) / channels for i in range(0, len(data), channels)]
    return list(data), rate


def goertzel_amplitude(samples, rate, freq, full_scale=32768.0):
    """The amplitude of the component at `freq` in `samples`, relative to full scale (1.0 = a full-scale sine),
    by the Goertzel recurrence over a Hann-windowed block (the window keeps a neighbouring tone from leaking in).
    `samples` is any sequence of numbers (list, array, numpy)."""
    n = len(samples)
    if n == 0:
        return 0.0
    try:
        import numpy as np

        x = np.asarray(samples, dtype=np.float64)
        window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)
        xs = (x * window).tolist()
        wsum = float(window.sum())
    except ImportError:
        window = [0.5 - 0.5 * math.cos(2 * math.pi * i / n) for i in range(n)]
        xs = [s * w for s, w in zip(samples, window)]
        wsum = sum(window)
    coeff = 2 * math.cos(2 * math.pi * freq / rate)
    s1 = s2 = 0.0
    for v in xs:
        s0 = v + coeff * s1 - s2
        s2 = s1
        s1 = s0
    power = s1 * s1 + s2 * s2 - coeff * s1 * s2
    magnitude = math.sqrt(max(power, 0.0))
    return 2 * magnitude / wsum / full_scale


def tone_level_db(samples, rate, freq, full_scale=32768.0):
    """The level of the tone at `freq`, dB relative to a full-scale sine (a sine of amplitude 0.5 reads -6 dB)."""
    a = goertzel_amplitude(samples, rate, freq, full_scale)
    return 20 * math.log10(a) if a > 0 else -200.0


def tone_levels_db(samples, rate, freqs, full_scale=32768.0):
    return {f: round(tone_level_db(samples, rate, f, full_scale), 1) for f in freqs}


def rms_db(samples, full_scale=32768.0):
    n = len(samples)
    if n == 0:
        return -200.0
    total = sum(float(s) * float(s) for s in samples)
    rms = math.sqrt(total / n) / full_scale
    return 20 * math.log10(rms) if rms > 0 else -200.0
