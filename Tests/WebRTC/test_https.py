"""HTTPS: `cohost serve --tls-cert --tls-key` serves the API, the events socket and the pages over TLS.

A browser opening the join page by a name that is not localhost (`show.test`, mapped to 127.0.0.1 inside Chromium)
gets a secure context over HTTPS, so the page may ask for the camera; the same name over plain HTTP does not (the
control). SIGHUP rereads the certificate files: a new connection gets the new certificate. The events WebSocket
opens over wss with the token as a subprotocol."""
import asyncio
import hashlib
import http.server
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.request

import harness

harness.enter_network_namespace()

from playwright.async_api import async_playwright  # noqa: E402  (after the namespace: it starts a process)

import browser  # noqa: E402


def make_certificate(directory, name, common_name):
    """A self-signed ECDSA P-256 certificate for `common_name` (its SAN too); returns (cert path, key path)."""
    cert, key = os.path.join(directory, f"{name}.crt"), os.path.join(directory, f"{name}.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", f"/CN={common_name}",
                    "-addext", f"subjectAltName=DNS:{common_name}"],
                   check=True, capture_output=True, timeout=30)
    return cert, key


def unverified():
    """A TLS context that takes any certificate: the tests compare the served certificate themselves."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def served_fingerprint(port):
    """SHA-256 of the certificate the server presents on a new connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with unverified().wrap_socket(raw, server_hostname="show.test") as tls:
            return hashlib.sha256(tls.getpeercert(binary_form=True)).hexdigest()


def file_fingerprint(cert_path):
    with open(cert_path) as f:
        der = ssl.PEM_cert_to_DER_cert(f.read())
    return hashlib.sha256(der).hexdigest()


class HTTPSTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="cohost-https-")
        cls.cert, cls.key = make_certificate(cls.dir, "live", "show.test")
        cls.port = harness.free_tcp_port()
        cls.rtp = harness.free_udp_pair()
        cls.log = open(os.path.join(cls.dir, "cohost.log"), "wb")
        cls.proc = subprocess.Popen(
            [harness.cohost_binary(), "serve", "--http", f"127.0.0.1:{cls.port}", "--rtp-port", str(cls.rtp),
             "--keys", f"{harness.KEY}:{harness.SECRET}", "--auto-create-rooms", "true",
             "--web-dir", os.path.join(harness.ROOT, "web"), "--tls-cert", cls.cert, "--tls-key", cls.key,
             "--recordings-dir", cls.dir, "--media-dir", cls.dir, "--store", "none"],
            stdout=cls.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"https://127.0.0.1:{cls.port}/healthz", context=unverified(),
                                            timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        cls.tearDownClass()
        raise RuntimeError("cohost did not answer over https: " + open(cls.log.name).read()[-3000:])

    @classmethod
    def tearDownClass(cls):
        harness.stop_process(cls.proc, timeout=10)
        cls.log.close()
        harness.remove_temp_dir(cls.dir)

    def test_the_api_answers_over_https_with_the_configured_certificate(self):
        self.assertEqual(served_fingerprint(self.port), file_fingerprint(self.cert))
        admin = harness.token("*", "producer", admin=True)
        request = urllib.request.Request(f"https://127.0.0.1:{self.port}/v1/rooms",
                                         headers={"Authorization": f"Bearer {admin}"})
        with urllib.request.urlopen(request, context=unverified(), timeout=5) as r:
            self.assertEqual(r.status, 200)
        # Plain HTTP on the TLS port gets no answer as HTTP.
        with self.assertRaises(Exception):
            urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=3).read()

    def test_tls_before_1_2_is_refused_and_answers_carry_hsts(self):
        old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        old.check_hostname = False
        old.verify_mode = ssl.CERT_NONE
        old.minimum_version = old.maximum_version = ssl.TLSVersion.TLSv1_1
        old.set_ciphers("DEFAULT:@SECLEVEL=0")  # this client would speak TLS 1.1: only the server can refuse it
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as raw:
            with self.assertRaises(ssl.SSLError):
                old.wrap_socket(raw, server_hostname="show.test")
        current = unverified()
        current.minimum_version = current.maximum_version = ssl.TLSVersion.TLSv1_2
        with urllib.request.urlopen(f"https://127.0.0.1:{self.port}/healthz", context=current, timeout=5) as r:
            self.assertEqual(r.status, 200)
            self.assertEqual(r.headers.get("Strict-Transport-Security"), "max-age=31536000")

    def test_sighup_rereads_the_certificate_for_new_connections(self):
        old = served_fingerprint(self.port)
        renewed_cert, renewed_key = make_certificate(self.dir, "renewed", "show.test")
        shutil.copyfile(renewed_cert, self.cert)
        shutil.copyfile(renewed_key, self.key)
        os.kill(self.proc.pid, signal.SIGHUP)
        expected = file_fingerprint(renewed_cert)
        self.assertNotEqual(old, expected)
        self.assertTrue(harness.wait_until(lambda: served_fingerprint(self.port) == expected, 5),
                        "the renewed certificate was not served after SIGHUP")
        # A broken file on the next SIGHUP keeps the served certificate.
        with open(self.key, "w") as f:
            f.write("not a key\n")
        os.kill(self.proc.pid, signal.SIGHUP)
        time.sleep(0.5)
        self.assertEqual(served_fingerprint(self.port), expected)
        self.assertIsNone(self.proc.poll(), "cohost exited on a broken certificate reload")
        shutil.copyfile(renewed_key, self.key)

    def test_a_guest_opening_the_link_by_name_gets_a_secure_context_and_the_camera(self):
        asyncio.run(self._secure_context())

    async def _secure_context(self):
        room = "tls"
        admin = harness.token("*", "producer", admin=True)
        request = urllib.request.Request(
            f"https://127.0.0.1:{self.port}/v1/rooms", data=b'{"name":"tls","audioOnly":true}', method="POST",
            headers={"Authorization": f"Bearer {admin}", "Content-Type": "application/json"})
        urllib.request.urlopen(request, context=unverified(), timeout=5).read()
        guest = harness.token(room, "guest")
        # The control: the same name over plain HTTP (a page served from here) is no secure context.
        plain = harness.free_tcp_port()
        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

        handler = lambda *a, **k: Quiet(*a, directory=self.dir, **k)  # noqa: E731
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", plain), handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        wav = harness.write_tone_wav(os.path.join(self.dir, "tone.wav"), 660, seconds=2)
        try:
            async with async_playwright() as p:
                chromium = await p.chromium.launch(
                    executable_path=browser.CHROMIUM, headless=True,
                    args=browser.chromium_args(wav) + ["--host-resolver-rules=MAP show.test 127.0.0.1"])
                context = await chromium.new_context(ignore_https_errors=True)
                page = await context.new_page()
                errors = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                await page.goto(f"https://show.test:{self.port}/join/{room}#token={guest}")
                secure = await page.evaluate("window.isSecureContext")
                camera = await page.evaluate("""async () => {
                    const s = await navigator.mediaDevices.getUserMedia({audio: true, video: true});
                    const kinds = s.getTracks().map(t => t.kind).sort();
                    s.getTracks().forEach(t => t.stop());
                    return kinds;
                }""")
                # The events socket over wss, the token as a subprotocol (never in the URL).
                opened = await page.evaluate("""token => new Promise(done => {
                    const ws = new WebSocket(`wss://${location.host}/v1/rooms/tls/events`,
                                             ['cohost.events', 'cohost.token.' + token]);
                    ws.onopen = () => { done(ws.protocol); ws.close(); };
                    ws.onerror = () => done('error');
                })""", guest)
                await page.goto(f"http://show.test:{plain}/")
                plain_secure = await page.evaluate("window.isSecureContext")
                plain_camera = await page.evaluate("!!(navigator.mediaDevices && navigator.mediaDevices.getUserMedia)")
                await chromium.close()
        finally:
            httpd.shutdown()
        self.assertTrue(secure, "the join page over https is not a secure context")
        self.assertEqual(camera, ["audio", "video"])
        self.assertEqual(opened, "cohost.events")
        self.assertFalse(plain_secure)
        self.assertFalse(plain_camera, "over plain http by name the page must not reach the camera")


if __name__ == "__main__":
    unittest.main()
