"""Chromium (through Playwright) as a WebRTC participant: the page server, the browser, and a page wrapper.

The page is client.html, served from its own loopback port (so it is another origin than cohost's API, as a real
web app would be). When the cohost under test cannot be told which origins may call it (no --cors-origins yet),
the page server also relays `/proxy/<path>` to cohost, so the page can reach the API from its own origin.
"""

import http.server
import os
import socketserver
import threading
import urllib.error
import urllib.request

import harness

CHROMIUM = os.environ.get("COHOST_CHROMIUM", "/usr/bin/chromium")


class _ThreadingServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class LoopbackServer:
    """An HTTP server for the pages of a test on a free loopback port, answering from a daemon thread while the
    test drives the browser."""

    def __init__(self, handler):
        self.server = _ThreadingServer(("127.0.0.1", 0), handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def origin(self):
        return f"http://127.0.0.1:{self.port}"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


#: What cohost sends with every page (Sources/Server/WebPages.swift), but for connect-src, which says which
#: origins the page may call: the page servers here vary it, as their pages call the API cross-origin.
COHOST_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
              "media-src 'self' blob:; connect-src {connect}; object-src 'none'; base-uri 'none'; "
              "form-action 'self'; frame-ancestors 'none'")


def send_static(handler, path, content_type, headers=()):
    """Answers `handler`'s request with the file at `path` as cohost serves its web/ files (no-cache, nosniff),
    plus `headers` ((name, value) pairs, such as a page's CSP)."""
    with open(path, "rb") as f:
        body = f.read()
    handler.send_response(200)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("X-Content-Type-Options", "nosniff")
    for name, value in headers:
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


class PageServer(LoopbackServer):
    """client.html (and any file of this directory) on http://127.0.0.1:<port>/, plus a relay from
    /proxy/<path> to `proxy_target` + /<path> once that is set."""

    def __init__(self):
        self.proxy_target = None
        self.requests = []
        outer = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=harness.HERE, **kwargs)

            def log_message(self, *args):
                pass

            def _relay(self):
                outer.requests.append((self.command, self.path))
                if not self.path.startswith("/proxy/") or outer.proxy_target is None:
                    if self.command == "GET":
                        return super().do_GET()
                    self.send_error(404)
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type")}
                request = urllib.request.Request(outer.proxy_target + self.path[len("/proxy"):], data=body,
                                                 method=self.command, headers=headers)
                try:
                    with urllib.request.urlopen(request, timeout=20) as r:
                        status, rheaders, rbody = r.status, r.headers, r.read()
                except urllib.error.HTTPError as e:
                    status, rheaders, rbody = e.code, e.headers, e.read()
                self.send_response(status)
                for name in ("Content-Type", "Location", "ETag"):
                    if rheaders.get(name):
                        self.send_header(name, rheaders.get(name))
                self.send_header("Content-Length", str(len(rbody)))
                self.end_headers()
                self.wfile.write(rbody)

            do_GET = _relay
            do_POST = _relay
            do_DELETE = _relay
            do_PATCH = _relay

        super().__init__(Handler)

    def page_url(self, name="client.html"):
        return f"{self.origin}/{name}"


#: The size of a <video> and the colour at its centre (a canvas read), or null before its first picture.
PICTURE = """(selector) => {
  const v = document.querySelector(selector);
  if (!v || !v.videoWidth) return null;
  const c = document.createElement("canvas");
  c.width = v.videoWidth; c.height = v.videoHeight;
  const g = c.getContext("2d");
  g.drawImage(v, 0, 0);
  const d = g.getImageData(c.width >> 1, c.height >> 1, 1, 1).data;
  return {width: v.videoWidth, height: v.videoHeight, rgb: [d[0], d[1], d[2]]};
}"""


def chromium_args(tone_wav, video_file=None):
    args = ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-audio-capture={tone_wav}", "--allow-loopback-in-peer-connection",
            "--autoplay-policy=no-user-gesture-required"]
    if video_file:
        args.append(f"--use-file-for-fake-video-capture={video_file}")
    return args


async def launch(playwright, tone_wav, video_file=None):
    """Headless Debian Chromium (no Playwright browser download) with the fake devices, the microphone playing
    `tone_wav` in a loop; the camera Chromium's own pattern, or `video_file` (.y4m or .mjpeg) in a loop."""
    return await playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                            args=chromium_args(tone_wav, video_file))


def write_noise_y4m(path, width=640, height=360, fps=30, seconds=2):
    """A clip of moving noise over a test pattern: Chromium's own fake camera draws so simple a picture that VP8
    needs only about 350 kbit/s for it, too little to show a bitrate cap working; this one takes all it gets."""
    import subprocess

    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                    f"testsrc2=s={width}x{height}:r={fps},noise=alls=40:allf=t+u", "-t", str(seconds),
                    "-pix_fmt", "yuv420p", path], check=True, timeout=60)
    return path


def record_errors(page, errors, prefix=""):
    """Appends to `errors` what a page logs as an error (CSP violations and refused requests among them) and its
    uncaught exceptions: the page tests expect none."""
    page.on("console", lambda m: errors.append(f"{prefix}console.{m.type}: {m.text} {m.location}")
            if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"{prefix}pageerror: {e}"))


async def meter_level(page, user):
    """The level `user`'s voice meter shows on a page (0 while there is none): the join page and the console draw
    the same meter."""
    return await page.evaluate(
        """(u) => { const m = document.querySelector(`[data-testid=participant][data-user-id="${u}"] [data-testid=meter]`);
                    return m ? Number(m.dataset.level) : 0; }""", user)


async def create_room_in_console(page, name, width, height, fps):
    """Creates a room from the console's form, as a producer does."""
    await page.fill("[data-testid=create-name]", name)
    await page.fill("[data-testid=create-width]", str(width))
    await page.fill("[data-testid=create-height]", str(height))
    await page.fill("[data-testid=create-fps]", str(fps))
    await page.click("[data-testid=create-room]")


class BrowserPeer:
    """A page of client.html in its own browser context, driven through `window.cohost`."""

    def __init__(self, page):
        self.page = page
        self.join_result = {}
        self.console = []
        page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))

    @classmethod
    async def open(cls, browser, server):
        context = await browser.new_context()
        page = await context.new_page()
        peer = cls(page)
        await page.goto(server.page_url())
        await page.wait_for_function("() => !!window.cohost")
        return peer

    async def call(self, method, *args):
        """cohost.<method>(*args) in the page (one argument at most: pass an object)."""
        if args:
            return await self.page.evaluate(f"(a) => cohost.{method}(a)", args[0])
        return await self.page.evaluate(f"() => cohost.{method}()")

    async def media(self, **opts):
        return await self.call("media", opts)

    async def offer(self, **opts):
        return await self.call("offer", opts)

    async def start(self, url, token, **opts):
        """The whole join from the page; the result (status, body = the answer, location, offer) is also kept in
        `join_result`."""
        self.join_result = await self.call("start", dict(url=url, token=token, **opts))
        return self.join_result

    async def state(self):
        return await self.call("state")

    async def connection_state(self):
        return (await self.state())["connectionState"]

    async def stats(self):
        return await self.call("stats")

    async def tone_levels(self, name, freqs, frames=10, every_ms=100):
        return await self.page.evaluate("([n, f, k, e]) => cohost.toneLevels(n, f, k, e)",
                                        [name, list(freqs), frames, every_ms])

    async def close_pc(self):
        return await self.call("close")

    async def wait_connected(self, timeout=15.0):
        ok = await harness.await_until(lambda: self._is_connected(), timeout, interval=0.1)
        return ok

    async def _is_connected(self):
        return (await self.connection_state()) == "connected"

    async def close(self):
        try:
            await self.page.context.close()
        except Exception:
            pass
