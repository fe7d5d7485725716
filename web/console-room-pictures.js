// console-room-pictures.js — the room page's pictures card: background, placeholder and watermark PNGs
// (PATCH /v1/rooms/{room}), with the watermark's place, size and opacity.

import { fileToBase64, formatBytes, h, imageSize, isPNG, messageLine, setText } from "./console-dom.js";

const MAX_PICTURE_BASE64 = 5600000;

/** The file as base64, or null (said in the status line) when it is not a PNG or too large. */
async function readPicture(pictures, file) {
    if (!(await isPNG(file))) {
        pictures.status.error(`${file.name} is not a PNG file: Cohost takes PNG pictures only.`);
        return null;
    }
    const b64 = await fileToBase64(file);
    if (b64.length > MAX_PICTURE_BASE64) {
        pictures.status.error(
            `${file.name} is too large: at most 5,600,000 bytes of base64 (about 4.2 MB of PNG).`,
        );
        return null;
    }
    return b64;
}

async function patchRoom(pictures, body, done) {
    const { view, status } = pictures;
    try {
        const updated = await view.call("PATCH", "", { json: body });
        status.ok(done);
        view.apply(updated);
    } catch (error) {
        view.failed(error, status);
    }
}

/** A background or placeholder: what is set now, a file input that sets it, Remove. */
function pictureRow(pictures, label, field, testid) {
    const now = h("span", { class: "muted small", dataset: { testid: `${testid}-info` } }, "none");
    const input = h("input", {
        type: "file",
        accept: "image/png",
        dataset: { testid },
        "aria-label": `${label} (PNG)`,
    });
    const remove = h("button", { type: "button", class: "small" }, "Remove");
    input.addEventListener("change", async () => {
        const file = input.files && input.files[0];
        if (!file) return;
        const b64 = await readPicture(pictures, file);
        input.value = "";
        if (!b64) return;
        await patchRoom(pictures, { [field]: b64 }, `${label} set.`);
    });
    remove.addEventListener("click", () => patchRoom(pictures, { [field]: null }, `${label} removed.`));
    const el = h(
        "div",
        { class: "picture-row" },
        h("div", { class: "row" }, h("strong", {}, label), now),
        h("div", { class: "row" }, input, remove),
    );
    return {
        el,
        update(image) {
            setText(now, image ? `${image.width}×${image.height} PNG, ${formatBytes(image.bytes)}` : "none");
            remove.disabled = !image;
        },
    };
}

// ------------------------------------------------------------------------------------------------ watermark

function numberField(label, attrs) {
    const input = h("input", { type: "number", ...attrs });
    return { input, el: h("label", { class: "field narrow" }, h("span", {}, label), input) };
}

function watermarkFields() {
    return {
        x: numberField("x", { step: 2 }),
        y: numberField("y", { step: 2 }),
        width: numberField("width", { min: 1, step: 2 }),
        height: numberField("height", { min: 1, step: 2 }),
        opacity: numberField("opacity", { min: 0, max: 1, step: 0.05, value: 1 }),
    };
}

/** A newly chosen watermark file; without a watermark set yet, a default place for it. */
async function chooseWatermark(pictures, watermark) {
    const { file, fields } = watermark;
    const chosen = file.files && file.files[0];
    if (!chosen) return;
    const b64 = await readPicture(pictures, chosen);
    if (!b64) {
        file.value = "";
        return;
    }
    pictures.watermarkImage = b64;
    pictures.watermarkSize = await imageSize(chosen);
    const info = pictures.view.info;
    const size = pictures.watermarkSize;
    if (info && size) {
        // top-right, 15 % of the canvas's width, the picture's aspect
        const W = info.canvas.width;
        const H = info.canvas.height;
        const margin = Math.round(Math.min(W, H) / 30 / 2) * 2;
        const width = Math.max(2, Math.round((W * 0.15) / 2) * 2);
        const height = Math.max(2, Math.round((width * size.height) / size.width / 2) * 2);
        if (!info.watermark) {
            fields.x.input.value = String(W - width - margin);
            fields.y.input.value = String(margin);
            fields.width.input.value = String(width);
            fields.height.input.value = String(height);
        }
    }
    watermark.set.disabled = false;
}

function setWatermark(pictures, fields) {
    if (!pictures.watermarkImage) {
        pictures.status.error("Choose the watermark's PNG first (to move a watermark, choose its file again).");
        return;
    }
    const value = (field) => field.input.value;
    const body = {
        watermark: {
            image: pictures.watermarkImage,
            x: Math.round(Number(value(fields.x)) || 0),
            y: Math.round(Number(value(fields.y)) || 0),
            width: Math.max(1, Math.round(Number(value(fields.width)) || 1)),
            height: Math.max(1, Math.round(Number(value(fields.height)) || 1)),
            opacity: Math.min(1, Math.max(0, Number(value(fields.opacity) === "" ? 1 : value(fields.opacity)))),
        },
    };
    patchRoom(pictures, body, "Watermark set.");
}

function watermarkRow(pictures) {
    const now = h("span", { class: "muted small", dataset: { testid: "watermark-info" } }, "none");
    const file = h("input", {
        type: "file",
        accept: "image/png",
        dataset: { testid: "watermark-file" },
        "aria-label": "Watermark (PNG)",
    });
    const fields = watermarkFields();
    const set = h(
        "button",
        { type: "button", class: "primary small", dataset: { testid: "set-watermark" } },
        "Set watermark",
    );
    const remove = h("button", { type: "button", class: "small" }, "Remove");
    const watermark = { file, fields, set, shown: null }; // shown: the watermark the fields were last filled from
    file.addEventListener("change", () => chooseWatermark(pictures, watermark));
    set.addEventListener("click", () => setWatermark(pictures, fields));
    remove.addEventListener("click", () => patchRoom(pictures, { watermark: null }, "Watermark removed."));
    const el = h(
        "div",
        { class: "picture-row" },
        h("div", { class: "row" }, h("strong", {}, "Watermark"), now),
        h("div", { class: "row" }, file, remove),
        h(
            "div",
            { class: "row end" },
            fields.x.el,
            fields.y.el,
            fields.width.el,
            fields.height.el,
            fields.opacity.el,
            set,
        ),
    );
    function update(wm) {
        const where = wm && `at ${wm.x},${wm.y}, ${wm.width}×${wm.height}, opacity ${wm.opacity}`;
        setText(now, wm ? `${wm.image.width}×${wm.image.height} PNG ${where}` : "none");
        remove.disabled = !wm;
        set.disabled = !pictures.watermarkImage;
        const key = JSON.stringify(wm || null);
        if (key !== watermark.shown) {
            watermark.shown = key;
            if (wm) {
                for (const name of ["x", "y", "width", "height", "opacity"]) {
                    fields[name].input.value = String(wm[name]);
                }
            }
        }
    }
    return { el, update };
}

export function createPictures(view) {
    // watermarkImage: base64 of the watermark chosen in this page (the server never gives it back)
    const pictures = { view, status: messageLine(), watermarkImage: null, watermarkSize: null };
    const background = pictureRow(pictures, "Background", "backgroundImage", "background-file");
    const placeholder = pictureRow(pictures, "Placeholder", "placeholderImage", "placeholder-file");
    const watermark = watermarkRow(pictures);
    const el = h(
        "section",
        { class: "card pictures-card" },
        h("header", {}, h("h2", {}, "Pictures"), h("span", { class: "muted small" }, "PNG, up to 4096×4096")),
        pictures.status.el,
        background.el,
        placeholder.el,
        watermark.el,
    );
    return {
        el,
        update(room) {
            background.update(room.canvas.backgroundImage);
            placeholder.update(room.canvas.placeholderImage);
            watermark.update(room.watermark);
        },
    };
}
