"""Pre-encoded sender media, made once per run so senders cost (almost) nothing while Cohost is measured.

- video: 10 s of testsrc2 640x360@30 VP8 (libvpx realtime, 800 kb/s, keyframe every 60 frames) in an IVF file,
  made by ffmpeg; the same file feeds the VP8 decode floor. For simulcast, the same picture at 320x180, 640x360
  and 1280x720 (150, 500 and 1700 kb/s: libwebrtc's layers of a 720p camera).
- opus: 20 ms Opus packets made with libopus through ctypes (ffmpeg 5.1's libopus wrapper has no DTX option):
  `tone` (stereo 64 kb/s, a steady tone: the video participants' voices), `voice` and `voice_dtx`
  (mono 24 kb/s VOIP, speech-like talk spurts with pauses; the second with DTX on: its 1-2 byte
  packets during pauses are not sent, as WebRTC senders do).
"""
import ctypes
import json
import math
import os
import random
import struct
import subprocess

VIDEO_SECONDS = 10


NTP_EPOCH = 2208988800   # 1900-01-01 to 1970-01-01, in seconds


def sender_report(ssrc, wall, rtp, packets, octets):
    """An RTCP sender report (RFC 3550 6.4.1) without report blocks: RTP time `rtp` is wall-clock time `wall`."""
    ntp = wall + NTP_EPOCH
    return struct.pack("!BBHIIIIII", 0x80, 200, 6, ssrc, int(ntp), int((ntp % 1) * (1 << 32)), rtp & 0xFFFFFFFF,
                       packets & 0xFFFFFFFF, octets & 0xFFFFFFFF)


def make_video(path, size="640x360", kbps=800):
    if os.path.exists(path):
        return
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y",
                    "-f", "lavfi", "-i", f"testsrc2=s={size}:r=30,format=yuv420p",
                    "-t", str(VIDEO_SECONDS), "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8",
                    "-b:v", f"{kbps}k", "-g", "60", "-keyint_min", "60", "-auto-alt-ref", "0", "-lag-in-frames", "0",
                    "-threads", "1", "-f", "ivf", path + ".tmp"], check=True)
    os.rename(path + ".tmp", path)


#: A simulcast sender's three layers, as libwebrtc sends a 1280x720 camera: (rid, size, kb/s).
SIMULCAST_LAYERS = [("q", "320x180", 150), ("h", "640x360", 500), ("f", "1280x720", 1700)]


def prepare_simulcast(cache_dir):
    """{rid: IVF path} of the same testsrc2 picture at the three layers' sizes (keyframes every 60 frames in all)."""
    os.makedirs(cache_dir, exist_ok=True)
    out = {}
    for rid, size, kbps in SIMULCAST_LAYERS:
        path = os.path.join(cache_dir, f"sender-{size}.ivf")
        make_video(path, size, kbps)
        out[rid] = path
    return out


def read_ivf(path):
    """[(frame bytes, is_keyframe)] of an IVF file."""
    data = open(path, "rb").read()
    header_len = struct.unpack_from("<H", data, 6)[0]
    pos, frames = header_len, []
    while pos + 12 <= len(data):
        size = struct.unpack_from("<I", data, pos)[0]
        frame = data[pos + 12:pos + 12 + size]
        frames.append((frame, len(frame) > 0 and frame[0] & 1 == 0))
        pos += 12 + size
    return frames


def vp8_packets(frame, mtu_payload=1188):
    """RFC 7741 payloads of one frame: a 1-byte descriptor (S bit on the first) then the fragment."""
    out = []
    for i in range(0, len(frame), mtu_payload - 1):
        out.append(bytes([0x10 if i == 0 else 0x00]) + frame[i:i + mtu_payload - 1])
    return out


class _Opus:
    def __init__(self):
        self.lib = ctypes.CDLL("libopus.so.0")
        self.lib.opus_encoder_create.restype = ctypes.c_void_p
        self.lib.opus_encoder_create.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
        self.lib.opus_encode.restype = ctypes.c_int
        self.lib.opus_encode.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
        self.lib.opus_encoder_destroy.argtypes = [ctypes.c_void_p]

    def encode(self, pcm, channels, application, bitrate, dtx):
        """pcm: list of int16 samples, interleaved; returns one bytes object per 20 ms frame."""
        err = ctypes.c_int()
        enc = self.lib.opus_encoder_create(48000, channels, application, ctypes.byref(err))
        if not enc or err.value != 0:
            raise RuntimeError(f"opus_encoder_create failed: {err.value}")
        ctl = self.lib.opus_encoder_ctl
        ctl(ctypes.c_void_p(enc), ctypes.c_int(4002), ctypes.c_int(bitrate))      # OPUS_SET_BITRATE
        ctl(ctypes.c_void_p(enc), ctypes.c_int(4016), ctypes.c_int(1 if dtx else 0))  # OPUS_SET_DTX
        step = 960 * channels
        out = []
        buf = ctypes.create_string_buffer(1500)
        for i in range(0, len(pcm) - step + 1, step):
            frame = (ctypes.c_int16 * step)(*pcm[i:i + step])
            n = self.lib.opus_encode(ctypes.c_void_p(enc), frame, 960, buf, 1500)
            if n < 0:
                raise RuntimeError(f"opus_encode failed: {n}")
            out.append(buf.raw[:n])
        self.lib.opus_encoder_destroy(ctypes.c_void_p(enc))
        return out


def _tone(seconds, freq=440.0):
    pcm = []
    for i in range(int(seconds * 48000)):
        v = int(6000 * math.sin(2 * math.pi * freq * i / 48000))
        pcm += (v, v)
    return pcm


def _speech(seconds, seed=7):
    """Talk spurts (2 s) and pauses (1.5 s) of a voiced, syllable-modulated harmonic signal."""
    rnd = random.Random(seed)
    pcm = []
    phase = 0.0
    for i in range(int(seconds * 48000)):
        t = i / 48000
        if (t % 3.5) >= 2.0:
            pcm.append(0)
            continue
        f0 = 140 + 40 * math.sin(2 * math.pi * 0.7 * t)
        phase += 2 * math.pi * f0 / 48000
        env = 0.5 + 0.5 * math.sin(2 * math.pi * 4 * t)
        v = sum(math.sin(k * phase) / k for k in (1, 2, 3, 4, 5)) + 0.05 * (rnd.random() - 0.5)
        pcm.append(int(5000 * env * v))
    return pcm


def make_opus(path):
    if os.path.exists(path):
        return
    opus = _Opus()
    tracks = {
        "tone": opus.encode(_tone(VIDEO_SECONDS), 2, 2049, 64000, False),   # OPUS_APPLICATION_AUDIO
        "voice": opus.encode(_speech(14), 1, 2048, 24000, False),           # OPUS_APPLICATION_VOIP
        "voice_dtx": opus.encode(_speech(14), 1, 2048, 24000, True),
    }
    with open(path + ".tmp", "w") as f:
        json.dump({k: [p.hex() for p in v] for k, v in tracks.items()}, f)
    os.rename(path + ".tmp", path)


def read_opus(path):
    return {k: [bytes.fromhex(p) for p in v] for k, v in json.load(open(path)).items()}


def make_opus_file(path):
    """An Ogg Opus file of the participants' tone (stereo 64 kb/s, 20 ms frames) for the Opus decode floor."""
    if os.path.exists(path):
        return
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi",
                    "-i", "sine=frequency=440:sample_rate=48000", "-t", str(VIDEO_SECONDS), "-ac", "2",
                    "-c:a", "libopus", "-b:a", "64k", "-frame_duration", "20", "-f", "ogg", path + ".tmp"], check=True)
    os.rename(path + ".tmp", path)


def prepare(cache_dir):
    os.makedirs(cache_dir, exist_ok=True)
    video, opus = os.path.join(cache_dir, "sender.ivf"), os.path.join(cache_dir, "opus.json")
    make_video(video)
    make_opus(opus)
    make_opus_file(os.path.join(cache_dir, "tone.ogg"))
    return video, opus
