"""The producer console (web/console.html) in headless Chromium against a real `cohost serve`.

One walk through the console as a producer uses it: sign in with an admin token in the fragment, create a room from
the form, see its row, open it, watch a plain-RTP ffmpeg participant's voice meter move and its own camera play in
its card (the console's monitor join: forwarded, 320x180, orange), add an RTMP output to a
private nginx-rtmp and see it connect, drag and resize the participant's box in the layout editor, apply it and
check the room's layout over the API. No errors may appear in the browser console (CSP violations included).
Screenshots go to docs/screenshots/console-rooms.png, console-room.png and console-editor.png.

The pages come from cohost itself when it serves web/ (`--web-dir`, GET / → text/html). Otherwise they come from a
small page server here that maps the same paths (/, /rooms/{room} → console.html, /web/{file}) with the same
Content-Security-Policy, and the console reaches the API cross-origin (`?api=`, cohost `--cors-origins`).

Run from this directory: python3 -m unittest -v test_console   (or Tests/WebRTC/run.sh test_console)
Environment: COHOST_BIN, COHOST_WEBRTC_KEEP=1, COHOST_CONSOLE_SCREENSHOTS=0 (do not write the screenshots),
COHOST_CONSOLE_PAGES=local (always use the page server here).
"""

import asyncio
import http.server
import os
import random
import sys
import time
import unittest
import uuid

sys.dont_write_bytecode = True

import harness  # noqa: E402

harness.enter_network_namespace()

import browser  # noqa: E402
from playwright.async_api import async_playwright  # noqa: E402

SCREENSHOTS = os.path.join(harness.ROOT, "docs", "screenshots")

TYPES = {"js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8", "svg": "image/svg+xml",
         "png": "image/png", "ico": "image/x-icon", "json": "application/json", "html": "text/html; charset=utf-8"}


def csp(host, api_host=None):
    """The Content-Security-Policy cohost puts on its pages; with `api_host`, the API's origin is allowed too (the
    page server's pages call cohost cross-origin)."""
    connect = f"'self' ws://{host} wss://{host}"
    if api_host:
        connect += f" http://{api_host} ws://{api_host}"
    return browser.COHOST_CSP.format(connect=connect)


class PageServer(browser.LoopbackServer):
    """web/ on a loopback port, at the paths cohost serves it: / and /rooms/{room} → console.html, /join/{room} →
    join.html, /web/{file} → the file; pages with the CSP above."""

    def __init__(self, api_host):
        outer = self
        self.api_host = api_host

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                path = self.path.split("?", 1)[0]
                page = None
                if path == "/" or (path.startswith("/rooms/") and path.count("/") == 2):
                    page = "console.html"
                elif path.startswith("/join/") and path.count("/") == 2:
                    page = "join.html"
                name = page or (path[len("/web/"):] if path.startswith("/web/") else None)
                if not name or "/" in name or name.startswith("."):
                    return self.send_error(404)
                ext = name.rsplit(".", 1)[-1]
                file = os.path.join(harness.WEB_DIR, name)
                if ext not in TYPES or not os.path.isfile(file):
                    return self.send_error(404)
                headers = ()
                if page:
                    headers = (("Content-Security-Policy", csp(self.headers.get("Host"), outer.api_host)),
                               ("Referrer-Policy", "no-referrer"))
                browser.send_static(self, file, TYPES[ext], headers)

        super().__init__(Handler)


class ConsoleTests(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls):
        cls.pages = None
        cls.cohost = None
        cls.nginx = None
        local = os.environ.get("COHOST_CONSOLE_PAGES") == "local"
        # The page server's port is needed for --cors-origins before cohost's port is known: reserve it first.
        cls.pages = PageServer(api_host=None)
        cls.cohost = harness.cohost_with_pages(["--cors-origins", cls.pages.origin], serve_pages=not local)
        cls.pages.api_host = f"127.0.0.1:{cls.cohost.http_port}"
        root = cls.cohost.call("GET", "/")
        cls.served_by_cohost = (not local and root.status == 200
                                and root.headers.get("content-type", "").startswith("text/html"))
        if cls.served_by_cohost:
            cls.origin = cls.cohost.base
            cls.query = ""
        else:
            cls.origin = cls.pages.origin
            cls.query = f"?api={cls.cohost.base}"
        cls.nginx = harness.NginxRTMP()

    @classmethod
    def tearDownClass(cls):
        harness.stop_all(cls.nginx, cls.cohost, cls.pages)

    async def asyncSetUp(self):
        harness.relax_slow_callback_warning()
        self.playwright = await async_playwright().start()
        # The console's monitor (its participants' cameras) connects over WebRTC: in this namespace only a loopback
        # candidate can pair, and a page without camera permission gathers an mDNS name instead unless told not to.
        self.browser = await self.playwright.chromium.launch(
            executable_path=browser.CHROMIUM, headless=True,
            args=["--allow-loopback-in-peer-connection", "--disable-features=WebRtcHideLocalIpsWithMdns"])
        self.context = await self.browser.new_context(viewport={"width": 1440, "height": 1000})
        self.page = await self.context.new_page()
        self.page.set_default_timeout(15000)
        self.errors = []
        browser.record_errors(self.page, self.errors)
        self.ffmpeg = []

    async def asyncTearDown(self):
        for f in self.ffmpeg:
            f.stop()
        await self.context.close()
        await self.browser.close()
        await self.playwright.stop()

    def diag(self, *extra):
        return "\n".join([str(x) for x in extra] + [
            f"pages from {'cohost' if self.served_by_cohost else 'the test page server'} at {self.origin}",
            f"browser errors: {self.errors}", "cohost log (tail):", self.cohost.output()[-3000:]])

    # Polling from here, not wait_for_function: a predicate string is eval'd in the page, which the CSP forbids.
    @staticmethod
    async def until(predicate, timeout, interval=0.2):
        return await harness.await_until(predicate, timeout, interval)

    @staticmethod
    async def attr_number(locator, name):
        try:
            return float(await locator.get_attribute(name, timeout=1000) or 0)
        except Exception:
            return 0

    async def shot(self, name, target=None):
        if os.environ.get("COHOST_CONSOLE_SCREENSHOTS") == "0":
            return
        os.makedirs(SCREENSHOTS, exist_ok=True)
        path = os.path.join(SCREENSHOTS, name)
        if target is None:
            await self.page.screenshot(path=path)
        else:
            await target.screenshot(path=path)

    async def test_producer_walkthrough(self):
        try:
            await self.walkthrough()
        except AssertionError:
            raise
        except Exception as e:  # a Playwright timeout: say what the page and cohost said
            try:
                await self.page.screenshot(path=os.path.join(self.cohost.workdir, "failure.png"), full_page=True)
            except Exception:
                pass
            raise AssertionError(self.diag(f"{type(e).__name__}: {str(e)[:1500]}",
                                           f"failure screenshot: {self.cohost.workdir}/failure.png "
                                           "(kept with COHOST_WEBRTC_KEEP=1)")) from e

    async def walkthrough(self):
        page = self.page
        room = f"show-{uuid.uuid4().hex[:6]}"
        guest = "guest1"
        admin = harness.token("*", "producer", admin=True, ttl=900)

        # Sign in: the token arrives in the fragment and leaves the address bar at once.
        await page.goto(f"{self.origin}/{self.query}#token={admin}")
        await page.wait_for_selector("[data-testid=create-form]")
        self.assertNotIn("token=", page.url)
        self.assertEqual(await page.evaluate("sessionStorage.getItem('cohost.adminToken')"), admin)

        # Create a room from the form; its row appears.
        await browser.create_room_in_console(page, room, 640, 360, 15)
        row = page.locator(f"[data-testid=room][data-room='{room}']")
        await row.wait_for()
        info = await asyncio.to_thread(self.cohost.room, room)
        self.assertIsNotNone(info, self.diag("the room was not created"))
        self.assertEqual((info["canvas"]["width"], info["canvas"]["height"], info["canvas"]["fps"]), (640, 360, 15))

        # Open it.
        await row.click()
        await page.wait_for_selector("[data-testid=editor]")
        self.assertTrue(page.url.split("?")[0].endswith(f"/rooms/{room}") or f"room={room}" in page.url, page.url)

        # The events WebSocket opens with the token as a subprotocol (never in the URL).
        try:
            await page.wait_for_selector("[data-testid=events-state][data-state=open]", timeout=10000)
        except Exception:
            self.fail(self.diag("the events WebSocket did not open: does cohost take the token as the subprotocol "
                                "cohost.token.<token> (with cohost.events) and answer cohost.events?"))

        # A plain-RTP ffmpeg participant with a (gated) tone: its row appears and its meter rises.
        audio_ssrc = random.randrange(10_000, 2**31)
        r = await asyncio.to_thread(self.cohost.join, room, guest, harness.plain_offer(audio_ssrc, audio_ssrc + 1))
        self.assertEqual(r.status, 201, self.diag(r))
        self.ffmpeg.append(harness.FFmpegParticipant(self.cohost.rtp_port, colour="orange", tone_hz=660,
                                                     audio_ssrc=audio_ssrc, video_ssrc=audio_ssrc + 1))
        meter = f"[data-testid=participant][data-user-id='{guest}'] [data-testid=meter]"
        await page.wait_for_selector(meter)
        level = page.locator(meter)
        if not await self.until(lambda: self.attr_number(level, "data-level"), 15):
            self.fail(self.diag("the meter never rose above 0"))

        # The console watches as a monitor: the participant's own camera (320x180 orange, forwarded) in its card,
        # and the participant list still holds the participant alone.
        camera = f"[data-testid=participant][data-user-id='{guest}'] [data-testid=participant-camera]"
        picture = None
        end = time.monotonic() + 15
        while time.monotonic() < end:
            picture = await page.evaluate(browser.PICTURE, camera)
            if picture and (picture["width"], picture["height"]) == (320, 180):
                break
            await asyncio.sleep(0.2)
        if (picture or {}).get("width") != 320:
            mine = self.cohost.call("GET", f"/v1/rooms/{room}/participants/producer/subscriptions", self.cohost.admin())
            self.fail(self.diag(f"the card's camera: {picture}; the console's slots: {mine.status} {mine.body[:400]}"))

        red, green, blue = picture["rgb"]
        self.assertTrue(red > 200 and 120 < green < 210 and blue < 90, self.diag(f"not orange: {picture}"))
        listed = [p["userId"] for p in (self.cohost.room(room) or {}).get("participants", [])]
        self.assertEqual(listed, [guest])

        # An RTMP output to nginx-rtmp, added from the form, connects.
        await page.fill("[data-testid=output-url]", self.nginx.url(room))
        await page.click("[data-testid=add-output]")
        try:
            await page.wait_for_selector("[data-testid=output][data-state=connected]", timeout=15000)
        except Exception:
            self.fail(self.diag("the output did not show connected"))

        # Its numbers (output_status, every 3 s) show what it writes.
        rate = page.locator("[data-testid=output] [data-stat=rate]")

        async def writing():
            text = await rate.text_content(timeout=1000) or ""
            return text.strip() not in ("", "0 kb/s")

        if not await self.until(writing, 10):
            self.fail(self.diag(f"the output's rate stayed at {await rate.text_content()}"))

        # The preview shows the programme.
        preview = page.locator("[data-testid=preview]")
        if not await self.until(lambda: preview.evaluate("i => i.naturalWidth"), 10):
            self.fail(self.diag("the preview shows no snapshot"))
        # Let a voice_levels event and a fresh snapshot in before the picture.
        await page.wait_for_timeout(1200)
        await self.shot("console-room.png")

        # The layout editor: the grid tile of guest1 fills the canvas; resize it to a quarter, move it, apply.
        box = page.locator(f"[data-testid=region][data-user-id='{guest}']")
        await box.wait_for()
        await box.scroll_into_view_if_needed()
        scale = (await page.locator("[data-testid=stage]").bounding_box())["width"] / 640
        handle = await box.locator(".handle.se").bounding_box()
        hx, hy = handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2
        await page.mouse.move(hx, hy)
        await page.mouse.down()
        await page.mouse.move(hx - 160 * scale, hy - 90 * scale, steps=8)
        await page.mouse.move(hx - 320 * scale, hy - 180 * scale, steps=8)
        await page.mouse.up()
        body = await box.bounding_box()
        cx, cy = body["x"] + body["width"] / 2, body["y"] + body["height"] / 2
        await page.mouse.move(cx, cy)
        await page.mouse.down()
        await page.mouse.move(cx + 100 * scale, cy + 50 * scale, steps=6)
        await page.mouse.move(cx + 200 * scale, cy + 100 * scale, steps=6)
        await page.mouse.up()
        await page.click("[data-testid=apply-layout]")
        await page.wait_for_selector("[data-testid=layout-dirty]", state="hidden")

        def layout():
            return ((self.cohost.room(room) or {}).get("layout")) or {}

        got = await asyncio.to_thread(layout)
        self.assertEqual(got.get("mode"), "custom", self.diag(got))
        regions = [r for r in got.get("regions", []) if r["userId"] == guest]
        self.assertEqual(len(regions), 1, self.diag(got))
        region = regions[0]
        want = {"x": 200, "y": 100, "width": 320, "height": 180}
        for key, value in want.items():
            self.assertLessEqual(abs(region[key] - value), 8, self.diag(f"{key}: {region} vs {want}"))
        # The editor shows what the server now has.
        shown = await box.evaluate("b => [b.dataset.x, b.dataset.y, b.dataset.width, b.dataset.height].map(Number)")
        self.assertEqual(shown, [region["x"], region["y"], region["width"], region["height"]])

        # A name label on the guest's tile: set in the region's form, shown on the stage where the programme draws it,
        # kept by the server.
        await box.click()
        await page.select_option("[data-testid=region-label]", "text")
        await page.fill("[data-testid=region-label-text]", "Guest One 嘉宾")
        await page.press("[data-testid=region-label-text]", "Tab")
        await page.select_option("[data-testid=region-label-position]", "top-left")
        caption = box.locator("[data-testid=region-caption]")
        self.assertEqual(await caption.inner_text(), "Guest One 嘉宾")
        self.assertEqual(await caption.get_attribute("data-position"), "top-left")
        await page.click("[data-testid=apply-layout]")
        await page.wait_for_selector("[data-testid=layout-dirty]", state="hidden")
        got = await asyncio.to_thread(layout)
        region = next(r for r in got.get("regions", []) if r["userId"] == guest)
        self.assertEqual(region.get("label", {}).get("text"), "Guest One 嘉宾", self.diag(got))
        self.assertEqual(region["label"].get("position"), "top-left", self.diag(got))
        await page.wait_for_timeout(900)  # a snapshot with the new layout under the boxes
        await self.shot("console-editor.png", page.locator("[data-testid=editor]"))

        # Back to the list: the room shows one participant and its output connected.
        await page.click("#crumbs a")
        await row.wait_for()
        if not await self.until(lambda: self.attr_number(row, "data-participants"), 10):
            self.fail(self.diag("the room's row does not show its participant"))
        await row.locator(".chip[data-state=connected]").wait_for()
        await self.shot("console-rooms.png")

        self.assertEqual(self.errors, [], self.diag("errors in the browser console"))


if __name__ == "__main__":
    unittest.main()
