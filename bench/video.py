"""Part 1: a 720p video room in Cohost vs the same mix done by one ffmpeg (filter_complex), same inputs
(N replayed VP8 640x360@30 + Opus participants), same output (1280x720@30 x264 veryfast zerolatency 2 Mb/s,
keyint 60, 1 thread; AAC 128k; FLV to nginx-rtmp), and the codec floor (x264 alone on the same grid canvas + N VP8
decodes, N Opus decodes and one AAC encode). Part 10 (`run_simulcast`): the same with simulcast senders, against ffmpeg on their full-size layer."""
import json
import os
import re
import socket
import time

import media
from lib import (Cohost, Nginx, Procs, cpu_window, free_port, grid_regions, log, machine_load_window,
                 metric_values, rss_mib)

X264_ARGS = ["-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-profile:v", "high",
             "-b:v", "2000k", "-maxrate", "2000k", "-bufsize", "2000k", "-g", "60", "-keyint_min", "60",
             "-sc_threshold", "0", "-threads", "1"]
BG = "0x202040"


def _replayer(procs, workdir, ctx, streams, name="replay", bind=None):
    cfg = os.path.join(workdir, f"{name}.json")
    spec = {"ivf": ctx["ivf"], "opus": ctx["opus"], "streams": streams}
    if bind:
        spec["bind"] = bind
    json.dump(spec, open(cfg, "w"))
    return procs.start(name, ["python3", os.path.join(ctx["bench_dir"], "rtp_replay.py"), cfg])


def measure(procs, pids, ctx, poll=None):
    """Warm up, then cores per pid over the steady window, plus how busy the whole machine was and how much of
    that the hypervisor stole (`machine_load_window`)."""
    time.sleep(ctx["warmup"])
    procs.check_alive()
    return machine_load_window(lambda: cpu_window(pids, ctx["window"], poll))


def cohost_room(ctx, n, extra_env=None, name="cohost", keep=None, receive=False, simulcast=False, labels=False):
    """Cohost with one 720p room of n replayed participants. Returns figures; `keep(cohost, procs)` may
    measure more while it runs (used by the allocation and soak steps). `receive`: the participants join sendrecv
    and get the return path (mix-minus and the room view) back on the replayer's port. `simulcast`: each sends its
    camera as three layers (320x180, 640x360, 1280x720; `media.SIMULCAST_LAYERS`), all of them all the time (a
    sender that obeyed Cohost's `layers` events would stop those no one takes). `labels`: every tile has a name label
    (Latin and CJK, 28 px, bottom left)."""
    workdir = os.path.join(ctx["workdir"], f"{name}-n{n}")
    os.makedirs(workdir, exist_ok=True)
    procs = Procs(workdir)
    try:
        nginx = Nginx(procs, workdir)
        cohost = Cohost(procs, env=extra_env)
        time.sleep(1.0)
        rss_idle = rss_mib(cohost.pid)
        regions = grid_regions(n)
        room = f"video{n}"
        cohost.create_room({
            "name": room, "maxParticipants": max(16, n),
            "canvas": {"width": 1280, "height": 720, "fps": 30, "background": "#202040"},
            "video": {"bitrate": 2000, "keyint": 2}, "audio": {"bitrate": 128, "channels": 2},
            "layout": {"mode": "custom", "regions": [
                {"userId": f"p{i}", "x": x, "y": y, "width": w, "height": h, "fit": "stretch",
                 **({"label": {"text": f"Guest {i} 嘉宾", "size": 28}} if labels else {})}
                for i, (x, y, w, h) in enumerate(regions)]},
            "outputs": [{"url": nginx.url(room)}]})
        if keep and keep.get("before_join"):
            keep["before_join"](cohost, procs)
        streams = []
        for i in range(n):
            # Each participant its own RIDs: they all send from the replayer's one address.
            rids = [f"{rid}{i}" for rid, _, _ in media.SIMULCAST_LAYERS] if simulcast else None
            cohost.join(room, f"p{i}", 1000 + i, 2000 + i, direction="sendrecv" if receive else "sendonly", rids=rids)
            dest = ["127.0.0.1", cohost.rtp_port]
            if simulcast:
                for k, (rid, _, _) in enumerate(media.SIMULCAST_LAYERS):
                    streams.append({"kind": "video", "ssrc": 20000 + 10 * i + k, "pt": 96, "dest": dest,
                                    "start": 60 * (i % 5), "ivf": ctx["simulcast"][rid], "rid": rids[k]})
            else:
                streams.append({"kind": "video", "ssrc": 2000 + i, "pt": 96, "dest": dest, "start": 60 * (i % 5)})
            streams.append({"kind": "audio", "ssrc": 1000 + i, "pt": 111, "dest": dest, "track": "tone",
                            "start": 37 * i})
        replay = _replayer(procs, workdir, ctx, streams,
                           bind=["127.0.0.1", free_port(socket.SOCK_DGRAM)] if receive else None)
        if keep and keep.get("steady"):
            return keep["steady"](cohost, procs)
        stages = []

        def sample_stages():
            # Each second: the decoders' and the canvas's CPU of the last whole second, from /metrics.
            m = cohost.metrics()
            stage = {labels.get("stage"): v for labels, v in metric_values(m, "cohost_room_canvas_cpu_ms")}
            stages.append({"decode": sum(v for _, v in metric_values(m, "cohost_stream_decode_cpu_ms")),
                           "composite": stage.get("composite", 0.0), "encode": stage.get("encode", 0.0)})

        cores, load = measure(procs, [cohost.pid, replay.pid, nginx.proc.pid], ctx, poll=sample_stages)
        metrics = cohost.metrics()
        mixed = {}
        if simulcast:
            for p in (cohost.room(room) or {}).get("participants", []):
                for st in p.get("streams", []):
                    if st.get("mixed"):
                        key = f"{st.get('width')}x{st.get('height')}"
                        mixed[key] = mixed.get(key, 0) + 1
        vfps = [v for _, v in metric_values(metrics, "cohost_output_video_fps")]
        afps = [v for _, v in metric_values(metrics, "cohost_output_audio_fps")]
        decoded = sum(v for _, v in metric_values(metrics, "cohost_stream_frames_decoded"))
        returned = {kind: sum(v for labels, v in metric_values(metrics, "cohost_return_packets")
                              if labels.get("kind") == kind) for kind in ("audio", "video")}
        stage_cores = {k: round(sum(s[k] for s in stages) / len(stages) / 1000, 3) for k in stages[0]} if stages else {}
        return {"cores": round(cores[cohost.pid], 3), "sender_cores": round(cores[replay.pid], 3),
                "stage_cores": stage_cores, **({"mixed_layers": mixed} if simulcast else {}),
                "nginx_cores": round(cores[nginx.proc.pid], 3), **load,
                "output_video_fps": vfps[0] if vfps else None, "output_audio_fps": afps[0] if afps else None,
                "frames_decoded": decoded, "rss_idle_mib": round(rss_idle, 1),
                "rss_room_mib": round(rss_mib(cohost.pid) - rss_idle, 1),
                "return_packets": returned}
    finally:
        procs.stop()


def _sdp(vport, aport):
    return ("v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=bench\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            f"m=video {vport} RTP/AVP 96\r\na=rtpmap:96 VP8/90000\r\n"
            f"m=audio {aport} RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\n")


def ffmpeg_mixer(ctx, n, name="ffmpeg", ivf=None):
    """One ffmpeg: N RTP inputs (SDP), scale + overlay onto 1280x720@30, amix, x264 + AAC, FLV to nginx."""
    workdir = os.path.join(ctx["workdir"], f"{name}-n{n}")
    os.makedirs(workdir, exist_ok=True)
    procs = Procs(workdir)
    try:
        nginx = Nginx(procs, workdir)
        import socket
        argv = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "warning", "-stats", "-stats_period", "1"]
        streams = []
        for i in range(n):
            vport = free_port(socket.SOCK_DGRAM, pair=True)
            aport = free_port(socket.SOCK_DGRAM, pair=True)
            while aport == vport:
                aport = free_port(socket.SOCK_DGRAM, pair=True)
            sdp = os.path.join(workdir, f"p{i}.sdp")
            open(sdp, "w").write(_sdp(vport, aport))
            # Inputs are opened and probed one after another: big socket buffers and a short probe keep the
            # first ones from overflowing (and losing keyframes) while the last ones are still being probed.
            argv += ["-threads", "1", "-protocol_whitelist", "file,udp,rtp", "-use_wallclock_as_timestamps", "1",
                     "-buffer_size", str(4 << 20), "-analyzeduration", "500000", "-probesize", "100000",
                     "-thread_queue_size", "1024", "-i", sdp]
            streams.append({"kind": "video", "ssrc": 2000 + i, "pt": 96, "dest": ["127.0.0.1", vport],
                            "rtcp": ["127.0.0.1", vport + 1], "start": 60 * (i % 5)})
            streams.append({"kind": "audio", "ssrc": 1000 + i, "pt": 111, "dest": ["127.0.0.1", aport],
                            "rtcp": ["127.0.0.1", aport + 1], "track": "tone", "start": 37 * i})
        parts = _grid_graph(n, [f"[{i}:v]" for i in range(n)], ":eof_action=repeat")
        parts.append(f"[b{n - 1}]fps=30,format=yuv420p[vout]")
        parts.append("".join(f"[{i}:a]" for i in range(n)) + f"amix=inputs={n}:normalize=0:dropout_transition=0[aout]")
        argv += ["-filter_complex", ";".join(parts), "-map", "[vout]", "-map", "[aout]"] + X264_ARGS + \
                ["-c:a", "aac", "-b:a", "128k", "-ar", "48000", "-ac", "2", "-f", "flv", nginx.url(f"ffmpeg{n}")]
        mixer = procs.start("ffmpeg-mixer", argv)
        time.sleep(0.5)
        replay = _replayer(procs, workdir, {**ctx, "ivf": ivf or ctx["ivf"]}, streams)
        cores, load = measure(procs, [mixer.pid, replay.pid], ctx)
        stats = open(os.path.join(workdir, "ffmpeg-mixer.log"), "rb").read().decode(errors="replace")
        speeds = re.findall(r"speed=\s*([\d.]+)x", stats)
        frames = [int(x) for x in re.findall(r"frame=\s*(\d+)", stats)]
        # Stats come once a second: the frame count's growth over the last 5 is the steady output rate.
        fps = [(frames[-1] - frames[-6]) / 5] if len(frames) >= 6 else []
        return {"cores": round(cores[mixer.pid], 3), "sender_cores": round(cores[replay.pid], 3),
                **load, "speed": float(speeds[-1]) if speeds else None,
                "output_fps": fps[-1] if fps else None,
                "log_lines_lost_packets": len(re.findall(r"missed \d+ packets", stats))}
    finally:
        procs.stop()


def _one_ffmpeg(ctx, name, argv):
    workdir = os.path.join(ctx["workdir"], name)
    os.makedirs(workdir, exist_ok=True)
    procs = Procs(workdir)
    try:
        p = procs.start(name, argv)
        cores, load = measure(procs, [p.pid], ctx)
        return cores[p.pid], load
    finally:
        procs.stop()


def _grid_source(n):
    """A lavfi graph drawing what the mixers' canvas shows: testsrc2 640x360 in each of the N grid tiles over the
    background, 1280x720@30: x264's cost depends on the picture, and N tiles of a test pattern cost it more than one
    pattern full size."""
    tiles = [f"[t{i}]" for i in range(n)]
    parts = [f"testsrc2=s=640x360:r=30,format=yuv420p,split={n}" + "".join(tiles)] + _grid_graph(n, tiles)
    parts.append(f"[b{n - 1}]format=yuv420p[out0]")
    return ";".join(parts)


def _grid_graph(n, inputs, overlay_options=""):
    """Filter graph lines scaling `inputs` (labels) into the N grid tiles over the background, onto 1280x720; the
    canvas comes out as [b{n-1}]."""
    regions = grid_regions(n)
    x, y, w, h = regions[0]
    parts = [f"{inputs[0]}scale={w}:{h}:flags=bilinear,pad=1280:720:{x}:{y}:color={BG}[b0]"]
    for i in range(1, n):
        x, y, w, h = regions[i]
        parts.append(f"{inputs[i]}scale={w}:{h}:flags=bilinear[s{i}]")
        parts.append(f"[b{i - 1}][s{i}]overlay={x}:{y}{overlay_options}[b{i}]")
    return parts


def x264_floor(ctx, n, k=0):
    """x264 alone on the canvas of an N-participant grid: (canvas + x264) minus (canvas alone), both paced with -re."""
    src = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-re", "-f", "lavfi", "-i", _grid_source(n)]
    with_enc, load = _one_ffmpeg(ctx, f"floor-x264-n{n}-{k}", src + X264_ARGS + ["-f", "null", "-"])
    gen, _ = _one_ffmpeg(ctx, f"floor-grid-n{n}-{k}", src + ["-f", "null", "-"])
    return {"cores": round(max(0.0, with_enc - gen), 3), "with_source_cores": round(with_enc, 3),
            "source_cores": round(gen, 3), **load}


def audio_floor(ctx, n):
    """The audio codecs' work both mixers do: N Opus decodes (libopus, stereo, paced) minus the same inputs copied,
    plus one AAC encode (128 kb/s stereo, libavcodec's encoder, as both use) minus its source alone."""
    tone = os.path.join(os.path.dirname(ctx["ivf"]), "tone.ogg")

    def inputs(decode):
        argv = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error"]
        for _ in range(n):
            argv += ["-re", "-stream_loop", "-1"] + (["-c:a", "libopus"] if decode else []) + ["-i", tone]
        for i in range(n):
            argv += ["-map", f"{i}:a"] + ([] if decode else ["-c:a", "copy"]) + ["-f", "null", "-"]
        return argv

    decoding, load = _one_ffmpeg(ctx, f"floor-opus-n{n}", inputs(True))
    copying, _ = _one_ffmpeg(ctx, f"floor-opus-copy-n{n}", inputs(False))
    src = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error", "-re", "-f", "lavfi",
           "-i", "sine=frequency=440:sample_rate=48000", "-ac", "2"]
    aac, _ = _one_ffmpeg(ctx, f"floor-aac-n{n}", src + ["-c:a", "aac", "-b:a", "128k", "-f", "null", "-"])
    pcm, _ = _one_ffmpeg(ctx, f"floor-pcm-n{n}", src + ["-f", "null", "-"])
    return {"cores": round(max(0.0, decoding - copying) + max(0.0, aac - pcm), 3),
            "opus_decode_cores": round(max(0.0, decoding - copying), 3), "aac_encode_cores": round(max(0.0, aac - pcm), 3),
            **load}


def vp8_demux(ctx, n):
    """Cores ffmpeg spends reading the N inputs without decoding them (subtracted from both decoders' runs)."""
    return _one_ffmpeg(ctx, f"floor-vp8-demux-n{n}", _vp8_inputs(ctx, n, None))[0]


def vp8_floor(ctx, n, demux, decoder="vp8"):
    """N single-threaded VP8 decodes of the senders' own bitstream, paced in real time, minus the same N inputs read
    and passed on undecoded (`-c copy`): ffmpeg's reading, pacing and packet handling are not decoding (at N=4 they
    were 0.011 of 0.081 cores). `vp8` is libavcodec's native decoder, which Cohost uses (and the ffmpeg mixer by
    default); `libvpx` is measured for reference. `demux` is `vp8_demux(ctx, n)`."""
    decoding, load = _one_ffmpeg(ctx, f"floor-{decoder}-n{n}", _vp8_inputs(ctx, n, decoder))
    return {"cores": round(max(0.0, decoding - demux), 3), "with_demux_cores": round(decoding, 3),
            "demux_cores": round(demux, 3), **load}


def _vp8_inputs(ctx, n, decoder):
    """ffmpeg reading the sender IVF n times in real time, each to a null output: decoded by `decoder`, or copied."""
    argv = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error"]
    for _ in range(n):
        argv += ["-threads", "1", "-re", "-stream_loop", "-1"] + (["-c:v", decoder] if decoder else []) + ["-i", ctx["ivf"]]
    for i in range(n):
        argv += ["-map", f"{i}:v"] + ([] if decoder else ["-c:v", "copy"]) + ["-f", "null", "-"]
    return argv


def _cheapest(samples):
    """The sample with the fewest cores. CPU time on a shared host only ever reads high (steal bursts slow the same
    work down), so the least of several windows is the one nearest the work's own cost; both mixers and the floor
    are taken the same way."""
    return min(samples, key=lambda s: s["cores"])


def run(ctx, sizes):
    """Each N: `repeat` windows of Cohost and of the ffmpeg mixer, interleaved (Cohost, ffmpeg, Cohost, ...) so a
    burst of steal hits both alike, and the cheapest of each; the codec floor of the same work: x264 on that N's
    canvas (before and after the mixers' windows, the cheaper), N VP8 decodes, N Opus decodes and the AAC encode."""
    repeat = max(1, int(ctx.get("repeat", 1)))
    out = {}
    for n in sizes:
        floors = [x264_floor(ctx, n)]
        log(f"  N={n} x264 floor on the grid canvas: {floors[-1]}")
        pairs = []
        for k in range(repeat):
            c = cohost_room(ctx, n, name=f"cohost-{k}")
            log(f"  N={n} cohost ({k + 1}/{repeat}): {c}")
            f = ffmpeg_mixer(ctx, n, name=f"ffmpeg-{k}")
            log(f"  N={n} ffmpeg ({k + 1}/{repeat}): {f}")
            pairs.append((c, f))
        demux = vp8_demux(ctx, n)
        d = vp8_floor(ctx, n, demux)
        log(f"  N={n} vp8 decode floor (libavcodec native, as Cohost): {d}")
        libvpx = vp8_floor(ctx, n, demux, decoder="libvpx")
        log(f"  N={n} vp8 decode (libvpx, for reference): {libvpx}")
        floors.append(x264_floor(ctx, n, 1))
        log(f"  N={n} x264 floor on the grid canvas: {floors[-1]}")
        audio = audio_floor(ctx, n)
        log(f"  N={n} audio floor (Opus decodes + AAC encode): {audio}")
        c, f = _cheapest([p[0] for p in pairs]), _cheapest([p[1] for p in pairs])
        x264 = _cheapest(floors)
        # The cheaper of the two decoders: the floor is the least codec work that can do the job.
        floor = x264["cores"] + min(d["cores"], libvpx["cores"]) + audio["cores"]
        out[f"n{n}"] = {"cohost": c, "ffmpeg": f, "vp8_decode_floor": d, "vp8_decode_libvpx_cores": libvpx["cores"],
                        "audio_floor": audio,
                        "x264_floor": {**x264, "samples": [{"cores": s["cores"], "steal_cores": s["steal_cores"]}
                                                           for s in floors]},
                        "samples": [{"cohost_cores": p[0]["cores"], "cohost_steal_cores": p[0]["steal_cores"],
                                     "ffmpeg_cores": p[1]["cores"], "ffmpeg_steal_cores": p[1]["steal_cores"]}
                                    for p in pairs],
                        "cohost_over_ffmpeg": round(c["cores"] / f["cores"], 3) if f["cores"] else None,
                        "codec_floor_cores": round(floor, 3),
                        "cohost_over_floor": round(c["cores"] / floor, 3) if floor else None}
    return out


def run_simulcast(ctx, sizes):
    """Simulcast senders: each N, `repeat` interleaved windows of Cohost (every participant sending its three
    layers; the mixer decodes the one covering its tile) and of the ffmpeg mixer on the same pictures at full size
    (1280x720: what it would have to decode), the cheapest of each, with Cohost's decode, composite and encode CPU
    from its own metrics."""
    repeat = max(1, int(ctx.get("repeat", 1)))
    out = {}
    for n in sizes:
        pairs = []
        for k in range(repeat):
            c = cohost_room(ctx, n, name=f"cohost-simulcast-{k}", simulcast=True)
            log(f"  N={n} cohost, simulcast senders ({k + 1}/{repeat}): {c}")
            f = ffmpeg_mixer(ctx, n, name=f"ffmpeg-720p-{k}", ivf=ctx["simulcast"]["f"])
            log(f"  N={n} ffmpeg on the 1280x720 layer ({k + 1}/{repeat}): {f}")
            pairs.append((c, f))
        c, f = _cheapest([p[0] for p in pairs]), _cheapest([p[1] for p in pairs])
        out[f"n{n}"] = {"cohost": c, "ffmpeg": f,
                        "samples": [{"cohost_cores": p[0]["cores"], "ffmpeg_cores": p[1]["cores"]} for p in pairs],
                        "cohost_over_ffmpeg": round(c["cores"] / f["cores"], 3) if f["cores"] else None}
    return out


def run_labels(ctx, n=4):
    """The cost of name labels: one N=4 room with and without a label on every tile, interleaved (without, with,
    without, with) so a burst of steal hits both alike; the cheapest window of each, with the canvas's composite CPU
    from Cohost's own stage metric. Labels are rendered once per text change, so the composite with them should be
    the same within noise."""
    repeat = max(2, int(ctx.get("repeat", 1)))
    runs = {"without": [], "with": []}
    for k in range(repeat):
        for key in ("without", "with"):
            r = cohost_room(ctx, n, name=f"labels-{key}-{k}", labels=key == "with")
            log(f"  N={n} labels {key} ({k + 1}/{repeat}): {r}")
            runs[key].append(r)
    without, with_ = _cheapest(runs["without"]), _cheapest(runs["with"])
    composite = {key: min(r["stage_cores"].get("composite", 0.0) for r in rs) for key, rs in runs.items()}
    return {"n": n, "cores_without": without["cores"], "cores_with": with_["cores"],
            "composite_cores_without": composite["without"], "composite_cores_with": composite["with"],
            "cores_ratio": round(with_["cores"] / without["cores"], 3) if without["cores"] else None,
            "composite_added_cores": round(composite["with"] - composite["without"], 4),
            "samples": {key: [{"cores": r["cores"], "steal_cores": r["steal_cores"],
                               "composite_cores": r["stage_cores"].get("composite")} for r in rs]
                        for key, rs in runs.items()}}
