// console-room-outputs.js — the room page's outputs card: one row per output with its state, URL and numbers
// (from output_status events when there are some, else from the poll), remove; and the form that adds one.

import { clear, confirmButton, formatKbps, h, messageLine, setAttr, setText } from "./console-dom.js";

function statNumbers(s) {
    return [
        ["video", `${Number(s.videoFps).toFixed(1)} fps`],
        ["audio", `${Number(s.audioFps).toFixed(1)} fps`],
        ["rate", formatKbps(s.kbps)],
        ["queue", `${s.queueMs} ms`],
        ["dropped", `${s.droppedVideoFrames} video / ${s.droppedAudioFrames} audio`],
        ["target", formatKbps(s.bitrate)],
    ];
}

function removeButton(view, status, id) {
    const remove = async () => {
        try {
            await view.call("DELETE", `/outputs/${encodeURIComponent(id)}`);
            status.ok(`Output ${id} is stopping (it flushes what it has queued first).`);
            view.refreshSoon();
        } catch (error) {
            view.failed(error, status);
        }
    };
    return confirmButton("Remove", "Really remove?", remove, {
        class: "danger small",
        dataset: { testid: "remove-output" },
    });
}

function makeOutput(view, status, id) {
    const chip = h("span", { class: "chip" });
    const url = h("span", { class: "mono small output-url" });
    const detail = h("span", { class: "muted small" });
    const numbers = h("dl", { class: "numbers", dataset: { testid: "output-status" } });
    const row = h(
        "div",
        { class: "output", dataset: { testid: "output", outputId: id, state: "connecting" } },
        h(
            "div",
            { class: "row" },
            h("strong", {}, id),
            chip,
            url,
            h("span", { class: "grow" }),
            removeButton(view, status, id),
        ),
        detail,
        numbers,
    );
    function paintNumbers(s) {
        clear(numbers);
        for (const [k, v] of statNumbers(s)) {
            numbers.append(h("div", {}, h("dt", {}, k), h("dd", { dataset: { stat: k } }, v)));
        }
    }
    function setState(state, attempt, error) {
        setAttr(row, "data-state", state);
        chip.dataset.state = state;
        setText(chip, state);
        const bits = [];
        if (attempt) bits.push(`retry ${attempt}`);
        if (error) bits.push(error);
        setText(detail, bits.join(" · "));
    }
    function update(o) {
        setText(url, o.url);
        url.title = o.url;
        setState(o.state, o.attempt, o.error);
        const fromEvent = view.outputStatus.get(id);
        paintNumbers(fromEvent || o);
    }
    return { row, update, setState, paintNumbers };
}

function render(view, panel) {
    const { rows, list } = panel;
    const outputs = view.info.outputs;
    panel.none.classList.toggle("hidden", outputs.length > 0);
    const seen = new Set();
    outputs.forEach((o, i) => {
        seen.add(o.id);
        let r = rows.get(o.id);
        if (!r) {
            r = makeOutput(view, panel.status, o.id);
            rows.set(o.id, r);
        }
        r.update(o);
        if (list.children[i] !== r.row) list.insertBefore(r.row, list.children[i] || null);
    });
    for (const [id, r] of rows) {
        if (!seen.has(id)) {
            r.row.remove();
            rows.delete(id);
            view.outputStatus.delete(id);
        }
    }
}

// ------------------------------------------------------------------------------------------------ the form

function outputFields() {
    const url = h("input", {
        type: "text",
        placeholder: "rtmp://live.example.com/app/stream-key",
        autocomplete: "off",
        spellcheck: false,
        "aria-label": "Output URL",
        dataset: { testid: "output-url" },
        class: "grow",
    });
    const queueMs = h("input", { type: "number", min: 100, max: 10000, step: 100, placeholder: "2000" });
    const maxRetries = h("input", { type: "number", min: 0, max: 100000, placeholder: "forever" });
    const interleave = h(
        "select",
        {},
        h("option", { value: "" }, "default"),
        h("option", { value: "lowLatency" }, "lowLatency"),
        h("option", { value: "strict" }, "strict"),
    );
    const submit = h("button", { type: "submit", class: "primary", dataset: { testid: "add-output" } }, "Add output");
    return { url, queueMs, maxRetries, interleave, submit };
}

async function addOutput(view, fields, status) {
    const body = { url: fields.url.value.trim() };
    if (!body.url) {
        status.error("Give the output's URL: rtmp://host/app/stream, rtmps://…, srt://host:port or " +
            "file://name.flv (.mp4, .ts).");
        return;
    }
    if (fields.queueMs.value) body.queueMs = Number(fields.queueMs.value);
    if (fields.maxRetries.value) body.maxRetries = Number(fields.maxRetries.value);
    if (fields.interleave.value) body.interleave = fields.interleave.value;
    fields.submit.disabled = true;
    try {
        const o = await view.call("POST", "/outputs", { json: body });
        status.ok(`Output ${o.id} added.`);
        fields.url.value = "";
        view.refreshSoon();
    } catch (error) {
        view.failed(error, status);
    } finally {
        fields.submit.disabled = false;
    }
}

function outputForm(view, status) {
    const fields = outputFields();
    const form = h(
        "form",
        { class: "stack tight" },
        h("div", { class: "row" }, fields.url, fields.submit),
        h(
            "details",
            {},
            h("summary", { class: "muted small" }, "Options"),
            h(
                "div",
                { class: "row end" },
                h("label", { class: "field narrow" }, h("span", {}, "queue ms"), fields.queueMs),
                h("label", { class: "field narrow" }, h("span", {}, "max retries"), fields.maxRetries),
                h("label", { class: "field" }, h("span", {}, "interleave"), fields.interleave),
            ),
        ),
    );
    form.addEventListener("submit", (event) => {
        event.preventDefault();
        addOutput(view, fields, status);
    });
    return form;
}

export function createOutputs(view) {
    const status = messageLine();
    const list = h("div", { class: "outputs", dataset: { testid: "outputs" } });
    const none = h("p", { class: "muted small" }, "No outputs: the programme goes nowhere yet.");
    const panel = { status, list, none, rows: new Map() }; // rows: output id → row
    const el = h(
        "section",
        { class: "card outputs-card" },
        h("header", {}, h("h2", {}, "Outputs"), h("span", { class: "muted small" }, "numbers from output_status")),
        status.el,
        list,
        none,
        outputForm(view, status),
    );
    return {
        el,
        render: () => render(view, panel),
        /** output_state: the row's state; false when no row shows that output yet. */
        setState(id, state, attempt, error) {
            const r = panel.rows.get(id);
            if (r) r.setState(state, attempt, error);
            return Boolean(r);
        },
        /** output_status: kept for the polls to come, and shown at once. */
        showStatus(event) {
            view.outputStatus.set(event.output, event);
            const r = panel.rows.get(event.output);
            if (r) r.paintNumbers(event);
        },
    };
}
