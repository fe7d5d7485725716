"""The voice's age at the pull, for part 2: how long after a sound was captured a player of the programme hears it.

`Beeper` is the live participant's voice: Opus RTP sent from this process every 20 ms, silent but for a 40 ms beep
every 500 ms, alternately at 1.5 and 3 kHz (the replayed participants' tone is 440 Hz), with sender reports mapping
RTP time to the wall clock at capture, as a WebRTC sender's do. A 20 ms frame counts as captured when its first
sample was, i.e. 20 ms before it is sent, as a microphone's block would be.

`VoicePuller` reads the programme's audio back from nginx (ffmpeg, mono s16le) and finds each beep's onset: the
first 10 ms window whose level at one of the two frequencies passes a threshold after 100 ms below it. A beep's age
is the time the window's first sample reached this process minus the beep's capture time; the alternating
frequencies tell beeps apart for ages under 1 s."""
import math
import os
import socket
import struct
import subprocess
import threading
import time

from media import _Opus, sender_report

RATE, FRAME = 48000, 960            # samples per second, per 20 ms frame
PERIOD_FRAMES, BEEP_FRAMES = 25, 2  # a beep every 500 ms, 40 ms long
FREQS = (1500.0, 3000.0)
AMPLITUDE = 8000                    # of 32767: -12 dBFS
WINDOW = 480                        # 10 ms analysis windows
THRESHOLD = 0.05                    # amplitude (of full scale) at a beep frequency that counts as a beep
QUIET_WINDOWS = 10                  # below it for 100 ms before an onset


def _frames():
    """Two cycles of Opus frames (stereo 64 kb/s), one per beep frequency: beep then silence. The encoder runs
    over a silent cycle first, so each cycle starts from the state a looping sender would be in."""
    cycles = []
    for freq in FREQS:
        pcm = []
        for cycle in range(2):
            for i in range(PERIOD_FRAMES * FRAME):
                v = int(AMPLITUDE * math.sin(2 * math.pi * freq * i / RATE)) if cycle and i < BEEP_FRAMES * FRAME else 0
                pcm += (v, v)
        cycles.append(_Opus().encode(pcm, 2, 2049, 64000, False)[PERIOD_FRAMES:])
    return cycles


class Beeper:
    """Sends the beeps to `dest` as SSRC `ssrc`, payload type 111, from `start()` until `close()`."""

    def __init__(self, dest, ssrc, clock):
        self.dest, self.ssrc, self.clock = tuple(dest), ssrc, clock
        self.cycles = _frames()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.beeps = []   # (capture ms on `clock`, index of the frequency)
        self.late = []    # (send ms on `clock`, ms the send came after its frame's capture ended)
        self.stop = threading.Event()

    def start(self):
        threading.Thread(target=self._send, daemon=True).start()

    def _send(self):
        seq, base, k = 1, 0x1000, 0
        t0, capture0 = time.monotonic(), time.time()   # frame 0's first sample is captured now
        next_report = t0
        packets = octets = 0
        while not self.stop.is_set():
            delay = t0 + (k + 1) * FRAME / RATE - time.monotonic()   # frame k is sent when its 20 ms are captured
            if delay > 0:
                time.sleep(delay)
            cycle = (k // PERIOD_FRAMES) % 2
            if k % PERIOD_FRAMES == 0:
                self.beeps.append((int((capture0 + k * FRAME / RATE - self.clock.epoch) * 1000), cycle))
            payload = self.cycles[cycle][k % PERIOD_FRAMES]
            rtp = (base + k * FRAME) & 0xFFFFFFFF
            header = struct.pack("!BBHII", 0x80, 111, seq & 0xFFFF, rtp, self.ssrc)
            try:
                self.sock.sendto(header + payload, self.dest)
                self.late.append((self.clock.ms(), (time.monotonic() - t0 - (k + 1) * FRAME / RATE) * 1000))
                packets, octets = packets + 1, octets + len(payload)
                if time.monotonic() >= next_report:
                    wall = time.time()
                    self.sock.sendto(sender_report(self.ssrc, wall, base + int((wall - capture0) * RATE), packets,
                                                   octets), self.dest)
                    next_report += 0.5
            except OSError:
                return
            seq, k = seq + 1, k + 1

    def close(self):
        self.stop.set()
        self.sock.close()


class VoicePuller:
    """ffmpeg reading an RTMP stream's audio as mono 48 kHz s16le; a thread finds the beeps' onsets."""

    def __init__(self, procs, name, url, clock):
        self.proc = procs.start(name, [
            "ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-fflags", "nobuffer", "-flags", "low_delay",
            "-analyzeduration", "3000000", "-rw_timeout", "30000000", "-i", url, "-map", "0:a",
            "-ac", "1", "-ar", str(RATE), "-f", "s16le", "-"], stdout=subprocess.PIPE)
        self.clock = clock
        self.onsets = []   # (arrival ms, index of the frequency)
        hann = [0.5 - 0.5 * math.cos(2 * math.pi * n / (WINDOW - 1)) for n in range(WINDOW)]
        gain = 2 / sum(hann) / 32768   # a full-scale sine reads 1.0
        self.tables = [([gain * h * math.cos(2 * math.pi * f * n / RATE) for n, h in enumerate(hann)],
                        [gain * h * math.sin(2 * math.pi * f * n / RATE) for n, h in enumerate(hann)]) for f in FREQS]
        threading.Thread(target=self._read, daemon=True).start()

    def level(self, window, i):
        cos, sin = self.tables[i]
        return math.hypot(sum(map(float.__mul__, cos, window)), sum(map(float.__mul__, sin, window)))

    def _read(self):
        fd = self.proc.stdout.fileno()
        pending = b""
        arrivals = []   # [bytes of `pending` from one read, when that read returned], oldest first
        quiet = [QUIET_WINDOWS] * len(FREQS)
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return
            if not data:
                return
            pending += data
            arrivals.append([len(data), self.clock.ms()])
            while len(pending) >= 2 * WINDOW:
                heard = arrivals[0][1]   # when the window's first sample reached us
                window = [float(s) for s in struct.unpack_from(f"<{WINDOW}h", pending)]
                pending = pending[2 * WINDOW:]
                used = 2 * WINDOW
                while used:
                    take = min(used, arrivals[0][0])
                    arrivals[0][0] -= take
                    used -= take
                    if not arrivals[0][0]:
                        arrivals.pop(0)
                for i in range(len(FREQS)):
                    if self.level(window, i) >= THRESHOLD:
                        if quiet[i] >= QUIET_WINDOWS:
                            self.onsets.append((heard, i))
                        quiet[i] = 0
                    else:
                        quiet[i] += 1


def ages(beeps, onsets, start_ms, stop_ms):
    """Each onset heard in [start_ms, stop_ms) matched to the latest beep of its frequency captured before it."""
    out = []
    for heard, i in onsets:
        if not start_ms <= heard < stop_ms:
            continue
        captured = [c for c, j in beeps if j == i and c <= heard]
        if captured:
            out.append(heard - captured[-1])
    return out
