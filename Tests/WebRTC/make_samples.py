"""Writes sample WebRTC offers to samples/ (for whoever works on the server's side of the offer/answer):

  aiortc-offer.sdp               aiortc's offer as test_aiortc.py sends it (sendrecv audio + video, default bundle
                                 policy, candidates on 127.0.0.1 inside the test namespace)
  aiortc-offer-no-ssrc.sdp       the same with every a=ssrc / a=ssrc-group line stripped (test_offer_without_ssrc)
  aiortc-offer-passive.sdp       another peer's offer with a=setup:passive (test_aiortc_as_dtls_server)
  aiortc-offer-whip.sdp          aiortc's sendonly offer (test_whip)
  chromium-offer.sdp             Chromium's offer as test_chromium.py sends it (fake camera and microphone,
                                 sendrecv, `new RTCPeerConnection()` defaults)
  chromium-offer-sendonly.sdp    Chromium's sendonly offer (what a browser WHIP client sends)
  chromium-offer-simulcast.sdp   Chromium's offer with the camera as three simulcast encodings (rids q, h, f)
  cohost-answer-to-*.sdp         what the cohost binary (COHOST_BIN) answers to each of those offers (skipped when
                                 it refuses one: the status and error are printed instead)

Run: python3 make_samples.py (enters its own network namespace like the tests).
"""

import asyncio
import os
import sys

sys.dont_write_bytecode = True

import harness  # noqa: E402

harness.enter_network_namespace()

import peers  # noqa: E402

SAMPLES = os.path.join(harness.HERE, "samples")


def write(name, sdp):
    path = os.path.join(SAMPLES, name)
    with open(path, "w", newline="") as f:
        f.write(sdp if sdp.endswith("\n") else sdp + "\r\n")
    print("wrote", os.path.relpath(path, harness.ROOT))


async def aiortc_samples():
    peer = peers.Peer(tone_hz=440)
    offer = await peer.make_offer()
    write("aiortc-offer.sdp", offer)
    write("aiortc-offer-no-ssrc.sdp", harness.strip_ssrc_lines(offer))
    await peer.close()
    passive = peers.Peer(tone_hz=440)  # a peer of its own: its SSRCs must not clash with the first one's
    write("aiortc-offer-passive.sdp", (await passive.make_offer()).replace("a=setup:actpass", "a=setup:passive"))
    await passive.close()
    whip = peers.Peer(tone_hz=440, direction="sendonly")
    write("aiortc-offer-whip.sdp", await whip.make_offer())
    await whip.close()


async def chromium_samples(workdir):
    from playwright.async_api import async_playwright

    import browser

    wav = harness.write_tone_wav(os.path.join(workdir, "tone.wav"), 880, 10)
    server = browser.PageServer()
    try:
        async with async_playwright() as p:
            b = await browser.launch(p, wav)
            for name, direction, simulcast in (("chromium-offer.sdp", "sendrecv", False),
                                               ("chromium-offer-sendonly.sdp", "sendonly", False),
                                               ("chromium-offer-simulcast.sdp", "sendrecv", True)):
                peer = await browser.BrowserPeer.open(b, server)
                offer = await peer.offer(direction=direction, simulcast=simulcast)
                if not offer["gatheringComplete"]:
                    print("warning: Chromium's ICE gathering did not complete within 5 s", file=sys.stderr)
                write(name, offer["sdp"])
                await peer.close()
            await b.close()
    finally:
        server.stop()


def answers():
    if not os.path.exists(harness.cohost_binary()):
        print("no cohost binary: no answers written")
        return
    with harness.Cohost() as cohost:
        for name in ("aiortc-offer", "aiortc-offer-no-ssrc", "aiortc-offer-passive", "chromium-offer"):
            with open(os.path.join(SAMPLES, name + ".sdp"), newline="") as f:
                offer = f.read()
            r = cohost.join("samples", name.replace("-", "_"), offer)
            report(name, r)
        for name in ("aiortc-offer-whip", "chromium-offer-sendonly"):
            with open(os.path.join(SAMPLES, name + ".sdp"), newline="") as f:
                offer = f.read()
            user = name.replace("-", "_")
            r = cohost.call("POST", "/whip/samples", cohost.token("samples", user), offer,
                            content_type="application/sdp")
            report(name + " (WHIP)", r, name)


def report(what, r, name=None):
    name = name or what
    if r.status == 201:
        write(f"cohost-answer-to-{name}.sdp", r.text)
    else:
        print(f"cohost refused {what}: {r.status} {r.text[:300]}")


def main():
    import tempfile

    os.makedirs(SAMPLES, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cohost-samples-") as workdir:
        asyncio.run(aiortc_samples())
        asyncio.run(chromium_samples(workdir))
    answers()


if __name__ == "__main__":
    main()
