// The Logs view: a live, virtualised table fed by /ws/records with server-side filters,
// pause/resume into a buffer, gap notices inline, and scroll-back into /archive/logs.

import { LiveSocket } from "./socket.js";
import { VirtualList } from "./vlist.js";
import { ArchiveHistory, globRegex } from "./history.js";
import { el, typing } from "./dom.js";
import { count, gapText, priorityClass, recordTime, stormText } from "./format.js";
import { renderDetail } from "./logdetail.js";

const ROW_HEIGHT = 20;
/** Rows kept while following the live stream; the oldest are discarded beyond it. */
const LIVE_CAP = 50000;
/** Rows kept while the user reads history (scrolled away from the bottom). */
const READING_CAP = 150000;
const RENDER_INTERVAL_MS = 100;
/** Records held while paused; beyond it the oldest held are let go (and counted). */
const PAUSE_CAP = 100000;
const FILTERS = ["priority", "subject", "type", "audience", "host", "process", "text", "kinds"];
const ARCHIVE_FILTERS = ["priority", "subject", "host", "process", "text"];

const recordKey = (r) => `${r.time_ns}:${r.seq}`;

/** The badge before a log-storm record's text (a collapsed row's count), or null. */
function stormBadge(fields) {
  const storm = stormText(fields);
  return storm && el("span", { class: "repeat", text: storm.badge, title: storm.title });
}

export class LogsView {
  constructor(root, router) {
    this.router = router;
    this.filters = {};
    this.rows = [];
    this.buffer = [];
    this.pending = [];
    this.paused = false;
    this.follow = true;
    this.lastScrollTop = 0;
    this.received = 0;
    this.dropped = 0;
    this.ratePerSecond = 0;
    this.countThisSecond = 0;
    this.lastRender = 0;
    this.build(root);
    setInterval(() => this.tickSecond(), 1000);
  }

  build(root) {
    const inputs = {};
    const field = (name, label, placeholder, width) => {
      inputs[name] = el("input", { name, placeholder, spellcheck: "false", style: `width:${width}`,
        "aria-label": label, title: label, onkeydown: (e) => e.key === "Enter" && this.applyFilters() });
      inputs[name].addEventListener("change", () => this.applyFilters());
      return el("label", {}, el("span", { text: label }), inputs[name]);
    };
    inputs.kinds = el("select", { name: "kinds", "aria-label": "kinds", onchange: () => this.applyFilters() },
      el("option", { value: "", text: "log" }), el("option", { value: "log,message", text: "log + message" }),
      el("option", { value: "log,message,info", text: "all kinds" }));
    this.inputs = inputs;
    this.pauseButton = el("button", { class: "pause", title: "Pause / resume (Space)", onclick: () => this.togglePause() }, "Pause");
    this.followButton = el("button", { hidden: true, title: "Follow the live stream (End)", onclick: () => this.followNow() }, "↓ Follow");
    this.status = el("span", { class: "status" });
    this.sampled = el("span", { class: "sampled", hidden: true });
    this.error = el("div", { class: "error-bar", hidden: true });
    const toolbar = el("form", { class: "toolbar", onsubmit: (e) => { e.preventDefault(); this.applyFilters(); } },
      field("priority", "priority", ">=INFO", "8.5em"), field("subject", "subject", "ANTENNA.*", "9em"),
      field("type", "type", "*", "4.5em"), field("audience", "audience", "operator", "5.5em"),
      field("host", "host", "", "5.5em"), field("process", "process", "", "5.5em"),
      field("text", "text", "contains", "8em"), el("label", {}, el("span", { text: "kinds" }), inputs.kinds),
      el("span", { class: "spacer" }), this.sampled, this.status, this.followButton, this.pauseButton);
    const header = el("div", { class: "log-row log-head" },
      ["time (UTC)", "priority", "subject", "origin", "text"].map((t) => el("span", { text: t })));
    this.top = el("div", { class: "history-note", hidden: true });
    this.scroller = el("div", { class: "log-scroller", tabindex: "0", role: "grid", "aria-label": "log records" });
    this.detail = el("div", { class: "log-detail", hidden: true });
    root.append(toolbar, this.error, header, this.top, this.scroller, this.detail);
    this.list = new VirtualList(this.scroller, ROW_HEIGHT, (node, item, i) => this.renderRow(node, item, i));
    this.list.setItems(this.rows);
    this.scroller.addEventListener("scroll", () => this.scrolled(), { passive: true });
    new ResizeObserver(() => this.resized()).observe(this.scroller);
    this.scroller.addEventListener("click", (e) => this.clicked(e));
    root.addEventListener("keydown", (e) => this.key(e));
  }

  /** Called by the router with the URL's parameters each time the view is shown. */
  show(params) {
    this.visible = true;
    const next = Object.fromEntries(FILTERS.map((k) => [k, params.get(k) || ""]));
    for (const k of FILTERS) this.inputs[k].value = next[k];
    if (!this.socket || JSON.stringify(next) !== JSON.stringify(this.filters)) this.connect(next);
    this.render();
    this.scroller.focus({ preventScroll: true });
  }

  hide() {
    this.visible = false;
  }

  applyFilters() {
    const next = Object.fromEntries(FILTERS.map((k) => [k, this.inputs[k].value.trim()]));
    if (JSON.stringify(next) === JSON.stringify(this.filters)) return;
    this.router.setParams("logs", next);
    this.connect(next);
  }

  connect(filters) {
    this.socket?.close();
    this.filters = filters;
    this.rows.length = 0;
    this.buffer = [];
    this.pending = [];
    this.selected = null;
    this.detail.hidden = true;
    this.follow = true;
    this.liveStartMs = null;
    this.received = 0;
    this.dropped = 0;
    const params = { ...filters, kinds: filters.kinds || "log" };
    const archiveParams = Object.fromEntries(ARCHIVE_FILTERS.map((k) => [k, filters[k]]));
    this.history = params.kinds.split(",").includes("log")
      ? new ArchiveHistory(archiveParams, this.archiveAccepts(filters)) : null;
    this.socket = new LiveSocket("/ws/records", params, {
      message: (msg) => this.message(msg),
      state: (state, detail) => this.socketState(state, detail),
    });
    this.list.invalidate();
    this.render();
  }

  /** The live filters the archive route does not take (type, audience), applied here. */
  archiveAccepts(filters) {
    const type = filters.type ? globRegex(filters.type) : null;
    const audience = filters.audience ? filters.audience.split(",").map((a) => a.trim()) : null;
    return (r) => (!type || type.test(r.type || "")) &&
      (!audience || !r.audience?.length || r.audience.some((a) => audience.includes(a)));
  }

  socketState(state, detail) {
    this.error.hidden = state !== "refused" && state !== "retrying";
    this.error.textContent = state === "refused" ? `The server refused the filter: ${detail}` : `Live stream lost; ${detail}`;
    this.connection = state;
    this.updateStatus();
  }

  message(msg) {
    if (msg.type === "hello") {
      const when = recordTime(new Date(msg.time_ns / 1e6).toISOString());
      const text = this.liveStartMs === null ? `live stream started ${when}`
        : `live stream resumed ${when} (what came meanwhile is in the archive)`;
      if (this.liveStartMs === null) this.liveStartMs = msg.time_ns / 1e6;
      this.router.serverName(msg.server);
      this.enqueue([{ rowType: "marker", text }]);
    } else if (msg.type === "records") {
      this.received += msg.records.length;
      this.countThisSecond += msg.records.length;
      this.enqueue(msg.records);
    } else if (msg.type === "gap") {
      this.dropped += msg.count;
      this.enqueue([{ rowType: "gap", gap: msg }]);
    }
  }

  enqueue(items) {
    const target = this.paused ? this.buffer : this.pending;
    for (const item of items) target.push(item);
    if (!this.paused) return this.scheduleRender();
    if (this.buffer.length > PAUSE_CAP) {
      const excess = this.buffer.length - PAUSE_CAP * 0.9;
      this.pauseDiscarded += this.buffer.splice(0, excess).filter((r) => !r.rowType).length;
    }
    this.updateStatus();
  }

  scheduleRender() {
    if (this.renderTimer) return;
    const wait = Math.max(0, this.lastRender + RENDER_INTERVAL_MS - performance.now());
    this.renderTimer = setTimeout(() => {
      this.renderTimer = null;
      this.render();
    }, wait);
  }

  /** Appends what arrived, trims the oldest rows beyond the cap, and draws (≤ 10 times/s). */
  render() {
    this.lastRender = performance.now();
    for (const item of this.pending) this.rows.push(item);
    this.pending = [];
    const cap = this.follow ? LIVE_CAP : READING_CAP;
    if (this.rows.length > cap) {
      const excess = this.rows.length - cap;
      this.rows.splice(0, excess);
      this.scroller.scrollTop -= excess * ROW_HEIGHT;
      if (this.history) this.history.exhausted = false;
    }
    if (!this.visible) return;
    this.rendersTotal = (this.rendersTotal || 0) + 1;
    if (this.follow) this.list.scrollToBottom();
    this.list.render();
    this.updateStatus();
    if (this.scroller.scrollTop < ROW_HEIGHT * 5) this.loadOlder();
  }

  renderRow(node, item, index) {
    node.className = "log-row";
    node.replaceChildren();
    if (item.rowType) {
      node.classList.add(item.rowType === "gap" ? "gap-row" : "marker-row");
      node.append(el("span", { text: item.rowType === "gap" ? gapText(item.gap) : item.text }));
      return;
    }
    const o = item.origin || {};
    node.classList.add(priorityClass(item.priority));
    if (item === this.selected) node.classList.add("selected");
    node.dataset.index = index;
    node.append(el("span", { class: "t", text: recordTime(item.time) }),
      el("span", { class: "p", text: item.priority }), el("span", { text: item.subject }),
      el("span", { text: [o.host, o.process].filter(Boolean).join(" ") }),
      el("span", { class: "x", title: item.text }, stormBadge(item.fields), item.text));
  }

  /** Follows the stream at the bottom; stops following only when the user scrolls up
   * (a change of layout that leaves the view short of the bottom does not count). */
  scrolled() {
    const top = this.scroller.scrollTop;
    const follow = this.list.atBottom() || (this.follow && top >= this.lastScrollTop - 1);
    this.lastScrollTop = top;
    if (follow !== this.follow) {
      this.follow = follow;
      this.updateStatus();
    }
    if (top < ROW_HEIGHT * 5) this.loadOlder();
  }

  resized() {
    if (this.follow && this.visible) this.list.scrollToBottom();
    this.list.render();
  }

  /** Prepends the newest archived records older than the oldest row shown. */
  async loadOlder() {
    const history = this.history;
    if (!history || history.exhausted || this.loading || this.liveStartMs === null) return;
    this.loading = true;
    this.top.hidden = false;
    this.top.textContent = "loading older records from the archive…";
    const oldest = this.rows.find((r) => !r.rowType);
    // +1 ms: the archive's `to` is exclusive and in ms; records of that ms already shown are
    // dropped as duplicates, and if a page held nothing else the next try ends before that ms.
    let toMs = oldest ? Math.floor(oldest.time_ns / 1e6) + 1 : this.liveStartMs + 1;
    try {
      for (let attempt = 0; attempt < 8 && !history.exhausted; attempt++) {
        const older = await history.before(toMs);
        if (history !== this.history || this.prepend(older) || !older.length) break;
        toMs = Math.floor(older[0].time_ns / 1e6);
      }
      if (history !== this.history) return;
      this.top.hidden = true;
      if (history.exhausted) {
        this.rows.unshift({ rowType: "marker", text: "start of the archive for this filter" });
        this.scroller.scrollTop += ROW_HEIGHT;
        this.list.render();
      }
    } catch (err) {
      this.top.textContent = `archive: ${err.message} (scroll up to try again)`;
    } finally {
      this.loading = false;
    }
  }

  prepend(older) {
    const known = new Set(this.rows.slice(0, 2000).filter((r) => !r.rowType).map(recordKey));
    const fresh = older.filter((r) => !known.has(recordKey(r)));
    if (!fresh.length) return 0;
    this.rows.unshift(...fresh);
    this.scroller.scrollTop += fresh.length * ROW_HEIGHT;
    this.list.render();
    this.updateStatus();
    return fresh.length;
  }

  togglePause() {
    this.paused = !this.paused;
    if (this.paused) this.pauseDiscarded = 0;
    if (!this.paused && this.pauseDiscarded) {
      this.pending.push({ rowType: "gap", gap: { count: this.pauseDiscarded, local: true } });
    }
    if (!this.paused) {
      for (const item of this.buffer) this.pending.push(item);
      this.buffer = [];
      this.scheduleRender();
    }
    this.updateStatus();
  }

  followNow() {
    this.follow = true;
    this.list.scrollToBottom();
    this.render();
  }

  tickSecond() {
    this.ratePerSecond = this.countThisSecond;
    this.countThisSecond = 0;
    if (this.visible) this.updateStatus();
  }

  updateStatus() {
    const parts = [`${count(this.received)} received`, `${count(this.ratePerSecond)}/s`];
    if (this.dropped) parts.push(`${count(this.dropped)} dropped`);
    if (this.paused && this.pauseDiscarded) parts.push(`${count(this.pauseDiscarded)} let go while paused`);
    if (this.connection && this.connection !== "open") parts.push(this.connection);
    this.status.textContent = parts.join(" · ");
    this.pauseButton.textContent = this.paused ? `Resume (${count(this.buffer.length)} new)` : "Pause";
    this.pauseButton.classList.toggle("active", this.paused);
    this.followButton.hidden = this.follow;
    // More records per second than the screen shows at 10 frames/s scroll past unseen.
    const shown = this.list.visibleRows() * (1000 / RENDER_INTERVAL_MS);
    const sampled = !this.paused && this.follow && this.ratePerSecond > shown;
    this.sampled.hidden = !sampled;
    this.sampled.textContent = `${count(this.ratePerSecond)} records/s, showing sampled (all counted, newest ${count(LIVE_CAP)} kept; pause to read)`;
  }

  clicked(event) {
    const row = event.target.closest(".log-row");
    if (!row || row.dataset.index === undefined) return;
    this.select(Number(row.dataset.index));
  }

  select(index) {
    const item = this.rows[index];
    if (!item || item.rowType) return;
    this.selected = this.selected === item ? null : item;
    this.detail.hidden = !this.selected;
    if (this.selected) renderDetail(this.detail, item, () => this.select(index));
    this.list.invalidate();
    this.list.render();
  }

  /** Keys: Space pause, End follow, ↑/↓ move the selection, Escape closes the detail. */
  key(event) {
    if (typing(event) || event.ctrlKey || event.metaKey || event.altKey) return;
    const index = this.selected ? this.rows.indexOf(this.selected) : -1;
    const step = { ArrowDown: 1, ArrowUp: -1, j: 1, k: -1 }[event.key];
    if (event.key === " ") this.togglePause();
    else if (event.key === "End") this.followNow();
    else if (event.key === "Escape" && this.selected) this.select(index);
    else if (step && index >= 0) {
      let next = index + step;
      while (this.rows[next]?.rowType) next += step;
      if (!this.rows[next]) return;
      this.selected = null;
      this.select(next);
      this.list.reveal(next);
    } else return;
    event.preventDefault();
  }
}
