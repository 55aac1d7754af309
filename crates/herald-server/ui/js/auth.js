// Signing in to a server that has identities (docs/security.md). The token is asked for once,
// in a sign-in box shown when the server answers 401; it is kept in sessionStorage — this
// browser tab's session only, never in a URL or a cookie — and sent as
// `Authorization: Bearer` on every request and, for WebSockets (which cannot set that
// header), as the subprotocol `bearer.<token>` beside `herald`.

import { el } from "./dom.js";

const KEY = "herald.token";

/** The token this tab signed in with, or "". */
export function token() {
  return sessionStorage.getItem(KEY) || "";
}

/** Headers that present the token, if there is one. */
export function authHeaders() {
  const t = token();
  return t ? { Authorization: `Bearer ${t}` } : {};
}

/** The subprotocols a WebSocket names: `herald`, and `bearer.<token>` when signed in. */
export function wsProtocols() {
  const t = token();
  return t ? ["herald", `bearer.${t}`] : ["herald"];
}

let pending = null;

/**
 * Shows the sign-in box with the server's `message` (why the last request was refused) and
 * resolves once a token was entered. However many requests were refused meanwhile, there is
 * one box, and they all go on with the one token.
 */
export function signIn(message) {
  if (!pending) {
    pending = new Promise((resolve) => showBox(message, resolve)).finally(() => {
      pending = null;
    });
  }
  return pending;
}

/** Forgets the token and starts again (the server will ask for one). */
export function signOut() {
  sessionStorage.removeItem(KEY);
  location.reload();
}

function showBox(message, resolve) {
  const input = el("input", {
    type: "password", id: "sign-in-token", name: "token", autocomplete: "off",
    placeholder: "hrd_…", "aria-label": "token", required: true,
  });
  const form = el("form", { class: "sign-in", role: "dialog", "aria-label": "sign in" },
    el("h2", { text: "Sign in" }),
    el("p", { class: "error", text: message }),
    el("p", { class: "muted", text: "Ask the server's operator for one (herald token new). It is kept for this browser tab only." }),
    input,
    el("button", { type: "submit", text: "Sign in" }));
  const overlay = el("div", { class: "sign-in-overlay" }, form);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = input.value.trim();
    if (!value) return;
    sessionStorage.setItem(KEY, value);
    overlay.remove();
    showSignOut();
    resolve();
  });
  document.body.append(overlay);
  input.focus();
}

/** A "sign out" link in the header while signed in. */
export function showSignOut() {
  if (!token() || document.getElementById("sign-out")) return;
  const link = el("a", { id: "sign-out", href: "#", class: "sign-out", text: "sign out",
    onclick: (event) => { event.preventDefault(); signOut(); } });
  document.querySelector("header")?.append(link);
}
