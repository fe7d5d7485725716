// console.js — the producer console's entry: the admin token, the address bar (rooms list or one room), the top bar.
//
// The admin token arrives once in the fragment (/#token=… or /rooms/{room}#token=…), is kept in sessionStorage
// for this tab and removed from the address bar. It goes to the server only in the Authorization header (fetch)
// and as a WebSocket subprotocol (events), never in a URL.
//
// Routes: /            → the rooms list        /rooms/{room} → one room
// When the page is served from elsewhere (development: python3 -m http.server, then
// /web/console.html?api=http://127.0.0.1:7880#token=…), rooms are addressed as ?room={room} instead.

import { apiBase, errorSentence, forgetToken, storeToken, takeToken, tokenClaims, tokenSecondsLeft } from "./api.js";
import { clear, formatDuration, h } from "./console-dom.js";
import { mountRooms } from "./console-rooms.js";
import { mountRoom } from "./console-room.js";

const TOKEN_KEY = "cohost.adminToken";
const ROOM_RE = /^[A-Za-z0-9_.-]{1,64}$/;

const app = document.getElementById("app");
const crumbs = document.getElementById("crumbs");
const session = document.getElementById("session");
const brand = document.getElementById("brand");

let token = takeToken(TOKEN_KEY);
let view = null; // { destroy() }
let authProblem = null; // a sentence shown on the sign-in screen

// ------------------------------------------------------------------------------------------------ routes

const pathRouting = location.pathname === "/" || location.pathname.startsWith("/rooms/");

function currentRoute() {
    if (pathRouting) {
        const m = location.pathname.match(/^\/rooms\/([^/]+)\/?$/);
        if (m) {
            const room = decodeURIComponent(m[1]);
            if (ROOM_RE.test(room)) return { room };
        }
        return { room: null };
    }
    const room = new URLSearchParams(location.search).get("room");
    return { room: room && ROOM_RE.test(room) ? room : null };
}

export function hrefFor(room) {
    if (pathRouting) return room ? `/rooms/${encodeURIComponent(room)}` : "/";
    const params = new URLSearchParams(location.search);
    params.delete("api"); // kept in sessionStorage
    if (room) params.set("room", room);
    else params.delete("room");
    const q = params.toString();
    return location.pathname + (q ? `?${q}` : "");
}

function navigate(room) {
    const href = hrefFor(room);
    if (href !== location.pathname + location.search) history.pushState(null, "", href);
    route();
}

/** Makes a same-page link: a plain click navigates without reloading; other clicks keep their meaning. */
function link(room, ...children) {
    const a = h("a", { href: hrefFor(room) }, ...children);
    a.addEventListener("click", (event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        navigate(room);
    });
    return a;
}

window.addEventListener("popstate", route);

// A new #token=… pasted into the address bar of an open page (no reload): take it.
window.addEventListener("hashchange", () => {
    if (!/(^#|&)token=/.test(location.hash)) return;
    token = takeToken(TOKEN_KEY);
    authProblem = null;
    route();
});

// ------------------------------------------------------------------------------------------------ session

function claims() {
    return token ? tokenClaims(token) : null;
}

function signOut(problem) {
    forgetToken(TOKEN_KEY);
    token = null;
    authProblem = problem || null;
    route();
}

/** A view calls this when the server refused the token (401, or 403 forbidden): back to the sign-in screen. */
function authFailed(error) {
    const sentence = errorSentence(error);
    forgetToken(TOKEN_KEY);
    token = null;
    authProblem = sentence;
    route();
}

function renderSession() {
    clear(session);
    const c = claims();
    if (!token || !c) return;
    const left = tokenSecondsLeft(token);
    const scope = c.room === "*" ? "every room" : `room ${c.room}`;
    const expiry = h(
        "span",
        { class: left < 300 ? "chip warn" : "chip", title: "When your admin token expires" },
        left > 0 ? `token: ${formatDuration(left)} left` : "token expired",
    );
    session.append(
        h("span", { class: "muted small", title: `API: ${apiBase()}` }, `${c.sub || "?"} · ${scope}`),
        expiry,
        h("button", { type: "button", class: "ghost small", on: { click: () => signOut(null) } }, "Sign out"),
    );
}

setInterval(() => {
    if (!token) return;
    if (tokenSecondsLeft(token) <= 0) {
        authFailed({ code: "token_expired" });
        return;
    }
    renderSession();
}, 30000);

// ------------------------------------------------------------------------------------------------ sign-in

function signInView(room) {
    const origin = apiBase();
    const input = h("input", {
        type: "password",
        autocomplete: "off",
        spellcheck: false,
        placeholder: "eyJhbGciOiJIUzI1NiIs…",
        "aria-label": "Admin token",
        class: "grow",
        required: true,
    });
    const problem = h("p", { class: authProblem ? "notice error" : "hidden", role: "alert" }, authProblem || "");
    const form = h(
        "form",
        { class: "row" },
        input,
        h("button", { type: "submit", class: "primary" }, "Use this token"),
    );
    form.addEventListener("submit", (event) => {
        event.preventDefault();
        const value = input.value.trim().replace(/^Bearer\s+/i, "").replace(/^.*#token=/, "");
        const c = tokenClaims(value);
        if (!c) {
            problem.className = "notice error";
            problem.textContent = errorSentence({ code: "token_malformed" });
            return;
        }
        if (!c.admin) {
            problem.className = "notice error";
            problem.textContent =
                "That is a participant token: the console needs an admin one (cohost token … --admin).";
            return;
        }
        if (tokenSecondsLeft(value) <= 0) {
            problem.className = "notice error";
            problem.textContent = errorSentence({ code: "token_expired" });
            return;
        }
        storeToken(TOKEN_KEY, value);
        token = value;
        authProblem = null;
        route();
    });
    const linkExample = `${origin}${room ? `/rooms/${room}` : "/"}#token=<the token>`;
    return h(
        "section",
        { class: "signin card", dataset: { testid: "signin" } },
        h("h1", {}, "Sign in with an admin token"),
        problem,
        h(
            "p",
            {},
            "The console works with an admin token of this server. Whoever runs it makes one with the key and " +
                "secret it was started with:",
        ),
        h("pre", {}, "cohost token --key KEY --secret-file SECRET_FILE --room '*' --user producer --admin --ttl 28800"),
        h(
            "p",
            {},
            "Then open the console with the token after a #, which never leaves this browser: ",
            h("code", {}, linkExample),
            ". Or paste the token here:",
        ),
        form,
        h(
            "p",
            { class: "muted small" },
            "The token is kept in this tab only (sessionStorage) and sent in the Authorization header. ",
            "--room '*' covers every room; a token for one room opens only that room.",
        ),
    );
}

// ------------------------------------------------------------------------------------------------ router

function setCrumbs(room) {
    clear(crumbs);
    if (room) {
        crumbs.append(
            h("span", { class: "muted" }, "/"),
            link(null, "Rooms"),
            h("span", { class: "muted" }, "/"),
            h("span", {}, room),
        );
    }
}

function route() {
    if (view) {
        view.destroy();
        view = null;
    }
    clear(app);
    const { room } = currentRoute();
    brand.setAttribute("href", hrefFor(null));
    document.title = room ? `${room} · Cohost console` : "Cohost console";
    renderSession();
    if (!token || !claims()) {
        setCrumbs(null);
        app.append(signInView(room));
        return;
    }
    if (tokenSecondsLeft(token) <= 0) {
        authProblem = errorSentence({ code: "token_expired" });
        forgetToken(TOKEN_KEY);
        token = null;
        app.append(signInView(room));
        renderSession();
        return;
    }
    setCrumbs(room);
    const ctx = { token, claims: claims(), navigate, link, hrefFor, authFailed };
    view = room ? mountRoom(app, room, ctx) : mountRooms(app, ctx);
}

brand.addEventListener("click", (event) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(null);
});

route();
