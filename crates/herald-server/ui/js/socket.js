// A WebSocket that reconnects with backoff, parses JSON messages and explains refusals.
//
// The server answers bad parameters with HTTP 400 before the upgrade, which a browser reports
// only as a closed socket; when a socket closes before it ever opened, a plain GET of the same
// URL fetches the server's JSON error so the view can say what was wrong.

import { getJSON, parseJSON, wsUrl } from "./api.js";
import { wsProtocols } from "./auth.js";

const BACKOFF_MS = [500, 1000, 2000, 5000, 10000];

export class LiveSocket {
  /**
   * `handlers`: `message(obj)`, `state(name, detail)` with name one of
   * `connecting`, `open`, `retrying`, `refused`, `closed`.
   */
  constructor(path, params, handlers) {
    this.path = path;
    this.params = params;
    this.handlers = handlers;
    this.attempt = 0;
    this.closed = false;
    this.connect();
  }

  connect() {
    if (this.closed) return;
    this.opened = false;
    this.handlers.state?.("connecting");
    const ws = new WebSocket(wsUrl(this.path, this.params), wsProtocols());
    this.ws = ws;
    ws.onopen = () => {
      this.opened = true;
      this.attempt = 0;
      this.handlers.state?.("open");
    };
    ws.onmessage = (event) => {
      let msg;
      try {
        msg = parseJSON(event.data);
      } catch {
        // Not JSON: a server bug; say so (the UI tests fail on console errors).
        console.error("herald: a message that is not JSON", event.data);
        return;
      }
      this.handlers.message(msg);
    };
    ws.onclose = () => this.closedByServer(ws);
  }

  async closedByServer(ws) {
    if (this.closed || ws !== this.ws) return;
    if (!this.opened) {
      const refusal = await this.refusal();
      if (this.closed) return;
      if (refusal) {
        this.handlers.state?.("refused", refusal);
        return;
      }
    }
    const delay = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    this.attempt += 1;
    this.handlers.state?.("retrying", `reconnecting in ${delay / 1000} s`);
    this.timer = setTimeout(() => this.connect(), delay);
  }

  /** Returns the server's error text when it refuses these parameters, else null. */
  async refusal() {
    try {
      await getJSON(this.path, this.params);
    } catch (err) {
      // Valid parameters without an upgrade answer `not_websocket`: that is no refusal.
      if ((err.status === 400 && err.code !== "not_websocket") || err.status === 403) return err.message;
    }
    return null;
  }

  /** Closes for good: no more messages, no reconnection. */
  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.ws) {
      this.ws.onclose = null;
      this.ws.onmessage = null;
      this.ws.close();
    }
    this.handlers.state?.("closed");
  }
}
