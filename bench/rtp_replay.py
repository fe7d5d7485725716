"""One sender process for many participants: replays pre-encoded VP8 and Opus as RTP, each stream with its
own SSRC, sequence numbers and timestamps, paced in real time (video every 1/30 s, audio every 20 ms), with an
RTCP sender report per stream every second. Runs until SIGTERM.

Sender reports map RTP time to the wall clock at capture, as a WebRTC sender's do. A video frame is sent at its
capture instant (it was encoded ahead of time); an audio frame is sent when its 20 ms have been captured, as a
microphone's block is, so its report puts its capture 20 ms before its sending (the latency benchmark's live voice
is sent the same way). Reports that put audio capture at the sending made every replayed participant's pictures
look only ≈12 ms ahead of their sound (a live sender's are ≈38 ms), and Cohost's canvases, stamped ahead of their
sound by the least any participant's pictures are (VideoLead), then held the live participant's pictures back.

    python3 bench/rtp_replay.py CONFIG.json

CONFIG: {"ivf": path, "opus": path, "streams": [{"kind": "video"|"audio", "ssrc": int, "pt": int,
         "dest": [host, port], "rtcp": [host, port] (optional, default dest), "track": "tone"|"voice"|"voice_dtx"
         (audio), "start": frame offset, "ivf": path (video, optional: this stream's own clip), "rid": a simulcast
         layer's RID (video, optional: named in its first packets' header extension, id "rid_ext", as libwebrtc
         does)}], "bind": [host, port] (optional: send from this address, and count what comes back to it, for a
         server that answers each sender with media as Janus's AudioBridge does)}
Opus packets of at most 2 bytes are DTX frames: they are not sent (timestamps still advance, sequence
numbers do not), as WebRTC senders do.
"""
import json
import os
import signal
import socket
import struct
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import media  # noqa: E402

AUDIO_BLOCK_S = 0.02  # an audio frame leaves when its block has been captured


class Stream:
    def __init__(self, spec):
        self.kind = spec["kind"]
        self.ssrc = spec["ssrc"] & 0xFFFFFFFF
        self.pt = spec["pt"]
        self.dest = tuple(spec["dest"])
        self.rtcp = tuple(spec.get("rtcp", spec["dest"]))
        self.track = spec.get("track", "tone")
        self.index = spec.get("start", 0)
        self.seq = (self.ssrc * 7919) & 0xFFFF
        self.ts0 = (self.ssrc * 104729) & 0xFFFFFFFF
        self.ticks = 0
        self.packets = 0
        self.octets = 0
        self.ivf = spec.get("ivf")
        self.rid = spec.get("rid")
        self.rid_ext = spec.get("rid_ext", 10)


def rid_extension(rid, ext_id):
    """A one-byte RTP header extension block (RFC 8285) carrying `rid`."""
    element = bytes([ext_id << 4 | (len(rid) - 1)]) + rid.encode()
    element += b"\0" * (-len(element) % 4)
    return struct.pack("!HH", 0xBEDE, len(element) // 4) + element


def main():
    cfg = json.load(open(sys.argv[1]))
    clips = {}

    def clip(path):
        if path not in clips:
            clips[path] = [(media.vp8_packets(f), key) for f, key in media.read_ivf(path)]
        return clips[path]

    frames = clip(cfg["ivf"]) if cfg.get("ivf") else []
    opus = media.read_opus(cfg["opus"]) if cfg.get("opus") else {}
    streams = [Stream(s) for s in cfg["streams"]]
    video = [s for s in streams if s.kind == "video"]
    audio = [s for s in streams if s.kind == "audio"]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    sock.setblocking(True)
    receiving = "bind" in cfg
    if receiving:
        sock.bind(tuple(cfg["bind"]))
    received = 0
    sendto = sock.sendto
    pack = struct.pack
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))

    t0 = time.monotonic()
    wall0 = time.time()
    next_v, next_a, next_sr = t0, t0, t0 + 0.5
    vtick = atick = 0
    late_max = 0.0
    while not stop:
        now = time.monotonic()
        if now >= next_a:
            late_max = max(late_max, now - next_a)
            for s in audio:
                packets = opus[s.track]
                payload = packets[s.index % len(packets)]
                s.index += 1
                ts = (s.ts0 + s.ticks * 960) & 0xFFFFFFFF
                s.ticks += 1
                if len(payload) <= 2:
                    continue
                sendto(pack("!BBHII", 0x80, s.pt, s.seq, ts, s.ssrc) + payload, s.dest)
                s.seq = (s.seq + 1) & 0xFFFF
                s.packets += 1
                s.octets += len(payload)
            atick += 1
            next_a = t0 + atick * 0.02
            while receiving:
                try:
                    sock.recv(2048, socket.MSG_DONTWAIT)
                    received += 1
                except BlockingIOError:
                    break
        if now >= next_v:
            late_max = max(late_max, now - next_v)
            for s in video:
                own = clip(s.ivf) if s.ivf else frames
                chunks, _ = own[s.index % len(own)]
                s.index += 1
                ts = (s.ts0 + s.ticks * 3000) & 0xFFFFFFFF
                s.ticks += 1
                last = len(chunks) - 1
                # A layer's RID rides on its first frames only.
                ext = rid_extension(s.rid, s.rid_ext) if s.rid and s.ticks <= 3 else b""
                for i, chunk in enumerate(chunks):
                    first = 0x90 if ext else 0x80
                    sendto(pack("!BBHII", first, s.pt | (0x80 if i == last else 0), s.seq, ts, s.ssrc) + ext + chunk,
                           s.dest)
                    s.seq = (s.seq + 1) & 0xFFFF
                    s.packets += 1
                    s.octets += len(chunk)
            vtick += 1
            next_v = t0 + vtick / 30
        if now >= next_sr:
            wall = time.time()
            for s in streams:
                rate = 90000 if s.kind == "video" else 48000
                captured = wall - wall0 + (AUDIO_BLOCK_S if s.kind == "audio" else 0)  # media time of `wall`
                sendto(media.sender_report(s.ssrc, wall, s.ts0 + int(captured * rate), s.packets, s.octets), s.rtcp)
            next_sr += 1.0
        delay = min(next_a, next_v, next_sr) - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    print(json.dumps({"late_max_ms": round(late_max * 1000, 1), "packets": sum(s.packets for s in streams),
                      "received": received, "seconds": round(time.monotonic() - t0, 1)}), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
