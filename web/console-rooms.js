// console-rooms.js — the rooms page: every room the token covers (polled every 2 s) with who is in it, its picture
// and its outputs, close; and the form that creates one (console-rooms-create.js).

import { api, errorSentence, isAbort } from "./api.js";
import { clear, confirmButton, h, messageLine, setAttr, setText } from "./console-dom.js";
import { createRoomForm } from "./console-rooms-create.js";

const POLL_MS = 2000;

function isAuthError(error) {
    return error && (error.status === 401 || (error.status === 403 && error.code === "forbidden"));
}

function roomsTable(tbody) {
    return h(
        "table",
        { class: "rooms" },
        h(
            "thead",
            {},
            h(
                "tr",
                {},
                h("th", {}, "Room"),
                h("th", {}, "People"),
                h("th", { class: "hide-narrow" }, "Picture"),
                h("th", {}, "Outputs"),
                h("th", { class: "actions" }, h("span", { class: "visually-hidden" }, "Actions")),
            ),
        ),
        tbody,
    );
}

function paintRow(cells, room) {
    const { tr, people, picture, outputs } = cells;
    const n = room.participants.length;
    clear(people);
    const names =
        room.participants
            .slice(0, 4)
            .map((p) => p.userId)
            .join(", ") + (n > 4 ? ` +${n - 4}` : "");
    people.append(
        h("span", { class: "count" }, `${n} / ${room.maxParticipants}`),
        n ? h("span", { class: "muted small names" }, names) : null,
    );
    const c = room.canvas;
    setText(picture, room.audioOnly ? "audio only" : `${c.width}×${c.height} · ${c.fps} fps · ${room.layout.mode}`);
    clear(outputs);
    const chips = h("div", { class: "chips" });
    outputs.append(chips);
    if (!room.outputs.length) chips.append(h("span", { class: "muted small" }, "none"));
    for (const o of room.outputs) {
        const title = `${o.id}: ${o.url}`;
        chips.append(h("span", { class: "chip", dataset: { state: o.state }, title }, `${o.id} ${o.state}`));
    }
    setAttr(tr, "data-participants", n);
}

function makeRow(rooms, name) {
    const people = h("td", { class: "people" });
    const picture = h("td", { class: "hide-narrow muted small" });
    const outputs = h("td", { class: "output-states" });
    const open = rooms.ctx.link(name, name);
    open.classList.add("room-name");
    const close = confirmButton("Close", "Really close?", () => closeRoom(rooms, name), {
        class: "danger small",
        dataset: { testid: "close-room" },
        title: `Close ${name}: everyone leaves, outputs stop`,
    });
    const tr = h(
        "tr",
        { dataset: { testid: "room", room: name }, class: "room-row" },
        h("td", {}, open),
        people,
        picture,
        outputs,
        h("td", { class: "actions" }, close),
    );
    tr.addEventListener("click", (event) => {
        if (event.target.closest("a, button, input, select")) return;
        rooms.ctx.navigate(name);
    });
    const cells = { tr, people, picture, outputs };
    return { tr, update: (room) => paintRow(cells, room) };
}

function render(rooms, list) {
    const { rows, tbody } = rooms;
    setText(rooms.count, `${list.length} open`);
    rooms.empty.classList.toggle("hidden", list.length > 0);
    rooms.table.classList.toggle("hidden", list.length === 0);
    const seen = new Set();
    list.forEach((room, i) => {
        seen.add(room.name);
        let row = rows.get(room.name);
        if (!row) {
            row = makeRow(rooms, room.name);
            rows.set(room.name, row);
        }
        row.update(room);
        if (tbody.children[i] !== row.tr) tbody.insertBefore(row.tr, tbody.children[i] || null);
    });
    for (const [name, row] of rows) {
        if (!seen.has(name)) {
            row.tr.remove();
            rows.delete(name);
        }
    }
}

async function refresh(rooms) {
    clearTimeout(rooms.timer);
    const { status } = rooms;
    try {
        const answer = await rooms.api("GET", "/v1/rooms");
        if (rooms.destroyed) return;
        render(rooms, answer.rooms || []);
        if (status.el.dataset.source === "poll") {
            status.hide();
            delete status.el.dataset.source;
        }
    } catch (error) {
        if (isAbort(error) || rooms.destroyed) return;
        if (isAuthError(error)) {
            rooms.ctx.authFailed(error);
            return;
        }
        status.error(errorSentence(error));
        status.el.dataset.source = "poll";
    }
    if (!rooms.destroyed) rooms.timer = setTimeout(() => refresh(rooms), POLL_MS);
}

async function closeRoom(rooms, name) {
    try {
        await rooms.api("DELETE", `/v1/rooms/${encodeURIComponent(name)}`);
        rooms.status.ok(`Room ${name} closed.`);
    } catch (error) {
        if (isAbort(error)) return;
        if (isAuthError(error) && error.status === 401) return rooms.ctx.authFailed(error);
        rooms.status.error(errorSentence(error));
    }
    refresh(rooms);
}

function listCard(rooms) {
    return h(
        "section",
        { class: "card" },
        h("header", {}, h("h2", {}, "Rooms"), rooms.count),
        rooms.status.el,
        h("div", { class: "table-scroll" }, rooms.table),
        rooms.empty,
    );
}

export function mountRooms(container, ctx) {
    const controller = new AbortController();
    const tbody = h("tbody", {});
    // What the list, its rows and the create form share.
    const rooms = {
        ctx,
        destroyed: false,
        timer: null,
        rows: new Map(), // name → { tr, update(room) }
        status: messageLine(),
        count: h("span", { class: "muted small" }, ""),
        tbody,
        table: roomsTable(tbody),
        empty: h(
            "p",
            { class: "muted hidden", dataset: { testid: "no-rooms" } },
            "No rooms are open. Create one below.",
        ),
        api: (method, path, options = {}) =>
            api(method, path, { token: ctx.token, signal: controller.signal, ...options }),
        refresh: () => refresh(rooms),
    };
    container.append(h("div", { class: "rooms-page stack" }, listCard(rooms), createRoomForm(rooms)));
    refresh(rooms);

    return {
        destroy() {
            rooms.destroyed = true;
            clearTimeout(rooms.timer);
            controller.abort();
        },
    };
}
