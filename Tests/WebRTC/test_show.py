"""A show run from the console: the producer creates a room and its RTMP output in the console, invites two guests
whose browsers join through the join page's links, watches both voice meters move, moves one guest's box in the
layout editor and finds that guest's picture at the new place in a frame pulled from nginx-rtmp, then kicks the
other guest, whose page says so. No page may log an error. Writes docs/screenshots/console-show.png.

Run: Tests/WebRTC/run.sh test_show   (root: a network namespace with only loopback)."""
import asyncio
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True

import harness  # noqa: E402

harness.enter_network_namespace()

import browser  # noqa: E402
from playwright.async_api import async_playwright  # noqa: E402

SCREENSHOTS = os.path.join(harness.ROOT, "docs", "screenshots")
ROOM = "evening-show"
W, H = 640, 360


def greenish(frame, x, y, w, h):
    """Whether the area is mostly Chromium's fake camera (a bright green picture), not the room's background."""
    area = frame[y:y + h, x:x + w].reshape(-1, 3).astype(int)
    g = area[:, 1].mean()
    return g > 90 and g > area[:, 0].mean() + 40 and g > area[:, 2].mean() + 40


class ShowTests(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="cohost-show-")
        cls.wavs = {u: harness.write_tone_wav(os.path.join(cls.dir, f"{u}.wav"), hz, seconds=10, gate=(300, 100))
                    for u, hz in (("ann", 660), ("ben", 880))}
        cls.cohost = harness.Cohost(extra_args=["--web-dir", harness.WEB_DIR])
        cls.nginx = harness.NginxRTMP()

    @classmethod
    def tearDownClass(cls):
        cls.nginx.stop()
        cls.cohost.stop()
        harness.remove_temp_dir(cls.dir)

    async def asyncSetUp(self):
        harness.relax_slow_callback_warning()
        self.playwright = await async_playwright().start()
        self.browsers = []
        self.errors = []

    async def asyncTearDown(self):
        for b in self.browsers:
            await b.close()
        await self.playwright.stop()

    async def page(self, wav, name, viewport):
        chromium = await browser.launch(self.playwright, wav)
        self.browsers.append(chromium)
        context = await chromium.new_context(viewport=viewport)
        page = await context.new_page()
        page.set_default_timeout(15000)
        browser.record_errors(page, self.errors, prefix=f"{name}: ")
        return page

    def diag(self, *extra):
        return "\n".join([str(x) for x in extra] + [
            f"room: {self.cohost.room(ROOM)}", f"browser errors: {self.errors}",
            "cohost log (tail):", self.cohost.output()[-3000:]])

    async def test_a_producer_runs_a_show_with_two_guests_from_the_console(self):
        admin = harness.token("*", "producer", admin=True, ttl=900)
        producer = await self.page(self.wavs["ann"], "console", {"width": 1440, "height": 1000})
        await producer.goto(f"{self.cohost.base}/#token={admin}")

        # The room and its output, from the console.
        await browser.create_room_in_console(producer, ROOM, W, H, 15)
        await producer.click(f"[data-testid=room][data-room='{ROOM}']")
        await producer.wait_for_selector("[data-testid=events-state][data-state=open]")
        await producer.fill("[data-testid=output-url]", self.nginx.url(ROOM))
        await producer.click("[data-testid=add-output]")
        await producer.wait_for_selector("[data-testid=output][data-state=connected]")

        # Two invitations; each guest opens its link in a browser of its own and joins.
        guests = {}
        link = producer.locator("[data-testid=invite-link]")
        for user in ("ann", "ben"):
            await producer.fill("[data-testid=invite-user]", user)
            await producer.click("[data-testid=invite]")

            async def invited():
                # The field still shows the previous guest's link until this one's arrives.
                value = await link.input_value()
                return "#token=" in value and harness.token_claims(value.split("#token=", 1)[1]).get("sub") == user

            self.assertTrue(await harness.await_until(invited, 5), self.diag(f"no invite link for {user}"))
            url = await link.input_value()
            self.assertTrue(url.startswith(f"{self.cohost.base}/join/{ROOM}#token="), url)
            await producer.fill("[data-testid=invite-user]", "")
            guest = await self.page(self.wavs[user], user, {"width": 1280, "height": 800})
            await guest.goto(url)
            await guest.wait_for_selector("#join:not([disabled])")
            await guest.click("#join")
            guests[user] = guest
        for user, guest in guests.items():
            try:
                await guest.wait_for_selector("#app[data-call-state=connected]")
            except Exception:
                self.fail(self.diag(f"{user} did not connect", await guest.inner_text("body")))

        # Both voices move their meters in the console.
        peaks = {"ann": 0, "ben": 0}

        async def both_spoke():
            for user in peaks:
                peaks[user] = max(peaks[user], await browser.meter_level(producer, user))
            return all(v > 0 for v in peaks.values())

        self.assertTrue(await harness.await_until(both_spoke, 15, 0.1), self.diag(f"meter peaks {peaks}"))
        await producer.wait_for_timeout(1200)  # a fresh preview with both pictures
        os.makedirs(SCREENSHOTS, exist_ok=True)
        await producer.screenshot(path=os.path.join(SCREENSHOTS, "console-show.png"))

        # The grid gives ben the right half (his picture fitted inside). Drag his box 90 px down and apply.
        box = producer.locator("[data-testid=region][data-user-id='ben']")
        await box.scroll_into_view_if_needed()
        before = await box.evaluate("b => [b.dataset.x, b.dataset.y].map(Number)")
        scale = (await producer.locator("[data-testid=stage]").bounding_box())["width"] / W
        body = await box.bounding_box()
        cx, cy = body["x"] + body["width"] / 2, body["y"] + body["height"] / 2
        await producer.mouse.move(cx, cy)
        await producer.mouse.down()
        await producer.mouse.move(cx, cy + 45 * scale, steps=6)
        await producer.mouse.move(cx, cy + 90 * scale, steps=6)
        await producer.mouse.up()
        await producer.click("[data-testid=apply-layout]")
        await producer.wait_for_selector("[data-testid=layout-dirty]", state="hidden")
        layout = (self.cohost.room(ROOM) or {}).get("layout") or {}
        ben = next((r for r in layout.get("regions", []) if r["userId"] == "ben"), None)
        self.assertIsNotNone(ben, self.diag(layout))
        self.assertEqual(before, [320, 0], self.diag("the grid did not give ben the right half"))
        self.assertLessEqual(abs(ben["y"] - 90), 8, self.diag(ben))
        self.assertLessEqual(abs(ben["x"] - 320), 8, self.diag(ben))

        # The pulled programme shows ben's camera at its new place, and the room's background where he was.
        await asyncio.sleep(1.0)
        frames = await harness.apull_frames(self.nginx.url(ROOM), 3, os.path.join(self.dir, "show.flv"))
        self.assertTrue(frames, self.diag("no picture in three pulls of the programme"))
        frame = frames[-1]
        # His picture (16:9, fitted into the part of his box on the canvas) was at y 90–270; moved down, it covers a
        # band near the bottom of the right half and has left the band just under 90.
        self.assertTrue(greenish(frame, 340, 280, 280, 30), self.diag("ben's picture is not at his new place"))
        self.assertFalse(greenish(frame, 340, 95, 280, 30), self.diag("ben's old place still shows his picture"))
        self.assertTrue(greenish(frame, 20, 150, 280, 60), self.diag("ann's picture left her box"))

        # Kick ben from the console (the button asks once more); his page says he was removed.
        kick = producer.locator("[data-testid=participant][data-user-id='ben'] [data-testid=kick]")
        await kick.click()
        await kick.click()
        try:
            await guests["ben"].wait_for_selector("[data-testid=kicked]", state="visible", timeout=10000)
        except Exception:
            self.fail(self.diag("ben's page does not say he was kicked", await guests["ben"].inner_text("body")))
        await producer.wait_for_selector("[data-testid=participant][data-user-id='ben']", state="detached")
        self.assertEqual(self.errors, [], self.diag("errors in a browser console"))


if __name__ == "__main__":
    unittest.main()
