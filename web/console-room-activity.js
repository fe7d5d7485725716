// console-room-activity.js — the room page's activity card: the last 30 joins, leaves, kicks and output changes,
// newest first, each with the time it was seen.

import { h } from "./console-dom.js";

const KEEP = 30;

export function createActivity() {
    const list = h("ol", { class: "activity", dataset: { testid: "activity" } });
    const empty = h(
        "p",
        { class: "muted small" },
        "Joins, leaves, kicks and output changes appear here as they happen.",
    );
    const el = h("section", { class: "card activity-card" }, h("header", {}, h("h2", {}, "Activity")), empty, list);
    function add(text) {
        empty.remove();
        const time = new Date().toLocaleTimeString();
        list.prepend(h("li", {}, h("span", { class: "muted small mono" }, time), " ", text));
        while (list.children.length > KEEP) list.lastChild.remove();
    }
    return { el, add };
}
