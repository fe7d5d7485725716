// console-room-invite.js — the room page's invite form: POST …/invites for a guest's user id and a lifetime, then
// the join link to copy and until when it works.

import { apiBase, errorSentence } from "./api.js";
import { copyText, h, messageLine, setText } from "./console-dom.js";

const USER_RE = /^[A-Za-z0-9_.-]{1,64}$/;

function inviteFields() {
    const user = h("input", {
        type: "text",
        pattern: "[A-Za-z0-9_.\\-]{1,64}",
        maxLength: 64,
        placeholder: "guest1",
        autocomplete: "off",
        spellcheck: false,
        "aria-label": "Guest's user id",
        dataset: { testid: "invite-user" },
    });
    const ttl = h(
        "select",
        { "aria-label": "Link valid for" },
        h("option", { value: "3600" }, "1 hour"),
        h("option", { value: "14400" }, "4 hours"),
        h("option", { value: "43200" }, "12 hours"),
        h("option", { value: "86400" }, "24 hours"),
    );
    const link = h("input", {
        type: "text",
        readOnly: true,
        dataset: { testid: "invite-link" },
        "aria-label": "Invite link",
    });
    const copy = h("button", { type: "button", dataset: { testid: "copy-invite" } }, "Copy");
    const expiry = h("span", { class: "muted small" });
    const result = h(
        "div",
        { class: "stack tight hidden", dataset: { testid: "invite-result" } },
        h("div", { class: "copy-field" }, link, copy),
        expiry,
    );
    const submit = h("button", { type: "submit", class: "primary", dataset: { testid: "invite" } }, "Invite");
    return { user, ttl, link, copy, expiry, result, submit };
}

async function invite(view, fields, status) {
    const { user, ttl, link, expiry, result, submit } = fields;
    if (!USER_RE.test(user.value.trim())) {
        status.error(errorSentence({ code: "invalid_user" }));
        return;
    }
    submit.disabled = true;
    try {
        const json = { userId: user.value.trim(), ttlSeconds: Number(ttl.value) };
        const answer = await view.call("POST", "/invites", { json });
        const origin = apiBase();
        link.value = answer.link.startsWith("http") ? answer.link : origin + answer.link;
        const expires = Date.parse(answer.expiresAt);
        const until = Number.isFinite(expires) ? new Date(expires).toLocaleString() : answer.expiresAt;
        setText(
            expiry,
            `For ${answer.userId}; works until ${until}. Anyone with the link can join as ${answer.userId}.`,
        );
        result.classList.remove("hidden");
        status.hide();
        link.select();
    } catch (error) {
        view.failed(error, status);
    } finally {
        submit.disabled = false;
    }
}

/** The form, its status line and the link it made: `nodes`, to put in the participants card. */
export function createInvite(view) {
    const status = messageLine();
    const fields = inviteFields();
    fields.copy.addEventListener("click", async () => {
        const ok = await copyText(fields.link.value, fields.link);
        setText(fields.copy, ok ? "Copied" : "Press Ctrl+C");
        setTimeout(() => setText(fields.copy, "Copy"), 2000);
    });
    const form = h(
        "form",
        { class: "row", dataset: { testid: "invite-form" } },
        fields.user,
        fields.ttl,
        fields.submit,
    );
    form.addEventListener("submit", (event) => {
        event.preventDefault();
        invite(view, fields, status);
    });
    return { nodes: [form, status.el, fields.result] };
}
