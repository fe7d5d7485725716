// console-dom.js — small DOM helpers for the producer console (no framework, CSP-safe: no inline styles or
// handlers, no innerHTML with data).

/**
 * h("button", { class: "primary", type: "button", dataset: { testid: "x" }, on: { click: fn } }, "Label", child…)
 * Attributes: class, dataset, on (event listeners), hidden/disabled/checked/value/… as properties when the element
 * has them, anything else with setAttribute. Children: strings, nodes, arrays, null/false (skipped).
 */
export function h(tag, attrs = {}, ...children) {
    const el = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
        if (value === undefined || value === null || value === false) continue;
        if (name === "class") el.className = value;
        else if (name === "dataset") Object.assign(el.dataset, value);
        else if (name === "on") for (const [type, fn] of Object.entries(value)) el.addEventListener(type, fn);
        else if (name === "style") throw new Error("no inline styles: set el.style.* instead");
        else if (name in el && typeof el[name] !== "function" && !name.includes("-")) {
            try {
                el[name] = value;
            } catch {
                el.setAttribute(name, value === true ? "" : String(value)); // a read-only property (input.list)
            }
        } else el.setAttribute(name, value === true ? "" : String(value));
    }
    append(el, children);
    return el;
}

export function append(el, children) {
    for (const child of children.flat(Infinity)) {
        if (child === null || child === undefined || child === false) continue;
        el.append(child instanceof Node ? child : String(child));
    }
    return el;
}

export function clear(el) {
    while (el.firstChild) el.firstChild.remove();
    return el;
}

/** Sets textContent only when it changed (keeps selections and avoids needless layout). */
export function setText(el, value) {
    const s = String(value);
    if (el.textContent !== s) el.textContent = s;
}

export function setAttr(el, name, value) {
    const s = String(value);
    if (el.getAttribute(name) !== s) el.setAttribute(name, s);
}

/**
 * A button that asks once more before a destructive action: the first click arms it ("Really close?") for
 * 4 s, the second runs `action`. (window.confirm would block the page and cannot be styled.)
 */
export function confirmButton(label, armedLabel, action, attrs = {}) {
    let timer = null;
    const button = h("button", { type: "button", class: "danger", ...attrs }, label);
    const disarm = () => {
        clearTimeout(timer);
        timer = null;
        button.classList.remove("armed");
        button.textContent = label;
    };
    button.addEventListener("click", async () => {
        if (!button.classList.contains("armed")) {
            button.classList.add("armed");
            button.textContent = armedLabel;
            timer = setTimeout(disarm, 4000);
            return;
        }
        disarm();
        button.disabled = true;
        try {
            await action();
        } finally {
            button.disabled = false;
        }
    });
    return button;
}

/** A status line that shows an error sentence or an info message, and clears itself after a while. */
export function messageLine() {
    const el = h("div", { class: "notice hidden", role: "status" });
    let timer = null;
    function show(kind, text, ms) {
        clearTimeout(timer);
        el.className = `notice ${kind}`;
        el.setAttribute("role", kind === "error" ? "alert" : "status");
        el.textContent = text;
        if (ms) timer = setTimeout(hide, ms);
    }
    function hide() {
        clearTimeout(timer);
        el.className = "notice hidden";
        el.textContent = "";
    }
    return {
        el,
        error: (text) => show("error", text, 0),
        ok: (text) => show("ok", text, 4000),
        info: (text) => show("", text, 4000),
        warn: (text) => show("warn", text, 0),
        hide,
    };
}

export function formatKbps(kbps) {
    if (kbps === undefined || kbps === null) return "–";
    return kbps >= 1000 ? `${(kbps / 1000).toFixed(1)} Mb/s` : `${Math.round(kbps)} kb/s`;
}

export function formatBytes(n) {
    if (!Number.isFinite(n)) return "–";
    if (n < 1024) return `${n} B`;
    if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
    if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
    return `${(n / 1024 / 1024 / 1024).toFixed(2)} GB`;
}

export function formatDuration(seconds) {
    if (!Number.isFinite(seconds)) return "no expiry";
    const s = Math.max(0, Math.round(seconds));
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min`;
    if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
    return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

export function since(isoTime) {
    const t = Date.parse(isoTime);
    if (!Number.isFinite(t)) return "";
    return formatDuration((Date.now() - t) / 1000);
}

/** Copies text to the clipboard; falls back to selecting `input` so Ctrl+C works (no clipboard on plain http). */
export async function copyText(text, input) {
    try {
        if (navigator.clipboard && window.isSecureContext) {
            await navigator.clipboard.writeText(text);
            return true;
        }
    } catch {
        /* fall through */
    }
    if (input) {
        input.focus();
        input.select();
        try {
            return document.execCommand("copy");
        } catch {
            return false;
        }
    }
    return false;
}

/** Reads a File as base64 (no data: prefix). */
export function fileToBase64(file) {
    return new Promise((resolve, reject) => {
        const reader = new FileReader();
        reader.onload = () => {
            const s = String(reader.result);
            resolve(s.slice(s.indexOf(",") + 1));
        };
        reader.onerror = () => reject(reader.error || new Error("could not read the file"));
        reader.readAsDataURL(file);
    });
}

/** True when the file starts with the PNG signature. */
export async function isPNG(file) {
    const head = new Uint8Array(await file.slice(0, 8).arrayBuffer());
    const sig = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
    return head.length === 8 && sig.every((b, i) => head[i] === b);
}

/** The pixel size of an image file, or null. */
export async function imageSize(file) {
    try {
        const bitmap = await createImageBitmap(file);
        const size = { width: bitmap.width, height: bitmap.height };
        bitmap.close();
        return size;
    } catch {
        return null;
    }
}
