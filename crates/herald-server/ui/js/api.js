// The HTTP API as the views use it: query strings, JSON fetches with the server's error text,
// WebSocket URLs. Every request goes to the server that served this page, with the token the
// tab signed in with (auth.js); a 401 shows the sign-in box and the request is made again.

import { authHeaders, signIn } from "./auth.js";

/** Integers above 2^63-1 are unsigned 64-bit field values; a double would round them. */
const U64_FLOOR = 2 ** 63;

/**
 * Parses the server's JSON, keeping integers above 2^63-1 (u64 field values) exact as
 * BigInt where the browser gives the number's source text (Chromium 114+, Firefox 135+);
 * elsewhere they round, as every JSON number above 2^53 does.
 */
export function parseJSON(text) {
  // The reviver costs: only for text that holds a number of 19 digits or more.
  if (!/\d{19}/.test(text)) return JSON.parse(text);
  return JSON.parse(text, (key, value, context) =>
    typeof value === "number" && value >= U64_FLOOR && context && /^\d+$/.test(context.source)
      ? BigInt(context.source)
      : value);
}

/** Builds `?a=1&b=2` from an object, leaving out empty values. */
export function queryString(params) {
  const q = new URLSearchParams();
  for (const [key, val] of Object.entries(params || {})) {
    if (val !== undefined && val !== null && val !== "") q.set(key, String(val));
  }
  const s = q.toString();
  return s ? "?" + s : "";
}

/** An HTTP error answered by the server: `message` is its `error`, `code` its `code`. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** GETs `path` with `params` and returns the parsed JSON; throws ApiError on a non-2xx answer. */
export async function getJSON(path, params, signal) {
  for (;;) {
    try {
      return await fetchJSON(path, params, signal);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 401) throw err;
      await signIn(err.message);
    }
  }
}

async function fetchJSON(path, params, signal) {
  const response = await fetch(path + queryString(params), { signal, cache: "no-store", headers: authHeaders() });
  const text = await response.text();
  let body = null;
  try {
    body = text ? parseJSON(text) : null;
  } catch {
    body = null;
  }
  if (!response.ok) {
    const message = (body && body.error) || `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, body && body.code, message);
  }
  return body;
}

/** Returns the ws:// (or wss://) URL of `path` with `params` on this server. */
export function wsUrl(path, params) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}${path}${queryString(params)}`;
}

/** Escapes text for use inside a regular expression. */
export function regexEscape(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Formats milliseconds since the epoch as ISO 8601 UTC, the form the archive routes take. */
export function isoTimeFromMs(ms) {
  return new Date(ms).toISOString();
}
