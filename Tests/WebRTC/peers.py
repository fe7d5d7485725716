"""aiortc participants: a sine track, a synthetic picture track, sinks for what comes back, and a peer that joins
Cohost with a complete (non-trickle) offer."""

import asyncio
import collections
import fractions
import time

import av
import numpy as np
from aiortc import RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack

import harness

harness.patch_aioice_for_loopback()

RATE = 48000


class PacedTrack(MediaStreamTrack):
    """A synthetic track that hands out its frames in real time, as a device does: aiortc asks for the next frame
    as soon as it has sent one, so without the wait it would send as fast as the frames can be made."""

    def __init__(self):
        super().__init__()
        self._start = None
        self._index = 0

    def _seconds(self, index):
        """When frame `index` is due, in seconds after the first."""
        raise NotImplementedError

    async def _next_index(self):
        """The index of the frame to make now, once it is due; MediaStreamError once the track has ended."""
        if self.readyState != "live":
            raise MediaStreamError
        if self._start is None:
            self._start = time.time()
        else:
            self._index += 1
            wait = self._start + self._seconds(self._index) - time.time()
            if wait > 0:
                await asyncio.sleep(wait)
        return self._index


class ToneTrack(PacedTrack):
    """A sine of `freq` Hz, 20 ms mono s16 frames at 48 kHz, paced in real time.

    `gate` (on_ms, off_ms) switches the tone on and off like syllables. A steady sine is not speech to Opus's
    voice activity detector: Cohost's return encoder (VoIP, DTX on) then stops sending it after a second or two
    (a DTX frame every 400 ms), so a test listening to the return audio needs a gated tone. None: steady."""

    kind = "audio"

    def __init__(self, freq=440.0, amplitude=0.3, ptime=0.020, gate=(300, 100)):
        super().__init__()
        self.freq = freq
        self.amplitude = amplitude
        self.gate = gate
        self.samples = int(RATE * ptime)

    def _seconds(self, index):
        return index * self.samples / RATE

    async def recv(self):
        pts = await self._next_index() * self.samples
        n = np.arange(pts, pts + self.samples)
        wave = self.amplitude * 32767 * np.sin(2 * np.pi * self.freq * n / RATE)
        if self.gate:
            on, off = (int(RATE * ms / 1000) for ms in self.gate)
            wave = wave * ((n % (on + off)) < on)
        pcm = wave.astype(np.int16)
        frame = av.AudioFrame.from_ndarray(pcm.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = RATE
        frame.pts = pts
        frame.time_base = fractions.Fraction(1, RATE)
        return frame


class PatternTrack(PacedTrack):
    """A `colour` (RGB) picture with a white bar moving across it, `fps` frames a second, 90 kHz timestamps."""

    kind = "video"

    def __init__(self, colour=(0, 160, 0), width=320, height=240, fps=15):
        super().__init__()
        self.colour = colour
        self.width, self.height, self.fps = width, height, fps

    def _seconds(self, index):
        return index / self.fps

    async def recv(self):
        index = await self._next_index()
        img = np.empty((self.height, self.width, 3), dtype=np.uint8)
        img[:, :] = self.colour
        x = (index * 4) % self.width
        img[:, x:x + 16] = 255
        frame = av.VideoFrame.from_ndarray(img, format="rgb24")
        frame.pts = int(index * 90000 / self.fps)
        frame.time_base = fractions.Fraction(1, 90000)
        return frame


class Sink:
    """Reads a received track continuously (so aiortc's queues never grow) and keeps what the tests look at:
    frame counts, and for audio the last `keep_seconds` of sound as mono int16 at 48 kHz."""

    def __init__(self, track, keep_seconds=4.0):
        self.track = track
        self.kind = track.kind
        self.frames = 0
        self.first_frame_at = None
        self.size = None
        self.audio = collections.deque(maxlen=int(keep_seconds * 50) + 1)  # 20 ms frames
        self.rate = RATE
        self.error = None
        self.task = asyncio.ensure_future(self._run())

    async def _run(self):
        try:
            while True:
                frame = await self.track.recv()
                self.frames += 1
                if self.first_frame_at is None:
                    self.first_frame_at = time.monotonic()
                if self.kind == "audio":
                    self.rate = frame.sample_rate
                    pcm = frame.to_ndarray()
                    channels = len(frame.layout.channels)
                    if pcm.ndim == 2 and pcm.shape[0] == 1 and channels > 1:  # packed: interleaved
                        pcm = pcm.reshape(-1, channels).mean(axis=1)
                    elif pcm.ndim == 2:  # planar
                        pcm = pcm.mean(axis=0)
                    self.audio.append(pcm.astype(np.int16))
                else:
                    self.size = (frame.width, frame.height)
        except MediaStreamError:
            pass
        except Exception as e:  # a bug here should show in the test, not vanish in a task
            self.error = e

    def recent_audio(self, seconds=2.0):
        frames = list(self.audio)
        if not frames:
            return np.zeros(0, dtype=np.int16)
        pcm = np.concatenate(frames)
        return pcm[-int(seconds * self.rate):]

    def stop(self):
        self.task.cancel()


class Peer:
    """An aiortc participant: an RTCPeerConnection with a ToneTrack and a PatternTrack (or none, per
    `audio`/`video`), transceivers in `direction`, sinks on whatever comes back."""

    def __init__(self, tone_hz=440.0, colour=(0, 160, 0), audio=True, video=True, direction="sendrecv",
                 configuration=None, gate=(300, 100)):
        self.pc = RTCPeerConnection(configuration) if configuration else RTCPeerConnection()
        self.sinks = {}
        self.answer = None
        self.offer = None
        self.states = []
        self.tone = ToneTrack(tone_hz, gate=gate) if audio else None
        self.picture = PatternTrack(colour) if video else None
        if audio:
            self.pc.addTransceiver(self.tone if direction != "recvonly" else "audio", direction=direction)
        if video:
            self.pc.addTransceiver(self.picture if direction != "recvonly" else "video", direction=direction)

        @self.pc.on("track")
        def on_track(track):
            self.sinks[track.kind] = Sink(track)

        @self.pc.on("connectionstatechange")
        def on_state():
            self.states.append((round(time.monotonic(), 3), self.pc.connectionState))

    async def make_offer(self):
        """createOffer + setLocalDescription; aiortc gathers every candidate before it returns (no trickle)."""
        await self.pc.setLocalDescription(await self.pc.createOffer())
        await harness.await_until(lambda: self.pc.iceGatheringState == "complete", 10)
        self.offer = self.pc.localDescription.sdp
        return self.offer

    async def accept(self, answer_sdp):
        self.answer = answer_sdp
        await self.pc.setRemoteDescription(RTCSessionDescription(sdp=answer_sdp, type="answer"))

    async def wait_connected(self, timeout=15.0):
        return await harness.await_until(lambda: self.pc.connectionState == "connected", timeout)

    def sender_ssrcs(self):
        """{kind: the SSRC aiortc sends that kind on}."""
        return {s.track.kind: s._ssrc for s in self.pc.getSenders() if s.track is not None}

    async def close(self):
        for sink in self.sinks.values():
            sink.stop()
        await self.pc.close()
