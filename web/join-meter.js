// join-meter.js — the guest's own voice meter, measured in the page (WebAudio) before and during the call.

/**
 * Measures `track` every 100 ms as a level 0–100, linear in dBFS from -60 to 0 (as Cohost's voice_levels), quick up
 * and slower down, and hands it to `show`. Returns the meter; `stop()` ends it (showing 0) and keeps its
 * AudioContext for the next track (`start(track, previous)`).
 */
export function startMeter(track, show, previous = null) {
    previous?.stop();
    const context = previous?.context || new AudioContext();
    const source = context.createMediaStreamSource(new MediaStream([track]));
    const analyser = context.createAnalyser();
    analyser.fftSize = 1024;
    source.connect(analyser);
    const samples = new Float32Array(analyser.fftSize);
    let shown = 0;
    const timer = setInterval(() => {
        analyser.getFloatTimeDomainData(samples);
        let sum = 0;
        for (const s of samples) sum += s * s;
        const db = 10 * Math.log10(sum / samples.length + 1e-12);
        const level = Math.max(0, Math.min(100, Math.round(((db + 60) / 60) * 100)));
        shown = Math.max(level, Math.floor(shown * 0.7));
        show(shown);
    }, 100);
    if (context.state === "suspended") resumeOnGesture(context);
    let stopped = false;
    return {
        context,
        stop() {
            if (stopped) return;
            stopped = true;
            clearInterval(timer);
            source.disconnect();
            show(0);
        },
    };
}

/** Browsers start an AudioContext suspended until the user does something: resume it then. */
function resumeOnGesture(context) {
    const resume = () => context.resume().catch(() => {});
    for (const type of ["pointerdown", "keydown"]) addEventListener(type, resume, { once: true, capture: true });
}
