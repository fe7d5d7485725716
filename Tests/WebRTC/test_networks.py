"""Guests behind any network, against a real `cohost serve` in this test's own network namespace.

- UDP to Cohost's media port dropped (nftables in the namespace): Chromium joins from the join page over ICE-TCP
  (RFC 6544), its selected candidate pair is TCP, media flows both ways and the programme shows its picture.
- All of Chromium's UDP dropped but a coturn's relay legs: it joins through that coturn (TURN over TCP) with the
  credentials Cohost mints (GET /v1/rooms/{room}/ice-servers); with a secret coturn does not share, the page says
  the relay refused the credentials.
- An aiortc WHIP client asks OPTIONS /whip/{room} for the `Link` ice-server headers (RFC 9725 §4.4) and publishes
  through coturn.
- GStreamer's webrtcbin (gst_whip.py under Debian's python3) publishes over WHIP with bundle-policy max-bundle (its
  video line bundle-only, port 0) and max-compat: its picture and its voice reach the programme. libnice gathers no
  candidate on a loopback interface: the test adds a veth with 127.0.0.5/32 and Cohost announces that address.
- A flood of silent TCP connections to the ICE-TCP port leaves a plain-RTP participant's media alone, and
  /metrics counts the connections refused over the per-address limit and those closed unvalidated after 5 s.

Run from this directory: python3 -m unittest -v test_networks   (or Tests/WebRTC/run.sh test_networks)
Needs nftables (nft), coturn (turnserver), Debian's python3-gi with GStreamer's webrtcbin and libnice.
"""

import asyncio
import base64
import hashlib
import hmac
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True

import harness  # noqa: E402

harness.enter_network_namespace()

import av  # noqa: E402
import browser  # noqa: E402
import peers  # noqa: E402
from aiortc import RTCConfiguration, RTCIceServer  # noqa: E402
from playwright.async_api import async_playwright  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TURN_SECRET = "turn-secret-for-tests-0123456789"
RELAY_PORTS = (20000, 20100)  # below Linux's ephemeral ports: a rule can tell coturn's relay legs from the rest
CONNECT_TIMEOUT = 20.0

#: Captures each RTCPeerConnection the page makes (window.__pcs) and the TURN errors it sees.
CAPTURE_PCS = """
window.__pcs = [];
{
  const Native = window.RTCPeerConnection;
  window.RTCPeerConnection = class extends Native {
    constructor(...args) { super(...args); window.__pcs.push(this); this.__config = args[0] || {}; }
  };
}
"""

#: The selected candidate pair of the page's last RTCPeerConnection, and what came in.
SELECTED = """() => {
  const pc = window.__pcs[window.__pcs.length - 1];
  if (!pc) return null;
  return pc.getStats().then((report) => {
    let transport = null;
    const pairs = {}, candidates = {}, inbound = {};
    report.forEach((s) => {
      if (s.type === "transport") transport = s;
      if (s.type === "candidate-pair") pairs[s.id] = s;
      if (s.type === "local-candidate" || s.type === "remote-candidate") candidates[s.id] = s;
      if (s.type === "inbound-rtp") inbound[s.kind] = {packets: s.packetsReceived, frames: s.framesDecoded || 0};
    });
    const pair = transport && pairs[transport.selectedCandidatePairId];
    const side = (id) => candidates[id] && {protocol: candidates[id].protocol, type: candidates[id].candidateType,
                                            relayProtocol: candidates[id].relayProtocol || null,
                                            port: candidates[id].port};
    return {state: pc.connectionState, iceServers: (pc.__config.iceServers || []).length, inbound,
            local: pair ? side(pair.localCandidateId) : null, remote: pair ? side(pair.remoteCandidateId) : null};
  });
}"""


def have(tool):
    return shutil.which(tool) is not None


class Firewall:
    """An nftables table in this namespace: rules on the output hook, so on every packet a process here sends."""

    TABLE = "cohost_test"

    def __init__(self):
        self.nft(f"add table inet {self.TABLE}")
        self.nft(f"add chain inet {self.TABLE} out {{ type filter hook output priority 0 ; policy accept ; }}")

    @staticmethod
    def nft(command):
        subprocess.run(["nft"] + command.split(), check=True, capture_output=True, timeout=10)

    def drop(self, match):
        self.nft(f"add rule inet {self.TABLE} out {match} counter drop")

    def counters(self):
        out = subprocess.run(["nft", "list", "table", "inet", self.TABLE], capture_output=True, text=True,
                             timeout=10).stdout
        return [int(n) for n in re.findall(r"counter packets (\d+)", out)]

    def stop(self):
        subprocess.run(["nft", "delete", "table", "inet", self.TABLE], capture_output=True, timeout=10)


class Coturn(harness.Stoppable):
    """coturn on 127.0.0.1 (TCP and UDP), TURN REST credentials (`use-auth-secret`), relays on 127.0.0.1 in
    RELAY_PORTS, loopback peers allowed (Cohost is one)."""

    def __init__(self, secret):
        self.port = harness.free_tcp_port()
        self.log = tempfile.NamedTemporaryFile(prefix="coturn-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            ["turnserver", "-n", "--listening-ip", "127.0.0.1", "--listening-port", str(self.port),
             "--relay-ip", "127.0.0.1", "--min-port", str(RELAY_PORTS[0]), "--max-port", str(RELAY_PORTS[1]),
             "--use-auth-secret", "--static-auth-secret", secret, "--realm", "cohost.test",
             "--allow-loopback-peers", "--no-cli", "--no-tls", "--no-dtls", "--fingerprint",
             "--log-file", "stdout", "--simple-log", "--pidfile", self.log.name + ".pid",
             "--db", self.log.name + ".db"],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        if not harness.wait_tcp(self.port, timeout=10):
            self.stop()
            raise RuntimeError(f"coturn did not listen on {self.port}: {self.output()[-2000:]}")

    @property
    def url(self):
        return f"turn:127.0.0.1:{self.port}?transport=tcp"

    def output(self):
        with open(self.log.name, errors="replace") as f:
            return f.read()

    def stop(self):
        harness.stop_process(self.proc)
        for path in (self.log.name, self.log.name + ".pid", self.log.name + ".db"):
            if os.path.exists(path):
                os.unlink(path)


def link_ice_servers(headers):
    """RTCIceServers from `Link: <uri>; rel="ice-server"; username="…"; credential="…"` headers (RFC 9725 §4.4)."""
    servers = []
    for value in headers:
        m = re.match(r'\s*<([^>]+)>\s*;(.*)', value)
        if not m or 'rel="ice-server"' not in m.group(2):
            continue
        params = dict((k.strip(), v.replace('\\"', '"')) for k, v in re.findall(r'([\w-]+)="((?:[^"\\]|\\.)*)"',
                                                                                  m.group(2)))
        servers.append(RTCIceServer(urls=m.group(1), username=params.get("username"),
                                    credential=params.get("credential")))
    return servers


def request(method, url, token=None, body=None, content_type=None):
    """(status, every header as (name, value) in order, body): `Link` comes once per ICE server."""
    import urllib.error
    import urllib.request

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if content_type:
        headers["Content-Type"] = content_type
    r = urllib.request.Request(url, data=body.encode() if body else None, method=method, headers=headers)
    try:
        with urllib.request.urlopen(r, timeout=15) as response:
            return response.status, response.headers.items(), response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.items(), e.read()


def header_values(headers, name):
    return [v for k, v in headers if k.lower() == name.lower()]


def snapshot_rgb(cohost, room, x, y):
    """The programme canvas's mean RGB in a 32×32 box centred on (x, y), from GET /v1/rooms/{room}/snapshot."""
    r = cohost.call("GET", f"/v1/rooms/{room}/snapshot", cohost.admin())
    if r.status != 200:
        return None
    with av.open(io.BytesIO(r.body)) as container:
        frame = next(container.decode(video=0)).to_ndarray(format="rgb24")
    box = frame[y - 16:y + 16, x - 16:x + 16].reshape(-1, 3)
    return [int(v) for v in box.mean(axis=0)]


def is_green(rgb):
    return rgb is not None and rgb[1] > 120 and rgb[0] < 90 and rgb[2] < 90


def metrics(cohost):
    text = cohost.call("GET", "/metrics").body.decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r'^(cohost_ice_tcp_\w+)(\{reason="(\w+)"\})?\s+([0-9.e+]+)$', line)
        if m:
            out[m.group(1) + (f":{m.group(3)}" if m.group(3) else "")] = float(m.group(4))
    return out


def consent_answers(cohost):
    """Answers to Cohost's own consent checks (RFC 7675) that renewed a participant's consent, so far."""
    text = cohost.call("GET", "/metrics").body.decode()
    m = re.search(r'^cohost_webrtc_consent_checks\{result="answered"\}\s+([0-9.e+]+)$', text, re.M)
    return float(m.group(1)) if m else 0.0


def setUpModule():
    global WORKDIR, TONE_WAV, GREEN_Y4M
    WORKDIR = tempfile.mkdtemp(prefix="cohost-networks-")
    TONE_WAV = harness.write_tone_wav(os.path.join(WORKDIR, "tone.wav"), 660, seconds=10, gate=(300, 100))
    GREEN_Y4M = os.path.join(WORKDIR, "green.y4m")
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                    "color=c=0x00c000:s=320x240:r=30", "-t", "2", "-pix_fmt", "yuv420p", GREEN_Y4M],
                   check=True, timeout=60)


def tearDownModule():
    harness.remove_temp_dir(WORKDIR)


class ChromiumPaths(unittest.IsolatedAsyncioTestCase):
    """The join page from Cohost itself, in a Chromium whose fake camera is green and whose microphone plays a tone."""

    async def asyncSetUp(self):
        harness.relax_slow_callback_warning()
        self.things = []
        self.room = harness.room_for_test(self, width=30)
        self.playwright = await async_playwright().start()
        self.browser = await browser.launch(self.playwright, TONE_WAV, video_file=GREEN_Y4M)
        self.errors = []

    async def asyncTearDown(self):
        await self.browser.close()
        await self.playwright.stop()
        harness.stop_all(*reversed(self.things))

    def start(self, thing):
        self.things.append(thing)
        return thing

    async def open_join_page(self, cohost, user):
        context = await self.browser.new_context(viewport={"width": 1280, "height": 800})
        await context.add_init_script(CAPTURE_PCS)
        page = await context.new_page()
        browser.record_errors(page, self.errors)
        await page.goto(f"{cohost.base}/join/{self.room}#token={cohost.token(self.room, user)}")
        await page.wait_for_selector("#join:not([disabled])", timeout=15000)
        await page.click("#join")
        return page

    async def connected(self, page, cohost):
        deadline = time.monotonic() + CONNECT_TIMEOUT
        selected = None
        while time.monotonic() < deadline:
            selected = await page.evaluate(SELECTED)
            if selected and selected["state"] == "connected" and selected["local"]:
                return selected
            await asyncio.sleep(0.2)
        self.fail(f"not connected within {CONNECT_TIMEOUT} s: {selected}; page: {await page.inner_text('body')}\n"
                  f"cohost log: {cohost.output()[-3000:]}")

    async def media_both_ways(self, page, cohost, user):
        """The room view and the mix come in; Cohost decodes the guest's camera and microphone; the programme's
        middle is the guest's green."""
        async def flowing():
            got = await page.evaluate(SELECTED)
            streams = cohost.streams(self.room, user)
            return (got["inbound"].get("video", {}).get("frames", 0) > 10
                    # Alone in the room, its mix-minus is silence: Opus DTX, a packet every 400 ms or so.
                    and got["inbound"].get("audio", {}).get("packets", 0) > 20
                    and streams.get("video", {}).get("framesDecoded", 0) > 10
                    and streams.get("audio", {}).get("packets", 0) > 50)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not await flowing():
            await asyncio.sleep(0.3)
        self.assertTrue(await flowing(), f"media not flowing both ways: page {await page.evaluate(SELECTED)}, "
                        f"cohost {cohost.streams(self.room, user)}")
        ok = await harness.await_until(lambda: is_green(snapshot_rgb(cohost, self.room, 640, 360)), 10)
        self.assertTrue(ok, f"programme middle not green: {snapshot_rgb(cohost, self.room, 640, 360)}")

    @unittest.skipUnless(have("nft"), "nftables (nft) is not installed")
    async def test_chromium_joins_over_ice_tcp_when_udp_to_the_media_port_is_dropped(self):
        cohost = self.start(harness.cohost_with_pages([]))
        firewall = self.start(Firewall())
        firewall.drop(f"udp dport {cohost.rtp_port}")
        firewall.drop(f"udp sport {cohost.rtp_port}")
        self.assertEqual(cohost.create_room({"name": self.room}).status, 201)
        page = await self.open_join_page(cohost, "ann")
        selected = await self.connected(page, cohost)
        self.assertEqual(selected["local"]["protocol"], "tcp", selected)
        self.assertEqual(selected["remote"]["protocol"], "tcp", selected)
        self.assertEqual(selected["remote"]["port"], cohost.rtp_port, "the ICE-TCP port is the media port's number")
        await self.media_both_ways(page, cohost, "ann")
        self.assertGreater(firewall.counters()[0], 0, "Chromium tried UDP first and the rule dropped it")
        # A second guest over the same listening port: a connection of its own, its media apart from ann's.
        ben = await self.open_join_page(cohost, "ben")
        self.assertEqual((await self.connected(ben, cohost))["local"]["protocol"], "tcp")
        both = await harness.await_until(
            lambda: all(cohost.streams(self.room, u).get("video", {}).get("framesDecoded", 0) > 10
                        for u in ("ann", "ben")), 15)
        self.assertTrue(both, [cohost.streams(self.room, u) for u in ("ann", "ben")])
        m = metrics(cohost)
        self.assertGreaterEqual(m.get("cohost_ice_tcp_connections", 0), 2, m)
        self.assertGreater(m.get("cohost_ice_tcp_frames", 0), 100, m)
        # Chromium answers Cohost's consent checks over the TCP connections (one every 4 to 6 s each).
        answered = await harness.await_until(lambda: consent_answers(cohost) >= 2, 15)
        self.assertTrue(answered, f"consent answers: {consent_answers(cohost)}")

    async def turn_join(self, cohost_secret, coturn_secret):
        coturn = self.start(Coturn(coturn_secret))
        # ICE-TCP off: with UDP gone, the relay is the only way in.
        cohost = self.start(harness.cohost_with_pages(
            ["--ice-tcp-port", "0", "--turn-urls", coturn.url, "--turn-secret", cohost_secret]))
        firewall = self.start(Firewall())
        low, high = RELAY_PORTS
        firewall.drop(f"udp sport != {low}-{high} udp dport != {low}-{high}")
        self.assertEqual(cohost.create_room({"name": self.room}).status, 201)
        return cohost, coturn, await self.open_join_page(cohost, "ann")

    @unittest.skipUnless(have("nft") and have("turnserver"), "needs nftables and coturn")
    async def test_chromium_joins_through_coturn_when_all_its_udp_is_dropped(self):
        cohost, coturn, page = await self.turn_join(TURN_SECRET, TURN_SECRET)
        selected = await self.connected(page, cohost)
        self.assertEqual(selected["iceServers"], 1, "the page asked Cohost for its ICE servers")
        self.assertEqual(selected["local"]["type"], "relay", selected)
        self.assertEqual(selected["local"]["relayProtocol"], "tcp", selected)
        await self.media_both_ways(page, cohost, "ann")
        # Cohost's consent checks reach Chromium through the relay, and its answers come back.
        answered = await harness.await_until(lambda: consent_answers(cohost) >= 1, 15)
        self.assertTrue(answered, f"consent answers: {consent_answers(cohost)}")

    @unittest.skipUnless(have("nft") and have("turnserver"), "needs nftables and coturn")
    async def test_a_turn_secret_coturn_does_not_share_fails_and_the_page_says_so(self):
        cohost, coturn, page = await self.turn_join(TURN_SECRET, "another-secret-coturn-holds-0000")
        try:
            await page.wait_for_function(
                "() => /TURN 401/.test(document.getElementById('notice').textContent)", timeout=20000)
        except Exception:
            self.fail(f"no TURN refusal on the page: {await page.inner_text('body')}\n{coturn.output()[-2000:]}")
        selected = await page.evaluate(SELECTED)
        self.assertNotEqual(selected["state"], "connected", selected)
        self.assertIn("check_stun_auth", coturn.output(), "coturn refused the credentials")


class WHIPThroughTURN(unittest.IsolatedAsyncioTestCase):
    @unittest.skipUnless(have("nft") and have("turnserver"), "needs nftables and coturn")
    async def test_an_aiortc_whip_client_reads_the_link_headers_and_publishes_through_coturn(self):
        harness.relax_slow_callback_warning()
        room = harness.room_for_test(self, width=30)
        coturn = Coturn(TURN_SECRET)
        cohost = harness.Cohost(["--ice-tcp-port", "0", "--turn-urls", coturn.url, "--turn-secret", TURN_SECRET])
        firewall = Firewall()
        peer = None
        try:
            low, high = RELAY_PORTS
            firewall.drop(f"udp sport != {low}-{high} udp dport != {low}-{high}")
            token = cohost.token(room, "whip-guest")
            status, headers, _ = request("OPTIONS", cohost.url(f"/whip/{room}"), token)
            self.assertEqual(status, 204, headers)
            links = header_values(headers, "Link")
            self.assertEqual(len(links), 1, links)
            servers = link_ice_servers(links)
            expiry, user = servers[0].username.split(":", 1)
            self.assertEqual(user, "whip-guest")
            self.assertLessEqual(int(expiry), harness.token_claims(token)["exp"], "credentials end with the token")
            expected = base64.b64encode(hmac.new(TURN_SECRET.encode(), servers[0].username.encode(),
                                                 hashlib.sha1).digest()).decode()
            self.assertEqual(servers[0].credential, expected)
            self.assertEqual(header_values(request("OPTIONS", cohost.url(f"/whip/{room}"))[1], "Link"), [],
                             "no credentials without a token")
            peer = peers.Peer(configuration=RTCConfiguration(iceServers=servers), direction="sendonly")
            offer = await peer.make_offer()
            self.assertIn("typ relay", offer, "aiortc gathered a relay candidate from coturn")
            status, headers, body = request("POST", cohost.url(f"/whip/{room}"), token, offer, "application/sdp")
            self.assertEqual(status, 201, body)
            self.assertEqual(len(header_values(headers, "Link")), 1, "the answer carries the ice-server links too")
            await peer.accept(body.decode())
            self.assertTrue(await peer.wait_connected(CONNECT_TIMEOUT),
                            f"{peer.states}\ncoturn: {coturn.output()[-2000:]}\ncohost: {cohost.output()[-2000:]}")
            ok = await harness.await_until(
                lambda: cohost.streams(room, "whip-guest").get("video", {}).get("framesDecoded", 0) > 10, 15)
            self.assertTrue(ok, cohost.streams(room, "whip-guest"))
            ice = peer.pc.getTransceivers()[0].sender.transport.transport
            nominated = ice._connection._nominated.get(1)
            self.assertEqual(nominated.local_candidate.type, "relay", nominated)
            answered = await harness.await_until(lambda: consent_answers(cohost) >= 1, 15)
            self.assertTrue(answered, f"aiortc answered no consent check: {consent_answers(cohost)}")
        finally:
            if peer:
                await peer.close()
            harness.stop_all(firewall, cohost, coturn)


WEBRTCBIN_ADDRESS = "127.0.0.5"


def system_python_has_webrtcbin():
    if not os.path.exists("/usr/bin/python3"):
        return False
    probe = ("import gi; gi.require_version('Gst','1.0'); gi.require_version('GstWebRTC','1.0'); "
             "from gi.repository import Gst; Gst.init(None); "
             "assert Gst.ElementFactory.find('webrtcbin') and Gst.ElementFactory.find('nicesrc')")
    return subprocess.run(["/usr/bin/python3", "-c", probe], capture_output=True, timeout=60).returncode == 0


@unittest.skipUnless(system_python_has_webrtcbin(), "needs Debian's python3-gi with webrtcbin and libnice")
class WebRTCBinTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # libnice ignores loopback interfaces: a veth pair inside this namespace carries a 127.0.0.x address.
        subprocess.run(["ip", "link", "add", "cohost-v0", "type", "veth", "peer", "name", "cohost-v1"], check=True)
        subprocess.run(["ip", "addr", "add", f"{WEBRTCBIN_ADDRESS}/32", "dev", "cohost-v0"], check=True)
        for name in ("cohost-v0", "cohost-v1"):
            subprocess.run(["ip", "link", "set", name, "up"], check=True)
        cls.cohost = harness.Cohost(["--public-ip", WEBRTCBIN_ADDRESS])

    @classmethod
    def tearDownClass(cls):
        harness.stop_all(cls.cohost)
        subprocess.run(["ip", "link", "del", "cohost-v0"], capture_output=True)

    def publish(self, policy):
        room = f"gst-{policy}"
        self.assertEqual(self.cohost.create_room({"name": room}).status, 201)
        answered_before = consent_answers(self.cohost)
        url = self.cohost.url(f"/whip/{room}")
        proc = subprocess.Popen(["/usr/bin/python3", os.path.join(HERE, "gst_whip.py"), url,
                                 self.cohost.token(room, "gst"), policy, "green", "440", "25"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        events = []
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                line = proc.stdout.readline()
                if not line:
                    break
                event = json.loads(line)
                events.append(event)
                if event["event"] in ("connected", "error"):
                    break
            kinds = [e["event"] for e in events]
            answer = next((e for e in events if e["event"] == "answer"), {})
            self.assertIn("connected", kinds, f"webrtcbin ({policy}): {events}\n{proc.stderr.read()[-2000:]}"
                          if proc.poll() is not None else f"webrtcbin ({policy}): {events}")
            if policy == "max-bundle":
                self.assertRegex(answer["offer"], r"m=video 0 [^\r\n]*\r\n(.*\r\n)*a=bundle-only",
                                 "max-bundle offers its video line bundle-only")
            self.assertNotRegex(answer["answer"], r"m=video 0 ", "the bundled video line is accepted")
            green = harness.wait_until(lambda: is_green(snapshot_rgb(self.cohost, room, 640, 360)), 15)
            self.assertTrue(green, f"programme middle: {snapshot_rgb(self.cohost, room, 640, 360)}")
            heard = harness.wait_until(
                lambda: (self.cohost.participant(room, "gst") or {}).get("level", 0) > 30, 15)
            self.assertTrue(heard, f"voice level in the mix: {self.cohost.participant(room, 'gst')}")
            answered = harness.wait_until(lambda: consent_answers(self.cohost) > answered_before, 15)
            self.assertTrue(answered, "libnice answered no consent check of Cohost's")
        finally:
            harness.stop_process(proc)
            proc.stdout.close()
            proc.stderr.close()
            self.cohost.call("DELETE", f"/v1/rooms/{room}", self.cohost.admin())

    def test_webrtcbin_publishes_with_max_bundle(self):
        self.publish("max-bundle")

    def test_webrtcbin_publishes_with_max_compat(self):
        self.publish("max-compat")


class STUNResponder(harness.Stoppable):
    """A STUN server on 127.0.0.1 that answers every Binding request with `mapped` as the XOR-MAPPED-ADDRESS: what
    a real one says of a host behind a 1:1 NAT. `answer=False`: it reads requests and answers none."""

    def __init__(self, mapped, answer=True):
        import threading

        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.requests = 0
        self.running = True
        self.mapped, self.answer = mapped, answer
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        import struct

        cookie = 0x2112A442
        while self.running:
            try:
                data, peer = self.sock.recvfrom(2048)
            except socket.timeout:
                continue
            except OSError:
                return
            if len(data) < 20 or struct.unpack(">HHI", data[:8]) [0] != 0x0001:
                continue
            self.requests += 1
            if not self.answer:
                continue
            ip = struct.unpack(">I", socket.inet_aton(self.mapped))[0]
            value = struct.pack(">BBHI", 0, 1, peer[1] ^ (cookie >> 16), ip ^ cookie)
            attribute = struct.pack(">HH", 0x0020, len(value)) + value
            self.sock.sendto(struct.pack(">HHI", 0x0101, len(attribute), cookie) + data[8:20] + attribute, peer)

    def stop(self):
        self.running = False
        self.thread.join(timeout=2)
        self.sock.close()


class PublicAddressFromSTUNTests(unittest.IsolatedAsyncioTestCase):
    async def test_without_public_ip_the_candidates_carry_the_address_a_stun_server_reports(self):
        harness.relax_slow_callback_warning()
        room = harness.room_for_test(self, width=30)
        with STUNResponder("127.0.0.77") as stun:
            cohost = harness.Cohost(["--stun-url", f"stun:127.0.0.1:{stun.port}"])
            peer = peers.Peer(direction="sendonly")
            try:
                self.assertGreaterEqual(stun.requests, 1)
                r = cohost.join(room, "ann", await peer.make_offer())
                self.assertEqual(r.status, 201, r)
                candidates = [l for l in r.body.decode().splitlines() if l.startswith("a=candidate:")]
                self.assertTrue(candidates and all(" 127.0.0.77 " in c for c in candidates), candidates)
                self.assertIn("c=IN IP4 127.0.0.77", r.body.decode())
            finally:
                await peer.close()
                harness.stop_all(cohost)

    def test_a_stun_server_that_does_not_answer_stops_the_start_with_its_reason(self):
        with STUNResponder("127.0.0.77", answer=False) as stun, tempfile.TemporaryDirectory() as data:
            started = time.monotonic()
            run = subprocess.run(
                [harness.cohost_binary(), "serve", "--http", f"127.0.0.1:{harness.free_tcp_port()}", "--rtp-port",
                 str(harness.free_udp_pair()), "--data-dir", data, "--stun-url", f"stun:127.0.0.1:{stun.port}"],
                capture_output=True, text=True, timeout=30)
            self.assertNotEqual(run.returncode, 0)
            self.assertIn(f"--stun-url: no Binding answer from stun:127.0.0.1:{stun.port} within 3000 ms",
                          run.stdout + run.stderr)
            self.assertEqual(stun.requests, 3, "three tries")
            self.assertLess(time.monotonic() - started, 10)


class HalfOpenFloodTests(unittest.TestCase):
    def test_a_flood_of_silent_tcp_connections_leaves_a_udp_participants_media_alone(self):
        room = harness.room_for_test(self, width=30)
        cohost = harness.Cohost()
        sender = None
        held = []
        try:
            self.assertEqual(cohost.create_room({"name": room}).status, 201)
            r = cohost.join(room, "udp-guest", harness.plain_offer(1001, 1002))
            self.assertEqual(r.status, 201, r)
            sender = harness.FFmpegParticipant(cohost.rtp_port, colour="green", gate=None)

            def packets():
                return cohost.streams(room, "udp-guest").get("audio", {}).get("packets", 0)

            self.assertTrue(harness.wait_until(lambda: packets() > 100, 15), cohost.streams(room, "udp-guest"))
            before = packets()
            time.sleep(1.0)
            baseline = packets() - before  # Opus every 20 ms: about 50 a second
            # 8 source addresses × 40 connections: 16 per address are held, the rest refused at once.
            sources = [f"127.0.0.{n}" for n in range(2, 10)]
            for source in sources:
                for _ in range(40):
                    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                    s.bind((source, 0))
                    s.setblocking(False)
                    try:
                        s.connect((("127.0.0.1"), cohost.rtp_port))
                    except BlockingIOError:
                        pass
                    held.append(s)
            windows = []
            for _ in range(4):
                start = packets()
                time.sleep(1.0)
                windows.append(packets() - start)
            self.assertTrue(all(w >= 0.7 * baseline for w in windows),
                            f"packets a second before {baseline}, during the flood {windows}")
            m = harness.wait_until(lambda: metrics(cohost).get("cohost_ice_tcp_closed:limit", 0) >= 8 * 24, 10)
            self.assertTrue(m, metrics(cohost))
            closed = harness.wait_until(
                lambda: metrics(cohost).get("cohost_ice_tcp_closed:timeout", 0) >= 8 * 16, 10)
            self.assertTrue(closed, metrics(cohost))
            final = metrics(cohost)
            self.assertEqual(final.get("cohost_ice_tcp_closed:timeout"), 8 * 16, final)
            self.assertEqual(final.get("cohost_ice_tcp_closed:limit"), 8 * 24, final)
            self.assertEqual(final.get("cohost_ice_tcp_connections"), 0, final)
        finally:
            for s in held:
                s.close()
            harness.stop_all(sender, cohost)


if __name__ == "__main__":
    unittest.main()
