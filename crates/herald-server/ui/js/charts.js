// The Charts view: uPlot time series of info attributes from /archive/samples, one bucket per
// pixel (mean line, min/max band), continued live from /ws/info; drag to zoom, pan, presets,
// CSV and PNG export. Series and range live in the URL.

import { LiveSocket } from "./socket.js";
import { getJSON, regexEscape } from "./api.js";
import { el, download, typing } from "./dom.js";
import { count } from "./format.js";
import { fetchBuckets, mergeSeries, parseSeries, toCsv } from "./series.js";
import { chartOptions, chartPng } from "./chartstyle.js";

const PRESETS = { "15m": 15 * 60e3, "1h": 3600e3, "6h": 6 * 3600e3, "24h": 24 * 3600e3 };
const LIVE_REFETCH_MS = 60e3;

export class ChartsView {
  constructor(root, router) {
    this.router = router;
    this.series = [];
    this.points = [];
    this.generation = 0;
    this.build(root);
    new ResizeObserver(() => this.resized()).observe(this.holder);
  }

  build(root) {
    this.addInput = el("input", { list: "chart-names", placeholder: "Name.object:attribute", "aria-label": "add series", spellcheck: "false", style: "width:18em" });
    this.names = el("datalist", { id: "chart-names" });
    const preset = (key) => el("button", { type: "button", "data-range": key, onclick: () => this.setRange(key) }, key.replace("m", " min").replace("h", " h"));
    this.chips = el("span", { class: "chips" });
    this.status = el("span", { class: "status" });
    const toolbar = el("form", { class: "toolbar", onsubmit: (e) => { e.preventDefault(); this.addSeries(); } },
      el("label", {}, el("span", { text: "series" }), this.addInput), this.names,
      el("button", { type: "submit" }, "Add"), this.chips, el("span", { class: "spacer" }),
      el("span", { class: "group" }, Object.keys(PRESETS).map(preset)),
      el("span", { class: "group" },
        el("button", { type: "button", title: "Pan left (←)", onclick: () => this.pan(-0.5) }, "◀"),
        el("button", { type: "button", title: "Zoom out (−)", onclick: () => this.zoomOut() }, "−"),
        el("button", { type: "button", title: "Pan right (→)", onclick: () => this.pan(0.5) }, "▶")),
      el("span", { class: "group" },
        el("button", { type: "button", onclick: () => this.exportCsv() }, "CSV"),
        el("button", { type: "button", onclick: () => this.exportPng() }, "PNG")));
    this.error = el("div", { class: "error-bar", hidden: true });
    this.holder = el("div", { class: "chart-holder", tabindex: "0", "aria-label": "chart; drag to zoom, arrows to pan" });
    this.empty = el("div", { class: "empty", text: "Choose numeric attributes in Information, or add a series above." });
    root.append(toolbar, this.error, el("div", { class: "chart-status" }, this.status), this.holder, this.empty);
    root.addEventListener("keydown", (e) => this.key(e));
  }

  show(params) {
    this.visible = true;
    this.series = parseSeries(params.get("series"));
    const from = Date.parse(params.get("from") || ""), to = Date.parse(params.get("to") || "");
    this.range = from < to ? { fromMs: from, toMs: to } : { live: PRESETS[params.get("range")] || PRESETS["1h"], key: params.get("range") || "1h" };
    this.renderChips();
    this.rebuild();
    this.fillNames();
    clearInterval(this.liveTimer); // shown again without a hide (same view, new hash)
    this.liveTimer = setInterval(() => this.liveTick(), 1000);
  }

  hide() {
    this.visible = false;
    clearInterval(this.liveTimer);
    this.socket?.close();
    this.socket = null;
  }

  saveUrl() {
    const params = { series: this.series.map((s) => s.key).join(",") };
    if (this.range.live) params.range = this.range.key;
    else Object.assign(params, { from: new Date(this.range.fromMs).toISOString(), to: new Date(this.range.toMs).toISOString() });
    this.router.setParams("charts", params);
  }

  /** The time window shown: [from, to] in ms. */
  window() {
    if (!this.range.live) return [this.range.fromMs, this.range.toMs];
    const now = Date.now();
    return [now - this.range.live, now];
  }

  rebuild() {
    this.chart?.destroy();
    this.chart = null;
    this.empty.hidden = this.series.length > 0;
    this.subscribeLive();
    if (!this.series.length) return;
    const width = Math.max(300, this.holder.clientWidth);
    this.chart = new uPlot(chartOptions(this.series, width, this.holderHeight(), (a, b) => this.zoomTo(a, b)),
      mergeSeries(this.series.map(() => [])), this.holder);
    this.load();
  }

  holderHeight() {
    return Math.max(200, this.holder.clientHeight - 40);
  }

  /** Queries the archive for the window at one bucket per pixel and redraws. */
  async load() {
    const generation = ++this.generation;
    const [fromMs, toMs] = this.window();
    const buckets = Math.max(10, Math.min(4000, Math.round(this.chart.bbox.width / devicePixelRatio || 600)));
    this.status.textContent = "loading…";
    try {
      const lists = await Promise.all(this.series.map((s) => fetchBuckets(s, fromMs, toMs, buckets)));
      if (generation !== this.generation || !this.chart) return;
      // Live values that came while the archive was asked may be newer than its answer
      // (not archived yet when it read): they stay, if they are of these series.
      const keys = this.series.map((s) => s.key).join("\n");
      if (keys === this.pointsKeys) {
        lists.forEach((pts, i) => {
          const last = pts.length ? pts[pts.length - 1][0] : -Infinity;
          for (const point of this.points[i] || []) if (point[0] > last) pts.push(point);
        });
      }
      this.points = lists;
      this.pointsKeys = keys;
      this.loadedAt = Date.now();
      this.error.hidden = true;
      this.redraw();
    } catch (err) {
      if (generation !== this.generation) return;
      this.error.hidden = false;
      this.error.textContent = `archive: ${err.message}`;
    }
  }

  redraw() {
    const [fromMs, toMs] = this.window();
    const data = mergeSeries(this.points);
    this.chart.setData(data, false);
    this.chart.setScale("x", { min: fromMs / 1000, max: toMs / 1000 });
    const n = this.points.reduce((sum, pts) => sum + pts.length, 0);
    const mode = this.range.live ? `last ${this.range.key}, live` : `${new Date(fromMs).toISOString()} – ${new Date(toMs).toISOString()}`;
    const empty = this.series.filter((s, i) => !this.points[i]?.length).map((s) => s.key);
    const none = empty.length ? ` · no samples in this range for ${empty.join(", ")}` : "";
    this.status.textContent = `${count(n)} points · ${mode} · drag to zoom${none}`;
    for (const b of document.querySelectorAll("[data-range]")) b.classList.toggle("active", b.dataset.range === this.range.key);
  }

  subscribeLive() {
    this.socket?.close();
    this.socket = null;
    if (!this.series.length || !this.visible) return;
    const match = [...new Set(this.series.map((s) => regexEscape(s.name)))].join("|");
    this.socket = new LiveSocket("/ws/info", { match }, { message: (msg) => msg.type === "info" && this.liveChanges(msg.changes) });
  }

  /** Appends live values (each a point with min = max = the value) while the range is live. */
  liveChanges(changes) {
    if (!this.range.live || !this.chart) return;
    for (const { reason, object } of changes) {
      if (reason === "deleted" || !object) continue;
      this.series.forEach((s, i) => {
        const raw = object.attributes?.[s.field];
        if (object.name !== s.name || (typeof raw !== "number" && typeof raw !== "bigint")) return;
        const v = Number(raw);
        const t = object.time_ns / 1e9;
        const pts = this.points[i];
        if (pts && (!pts.length || pts[pts.length - 1][0] < t)) pts.push([t, v, v, v]);
      });
    }
    this.dirty = true;
  }

  liveTick() {
    if (!this.range.live || !this.chart || !this.points.length) return;
    if (Date.now() - this.loadedAt > LIVE_REFETCH_MS) return void this.load();
    const fromS = this.window()[0] / 1000;
    for (const pts of this.points) while (pts.length && pts[0][0] < fromS) pts.shift();
    this.dirty = false;
    this.redraw();
  }

  setRange(key) {
    this.range = { live: PRESETS[key], key };
    this.saveUrl();
    this.load();
  }

  zoomTo(fromMs, toMs) {
    if (toMs - fromMs < 10) return;
    this.range = { fromMs: Math.round(fromMs), toMs: Math.round(toMs) };
    this.saveUrl();
    this.load();
  }

  pan(fraction) {
    const [a, b] = this.window();
    const shift = (b - a) * fraction;
    if (this.range.live && shift > 0) return;
    this.zoomTo(a + shift, b + shift);
  }

  zoomOut() {
    const [a, b] = this.window();
    const mid = (a + b) / 2, half = b - a;
    this.zoomTo(mid - half, Math.min(Date.now(), mid + half));
  }

  key(event) {
    if (typing(event)) return;
    const action = { ArrowLeft: () => this.pan(-0.5), ArrowRight: () => this.pan(0.5), "-": () => this.zoomOut() }[event.key];
    if (!action) return;
    action();
    event.preventDefault();
  }

  resized() {
    if (!this.chart || !this.visible) return;
    const width = Math.max(300, this.holder.clientWidth);
    if (Math.abs(width - this.chart.width) < 2 && Math.abs(this.holderHeight() - this.chart.height) < 2) return;
    this.chart.setSize({ width, height: this.holderHeight() });
    clearTimeout(this.resizeTimer);
    this.resizeTimer = setTimeout(() => this.load(), 300);
  }

  addSeries() {
    const added = parseSeries(this.addInput.value).filter((s) => !this.series.some((t) => t.key === s.key));
    if (!added.length) return;
    this.series.push(...added);
    this.addInput.value = "";
    this.saveUrl();
    this.renderChips();
    this.rebuild();
  }

  removeSeries(key) {
    this.series = this.series.filter((s) => s.key !== key);
    this.saveUrl();
    this.renderChips();
    this.rebuild();
  }

  renderChips() {
    this.chips.replaceChildren(...this.series.map((s) => el("span", { class: "chip" }, s.key,
      el("button", { type: "button", "aria-label": `remove ${s.key}`, onclick: () => this.removeSeries(s.key) }, "✕"))));
  }

  /** Offers `name:attribute` of numeric attributes of existing objects in the series input. */
  async fillNames() {
    try {
      const objects = await getJSON("/info");
      const keys = objects.flatMap((o) => Object.entries(o.attributes || {})
        .filter(([, v]) => typeof v === "number" || typeof v === "bigint").map(([a]) => `${o.name}:${a}`));
      this.names.replaceChildren(...keys.slice(0, 2000).map((k) => el("option", { value: k })));
    } catch { /* the list is a convenience */ }
  }

  exportCsv() {
    if (!this.chart) return;
    const { min, max } = this.chart.scales.x;
    download("herald-chart.csv", new Blob([toCsv(this.chart.data, this.series, min, max)], { type: "text/csv" }));
  }

  exportPng() {
    if (!this.chart) return;
    download("herald-chart.png", chartPng(this.chart, this.series));
  }
}
