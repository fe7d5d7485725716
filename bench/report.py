"""Derived figures (memory, targets) and the printed table of a bench run."""


def _get(d, *path):
    for key in path:
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return d


def memory(r):
    per_720p = {}
    for key, value in (r.get("video") or {}).items():
        if key.startswith("n") and isinstance(value, dict):
            per_720p[key] = _get(value, "cohost", "rss_room_mib")
    return {"rss_per_720p_room_mib": per_720p or None,
            "rss_per_voice_room_mib": _get(r, "voice", "rss_per_voice_room_mib")}


def _check(value, limit, higher_is_better=False):
    if value is None:
        return {"target": limit, "value": None, "met": None}
    return {"target": limit, "value": value, "met": value >= limit if higher_is_better else value <= limit}


def targets(r):
    out = {}
    for n in (4, 9):
        # Single-layer senders: the codecs' work is the same in both mixers, Cohost's own at most 20 % above it.
        out[f"cohost_over_ffmpeg_n{n}"] = _check(_get(r, "video", f"n{n}", "cohost_over_ffmpeg"), 0.8)
        out[f"cohost_over_floor_n{n}"] = _check(_get(r, "video", f"n{n}", "cohost_over_floor"), 1.2)
    # Simulcast senders: the mixer decodes the layer its tile needs, ffmpeg the full size.
    out["simulcast_cohost_over_ffmpeg_n4"] = _check(_get(r, "simulcast", "n4", "cohost_over_ffmpeg"), 0.7)
    out["simulcast_cohost_over_ffmpeg_n9"] = _check(_get(r, "simulcast", "n9", "cohost_over_ffmpeg"), 0.6)
    out["added_latency_p50_ms"] = _check(_get(r, "latency", "added_p50_ms"), 50)
    out["added_latency_p95_ms"] = _check(_get(r, "latency", "added_p95_ms"), 80)
    out["join_to_first_frame_ms"] = _check(_get(r, "latency", "join_to_first_frame_ms"), 1500)
    out["voice_rooms_held"] = _check(_get(r, "voice", "max_rooms_held"), 50, higher_is_better=True)
    # Each speaker also receives its mix-minus (Opus, one shared encode for whoever is not talking).
    out["cpu_per_speaker_with_mix_minus_pct"] = _check(_get(r, "voice", "cores_per_speaker_pct"), 0.8)
    out["return_audio_delay_p50_ms"] = _check(_get(r, "return", "latency", "audio_delay_p50_ms"), 50)
    out["return_audio_delay_p95_ms"] = _check(_get(r, "return", "latency", "audio_delay_p95_ms"), 80)
    out["room_view_age_p50_ms"] = _check(_get(r, "return", "latency", "view_age_p50_ms"), 50)
    out["room_view_age_p95_ms"] = _check(_get(r, "return", "latency", "view_age_p95_ms"), 80)
    # "An idle room costs no measurable CPU": read as under 0.01 % of a core per room (100 rooms, 0.01 cores).
    out["idle_room_cpu_pct"] = _check(_get(r, "voice", "idle", "cores_per_room_pct"), 0.01)
    out["forwarding_added_cores"] = _check(_get(r, "forwarding", "added_cores"), 0.03)
    # The voice in the mix-minus against the same person's forwarded picture: at most 100 ms behind, 40 ms ahead.
    behind = _get(r, "return", "forwarded_sync", "audio_behind_video_p50_ms")
    out["forwarded_audio_behind_video_ms"] = _check(behind, 100)
    out["forwarded_video_behind_audio_ms"] = _check(None if behind is None else -behind, 40)
    # An output that muxes the programme's own encode costs little next to its room.
    out["srt_output_thread_cores"] = _check(_get(r, "outputs", "srt_thread_cores"), 0.03)
    out["mp4_output_thread_cores"] = _check(_get(r, "outputs", "mp4_thread_cores"), 0.03)
    out["hls_output_thread_cores"] = _check(_get(r, "outputs", "hls_thread_cores"), 0.03)
    out["whep_added_cores_per_viewer"] = _check(_get(r, "playback", "whep_added_cores_per_viewer"), 0.03)
    # Labels are rendered once per text change: a label on each of 4 tiles costs the composite nothing measurable.
    out["labels_composite_added_cores_n4"] = _check(_get(r, "labels", "composite_added_cores"), 0.005)
    out["whep_delay_p50_ms"] = _check(_get(r, "playback", "whep_delay", "p50_ms"), 400)
    out["llhls_delay_p50_ms"] = _check(_get(r, "playback", "llhls_delay", "p50_ms"), 2500)
    return out


def _f(v, digits=2):
    if v is None:
        return "-"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def _load(x):
    """"busy (stolen)" of one measurement window; older results may have no steal figure."""
    return f"{_f(x.get('machine_busy_cores'))} ({_f(x.get('steal_cores'), 3)})"


def _sizes(part):
    """The "n<N>" keys of a part's results, by N."""
    return sorted((k for k in part if k.startswith("n")), key=lambda k: int(k[1:]))


def _stages(c):
    s = c.get("stage_cores") or {}
    return "/".join(_f(s.get(k), 3) for k in ("decode", "composite", "encode"))


def table(r):
    m = r["machine"]
    lines = [f"machine: {m['nproc']} x {m['cpu_model']}; load avg {m['load_avg_at_start']} -> {m.get('load_avg_at_end')}"
             f"; window {r['config']['window_s']} s after {r['config']['warmup_s']} s warm-up"
             + ("  [BENCH_QUICK: smoke run]" if r["config"]["quick"] else "")]
    v = r.get("video")
    if v:
        lines += ["", "1. video room, 1280x720@30 x264 veryfast 2 Mb/s (cores = CPU seconds per second)",
                  "   N | cohost (decode/composite/encode) | ffmpeg | ratio | x264 | VP8 dec | audio | floor | cohost/floor | out fps cohost/ffmpeg | box busy (stolen) cohost/ffmpeg",
                  "   --|----------------------------------|--------|-------|------|---------|-------|-------|--------------|----------------------|-------------------------------"]
        for key in _sizes(v):
            x = v[key]
            lines.append(f"   {key[1:]:>1} | {_f(x['cohost']['cores'], 3):>6} ({_stages(x['cohost'])}) | "
                         f"{_f(x['ffmpeg']['cores'], 3):>6} | "
                         f"{_f(x['cohost_over_ffmpeg']):>5} | {_f(_get(x, 'x264_floor', 'cores'), 3)} | "
                         f"{_f(x['vp8_decode_floor']['cores'], 3):>7} | {_f(_get(x, 'audio_floor', 'cores'), 3)} | "
                         f"{_f(x['codec_floor_cores'], 3):>5} | {_f(x['cohost_over_floor']):>12} | "
                         f"{_f(x['cohost']['output_video_fps'], 1):>10}/{_f(x['ffmpeg']['output_fps'], 1):<10} | "
                         f"{_load(x['cohost'])} / {_load(x['ffmpeg'])}")
        for key in _sizes(v):
            samples = v[key].get("samples") or []
            if len(samples) > 1:
                lines.append(f"   N={key[1:]} windows, cohost / ffmpeg cores (stolen): " + ", ".join(
                    f"{_f(s['cohost_cores'], 3)} ({_f(s['cohost_steal_cores'], 3)}) / "
                    f"{_f(s['ffmpeg_cores'], 3)} ({_f(s['ffmpeg_steal_cores'], 3)})" for s in samples))
        for key in _sizes(v):
            floors = _get(v[key], "x264_floor", "samples") or []
            if len(floors) > 1:
                lines.append(f"   N={key[1:]} x264 floor windows (stolen): " + ", ".join(
                    f"{_f(s['cores'], 3)} ({_f(s['steal_cores'], 3)})" for s in floors))
        lines.append("   (each figure above is the cheapest of its windows, taken in turns; stolen: cores the hypervisor "
                     "ran something else on while this VM wanted them; above ~0.05 the window's CPU figures read high)")
    sim = r.get("simulcast")
    if sim:
        lines += ["", "10. simulcast senders (320x180, 640x360, 1280x720 each), same room; ffmpeg mixes the 1280x720 layer",
                  "   N | cohost (decode/composite/encode) | layers mixed | ffmpeg | ratio",
                  "   --|----------------------------------|--------------|--------|------"]
        for key in _sizes(sim):
            x = sim[key]
            lines.append(f"   {key[1:]:>1} | {_f(x['cohost']['cores'], 3):>6} ({_stages(x['cohost'])}) | "
                         f"{x['cohost'].get('mixed_layers')} | {_f(x['ffmpeg']['cores'], 3):>6} | "
                         f"{_f(x['cohost_over_ffmpeg'])}")
    rel = r.get("relay")
    if rel:
        lines += ["", f"11. RTSP->RTMP relay, one 640x360 camera (source latencyMs {rel.get('latency_ms')}), "
                  f"{rel.get('bitrate_kbps')} kbit/s; age of each pulled frame, minus the direct path's",
                  "   relay     | added p50/p95 ms | cores",
                  "   ----------|------------------|------"]
        for name in ("cohost", "copy", "transcode"):
            x = rel.get(name) or {}
            lines.append(f"   {name:<9} | {_f(x.get('added_p50_ms'))}/{_f(x.get('added_p95_ms'))} | {_f(x.get('cores'), 3)}")
        lines.append(f"   direct path p50/p95 {_f(_get(rel, 'direct', 'p50_ms'))}/{_f(_get(rel, 'direct', 'p95_ms'))} ms; "
                     f"cohost/copy CPU {_f(rel.get('cohost_over_copy_cpu'), 1)}, "
                     f"cohost/transcode CPU {_f(rel.get('cohost_over_transcode_cpu'))}")
    out = r.get("outputs")
    if out:
        lines += ["", "12. outputs on top of a 720p room of 4 (RTMP output), cheapest of the turns",
                  f"   room {_f(out.get('room_cores'), 3)} cores; + SRT {_f(out.get('srt_added_cores'), 4)}; "
                  f"+ MP4 recording {_f(out.get('mp4_added_cores'), 4)}; + LL-HLS with "
                  f"{out.get('hls_players', '-')} players {_f(out.get('hls_added_cores'), 4)} "
                  f"({_f(out.get('hls_parts_per_second'), 1)} parts/s served); the output's own thread: "
                  f"SRT {_f(out.get('srt_thread_cores'), 4)}, MP4 {_f(out.get('mp4_thread_cores'), 4)}, "
                  f"HLS {_f(out.get('hls_thread_cores'), 4)} cores"]
    play = r.get("playback")
    if play:
        lines += ["", "13. the programme to viewers (640x360 baseline room, burned-in sender clock)",
                  f"   room {_f(play.get('room_cores'), 3)} cores; + {play.get('viewers')} WHEP viewers "
                  f"{_f(play.get('whep_added_cores'), 4)} ({_f(play.get('whep_added_cores_per_viewer'), 4)} each)",
                  f"   WHEP delay p50/p95 {_f(_get(play, 'whep_delay', 'p50_ms'))}/"
                  f"{_f(_get(play, 'whep_delay', 'p95_ms'))} ms; LL-HLS newest part p50/p95 "
                  f"{_f(_get(play, 'llhls_delay', 'p50_ms'))}/{_f(_get(play, 'llhls_delay', 'p95_ms'))} ms"]
    lat = r.get("latency")
    if lat:
        lines += ["", "2. latency (age of each new pulled frame; cohost path vs direct sender->nginx path)",
                  f"   cohost p50/p95 {_f(_get(lat, 'cohost', 'p50_ms'))}/{_f(_get(lat, 'cohost', 'p95_ms'))} ms, "
                  f"direct {_f(_get(lat, 'direct', 'p50_ms'))}/{_f(_get(lat, 'direct', 'p95_ms'))} ms, "
                  f"added {_f(lat['added_p50_ms'])}/{_f(lat['added_p95_ms'])} ms; "
                  f"join -> first output frame {_f(lat['join_to_first_frame_ms'])} ms"]
        if lat.get("voice"):
            lines.append(f"   voice through cohost (beeps heard in the programme): p50/p95 {_f(_get(lat, 'voice', 'p50_ms'))}/"
                         f"{_f(_get(lat, 'voice', 'p95_ms'))} ms from capture, {_get(lat, 'voice', 'beeps')} of "
                         f"{_get(lat, 'voice', 'beeps_sent')} beeps; {_f(lat.get('voice_after_picture_p50_ms'))} ms after "
                         f"the picture at p50")
        streams = (lat.get("cohost_live_participant") or {}).get("streams", [])
        audio = next((s for s in streams if s.get("kind") == "audio"), {})
        held, late = lat.get("relay_held_ms") or {}, _get(lat, "voice", "sent_late_ms") or {}
        lines.append(f"   live voice's margin in cohost {_f(audio.get('voiceMarginMs'))} ms, held for lip-sync "
                     f"{_f(audio.get('lipSyncDelayMs'))} ms; this benchmark's threads held the live media "
                     f"{_f(held.get('p50'))}/{_f(held.get('max'))} ms (video relay, p50/max) and "
                     f"{_f(late.get('p50'))}/{_f(late.get('max'))} ms (voice sends); Cohost's clock skipped "
                     f"{_f(lat.get('clock_skipped_ticks'))} ticks")
        web = lat.get("browser") or {}
        if web.get("error"):
            lines.append(f"   Chromium participant: {web['error']}")
        elif web:
            lines.append(f"   Chromium participant (WebRTC, Chrome's VP8), second window: p50/p95 "
                         f"{_f(_get(web, 'browser', 'p50_ms'))}/{_f(_get(web, 'browser', 'p95_ms'))} ms, added "
                         f"{_f(_get(web, 'browser', 'added_p50_ms'))}/{_f(_get(web, 'browser', 'added_p95_ms'))} ms "
                         f"(the live sender beside it: added {_f(_get(web, 'live', 'added_p50_ms'))}/"
                         f"{_f(_get(web, 'live', 'added_p95_ms'))} ms); join -> connected "
                         f"{_f(web.get('join_to_connected_ms'))} ms, -> first frame {_f(web.get('join_to_first_frame_ms'))} ms")
    vo = r.get("voice")
    if vo:
        lines += ["", "3. voice rooms (6 Opus speakers each, 3 with DTX, each receiving its mix-minus; AAC 64k mono out)",
                  "   R | speakers | cohost cores | % core/speaker | min room AAC fps | behind | mix-minus pkt/s | RSS/room MiB | held | box busy (stolen)",
                  "   --|----------|--------------|----------------|------------------|--------|-----------------|--------------|------|------------------"]
        for s in vo["steps"]:
            lines.append(f"   {s['rooms']} | {s['speakers']} | {_f(s['cores'], 3)} | {_f(s['cores_per_speaker_pct'], 3)} | "
                         f"{_f(s['min_room_audio_fps'])} | {s['rooms_behind']}/{s['rooms_reporting']} | "
                         f"{_f(s.get('mix_minus_packets_per_s'), 0)} | "
                         f"{_f(s['rss_per_room_mib'])} | {s['held']} | {_load(s)}")
            first = s.get("first_window")
            if first:
                lines.append(f"     (measured twice: the first window had {first['rooms_behind']}/{first['rooms_reporting']} "
                             f"rooms behind, {_f(first['cores'], 3)} cores, box busy {_load(first)})")
        lines.append(f"   largest R held: {vo['max_rooms_held']}")
        j = vo.get("janus")
        if isinstance(j, dict):
            first = vo["steps"][0] if vo["steps"] else {}
            lines.append(f"   Janus AudioBridge, same senders as R={j['rooms']} ({j['participants']} plain-RTP participants, "
                         f"mix-minus Opus back to each, no RTMP): {_f(j['cores'], 3)} cores, "
                         f"{_f(j['cores_per_participant_pct'], 3)} % of a core per participant "
                         f"(Cohost at R={first.get('rooms')}: {_f(first.get('cores_per_speaker_pct'), 3)} % per speaker); "
                         f"{_f(j['mix_minus_packets_per_s'], 0)} mix-minus packets/s came back")
        else:
            lines.append(f"   Janus AudioBridge: {j}")
        idle = vo.get("idle")
        if idle:
            lines.append(f"   idle rooms (nobody in them, no output): {idle['voice_rooms']} voice + {idle['video_rooms']} 720p "
                         f"cost {_f(idle['cores'], 4)} cores (no room: {_f(idle['no_rooms_cores'], 4)}) -> "
                         f"{_f(idle['cores_per_room_pct'], 4)} % of a core per room")
    mem = r.get("memory") or {}
    lines += ["", "4. memory", f"   RSS per 720p room (MiB, by N): {mem.get('rss_per_720p_room_mib')}; "
              f"per voice room: {_f(mem.get('rss_per_voice_room_mib'))} MiB (make soak: RSS over 10 min)"]
    al = r.get("alloc")
    if al:
        lines += ["", "5. heap allocations in the steady state (LD_PRELOAD counter in the real process)"]
        for name, a in al.items():
            if name == "source_room":
                lines.append(f"   {name}: {_f(a['allocs_per_s_room_only'], 1)}/s room alone, "
                             f"{_f(a['allocs_per_s_with_source'], 1)}/s with the source -> "
                             f"{_f(a['allocs_per_source_picture'])} per source picture "
                             f"({_f(a['source_pictures_per_s'], 1)} pictures/s, "
                             f"{_f(a['source_units_forwarded_per_s'], 1)} units forwarded/s)")
                continue
            lines.append(f"   {name}: {_f(a['allocs_per_s_room_only'], 1)}/s room alone, "
                         f"{_f(a['allocs_per_s_with_participants'], 1)}/s with {a['participants']} participants -> "
                         f"{_f(a['allocs_per_s_per_participant'], 1)}/s per participant, "
                         f"{_f(a['allocs_per_datagram'])} per datagram ({_f(a['datagrams_per_s'], 1)} datagrams/s)")
    rp = r.get("return")
    if rp:
        c, lat = rp.get("view_cost") or {}, rp.get("latency") or {}
        lines += ["", "6. return path"]
        if c:
            lines.append(f"   N={c['participants']} video room: {_f(_get(c, 'nothing_back', 'cores'), 3)} cores with nothing "
                         f"sent back, {_f(_get(c, 'with_return', 'cores'), 3)} with every participant receiving the mix-minus "
                         f"and the 640x360 room view: +{_f(c['added_cores'], 3)} cores ({_f(c['added_pct_of_room'], 1)} %); "
                         f"windows off/on: " + ", ".join(f"{_f(s['off'], 3)}/{_f(s['on'], 3)}" for s in c.get("samples", [])))
        if lat:
            lines.append(f"   beep onset, sender's packet -> listener's mix-minus: p50/p95 {_f(lat.get('audio_delay_p50_ms'))}/"
                         f"{_f(lat.get('audio_delay_p95_ms'))} ms over {lat.get('beeps')} beeps; room view picture age on "
                         f"arrival: p50/p95 {_f(lat.get('view_age_p50_ms'))}/{_f(lat.get('view_age_p95_ms'))} ms over "
                         f"{lat.get('view_frames')} frames ({lat.get('view_unreadable')} unreadable)")
    if rp and rp.get("forwarded_sync"):
        sync = rp["forwarded_sync"]
        lines.append(f"   forwarded picture (a receive slot) against the same person's voice in the mix-minus: picture age "
                     f"p50/p95 {_f(sync['picture_age_p50_ms'])}/{_f(sync['picture_age_p95_ms'])} ms, voice {_f(sync['audio_delay_p50_ms'])} "
                     f"ms: the voice runs {_f(sync['audio_behind_video_p50_ms'])} ms behind the picture (p50)")
    ro = r.get("rooms")
    if ro:
        lines += ["", f"7. video rooms per machine (cohost load-test: {ro['participants_per_room']} participants a room, "
                  "640x360 VP8 30 fps + Opus each, all receiving mix-minus and room view; 1280x720 H.264 + AAC to nginx)",
                  "   R | participants | cohost cores | cores/room | load tester | rooms real time | min sender fps | "
                  "min output fps | dropped | view fps back | join max ms | held | box busy (stolen)",
                  "   --|--------------|--------------|------------|-------------|-----------------|----------------|"
                  "----------------|---------|---------------|-------------|------|------------------"]
        for s_ in ro["steps"]:
            lines.append(f"   {s_['rooms']} | {s_['participants']} | {_f(s_['cores'], 3)} | {_f(s_['cores_per_room'], 3)} | "
                         f"{_f(s_['load_tester_cores'], 3)} | {s_['rooms_real_time']}/{s_['rooms']} | "
                         f"{s_['min_sender_fps']} | {_f(s_['min_output_fps'])} | {s_['frames_dropped']} | "
                         f"{_f(s_['view_fps_back'], 1)} | {_f(s_['join_ms_max'], 0)} | {s_['held']} | {_load(s_)}")
        lines.append(f"   largest R held: {ro['max_rooms_held']} ({_f(ro['cores_per_room'], 3)} cores per room)")
    cl = r.get("cluster")
    if cl:
        lines += ["", "8. cluster of two nodes on PostgreSQL (GET /v1/rooms/{room}, "
                  f"{cl['threads']} client threads, a new connection per call)",
                  f"   owner: {_f(cl['owner_calls_per_s'], 1)} calls/s; through the other node (proxied): "
                  f"{_f(cl['proxied_calls_per_s'], 1)} calls/s -> {_f(cl['proxied_over_owner'], 3)} of the owner's; "
                  f"{cl['call_errors']} errors",
                  f"   owner killed (SIGKILL, node_timeout {cl['node_timeout_s']} s): output connected again on the "
                  f"other node after {_f(cl['output_connected_again_ms'], 0)} ms, programme pulled again after "
                  f"{_f(cl['programme_pulled_again_ms'], 0)} ms"]
    fw = r.get("forwarding")
    if fw:
        lines += ["", f"9. forwarding (a room of {fw['participants']}, each receiving {fw['slots_each']} others in receive "
                  "slots, no output; cheapest of alternating windows)",
                  f"   cohost cores without slots {_f(fw['cores_without_slots'], 3)}, with slots "
                  f"{_f(fw['cores_with_slots'], 3)}: forwarding adds {_f(fw['added_cores'], 3)} cores; each receiver got "
                  f"{_f(fw['forwarded_pkt_per_s_per_receiver'], 1)} pkt/s, {_f(fw['forwarded_kbps_per_receiver'], 0)} kb/s",
                  f"   allocations: {_f(fw.get('allocs_per_s_without_slots'), 1)}/s without slots, "
                  f"{_f(fw.get('allocs_per_s_with_slots'), 1)}/s with: {_f(fw.get('allocs_per_forwarded_packet'), 3)} "
                  "per forwarded packet"]
    lines += ["", "targets:"]
    for name, t in r["targets"].items():
        verdict = {True: "met", False: "MISSED", None: "not measured"}[t["met"]]
        lines.append(f"   {name}: {_f(t['value'])} (target {t['target']}) {verdict}")
    if r["errors"]:
        lines += ["", "errors:"] + [f"   {k}: {v}" for k, v in r["errors"].items()]
    return "\n".join(lines)
