// The Information view: namespaces and objects from /ws/info as a tree, values updated in place
// and highlighted on change, declared types and descriptions from /info-types, and checkboxes
// that send numeric attributes to the Charts view.

import { LiveSocket } from "./socket.js";
import { TypeRegistry } from "./types.js";
import { el } from "./dom.js";
import { NUMERIC_TYPES, count, recordTime, value } from "./format.js";

/** Objects are shown with their attributes open when the selection is at most this many. */
const EXPANDED_OBJECTS = 200;
/** Attributes shown (live) on the line of a collapsed object. */
const SUMMARY_ATTRIBUTES = 4;

export class InfoView {
  constructor(root, router) {
    this.router = router;
    this.types = new TypeRegistry();
    this.objects = new Map();
    this.namespaces = new Map();
    this.chosen = new Set();
    this.queue = [];
    this.build(root);
  }

  build(root) {
    const input = (name, label, placeholder, width) =>
      el("label", {}, el("span", { text: label }),
        el("input", { name, placeholder, spellcheck: "false", "aria-label": label, style: `width:${width}` }));
    this.form = el("form", { class: "toolbar", onsubmit: (e) => { e.preventDefault(); this.applySearch(); } },
      input("match", "match (regex)", "Beam\\..*", "14em"), input("type", "type", "T, T+, !T", "8em"),
      el("label", {}, el("span", { text: "combine" }),
        el("select", { name: "combine", "aria-label": "combine" },
          el("option", { value: "", text: "and" }), el("option", { value: "or", text: "or" }))),
      el("button", { type: "submit" }, "Search"), el("span", { class: "spacer" }),
      this.status = el("span", { class: "status" }),
      this.chartButton = el("button", { type: "button", disabled: true, onclick: () => this.chart() }, "Chart selected"));
    this.error = el("div", { class: "error-bar", hidden: true });
    this.tree = el("div", { class: "info-tree" });
    this.tree.addEventListener("change", (e) => this.checked(e));
    this.tree.addEventListener("click", (e) => this.toggled(e));
    root.append(this.form, this.error, this.tree);
  }

  show(params) {
    for (const name of ["match", "type", "combine"]) this.form.elements[name].value = params.get(name) || "";
    this.subscribe(this.search());
  }

  hide() {
    clearTimeout(this.resubscribeTimer);
    this.resubscribeTimer = null;
    this.socket?.close();
    this.socket = null;
  }

  search() {
    const f = this.form.elements;
    return { match: f.match.value.trim(), type: f.type.value.trim(), combine: f.combine.value };
  }

  applySearch() {
    const params = this.search();
    this.router.setParams("info", params);
    this.subscribe(params);
  }

  subscribe(params) {
    this.socket?.close();
    this.objects.clear();
    this.namespaces.clear();
    this.tree.replaceChildren();
    this.queue = []; // changes of the previous search must not land in the new tree
    this.types.load().catch((err) => this.showError(`info types: ${err.message}`));
    this.socket = new LiveSocket("/ws/info", params, {
      message: (msg) => {
        if (msg.type === "info") this.enqueue(msg.changes);
        else if (msg.type === "gap") this.lost(msg);
      },
      state: (state, detail) => {
        if (state === "refused") this.showError(`The server refused the search: ${detail}`);
        else if (state === "retrying") this.showError(`Information stream lost; ${detail}`);
        else if (state === "open") this.showError(null);
      },
    });
  }

  /** Changes were dropped for this socket: values may be stale, so take a new snapshot (at
   * most every 5 s, so a view that cannot keep up does not reconnect in a loop). */
  lost(gap) {
    this.showError(`${count(gap.count)} changes were dropped by the server; taking a new snapshot`);
    if (this.resubscribeTimer) return;
    const wait = Math.max(0, (this.lastResubscribe || 0) + 5000 - Date.now());
    this.resubscribeTimer = setTimeout(() => {
      this.resubscribeTimer = null;
      this.lastResubscribe = Date.now();
      this.subscribe(this.search());
    }, wait);
  }

  showError(text) {
    this.error.hidden = !text;
    this.error.textContent = text || "";
  }

  enqueue(changes) {
    for (const change of changes) this.queue.push(change);
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => this.applyChanges());
  }

  async applyChanges() {
    const changes = this.queue;
    const socket = this.socket;
    this.queue = [];
    if (changes.some((c) => c.object && !this.types.has(c.object.type))) {
      await this.types.load().catch(() => {});
    }
    // Changes that came while the types loaded get a frame of their own.
    this.frame = this.queue.length ? requestAnimationFrame(() => this.applyChanges()) : null;
    if (socket !== this.socket) return; // a new search began meanwhile
    const expand = changes.filter((c) => c.reason === "snapshot").length <= EXPANDED_OBJECTS;
    for (const change of changes) {
      if (change.reason === "deleted") this.remove(change.object.name);
      else this.upsert(change.object, change.reason !== "snapshot", expand);
    }
    this.status.textContent = `${count(this.objects.size)} objects in ${count(this.namespaces.size)} namespaces`;
  }

  namespace(name) {
    let ns = this.namespaces.get(name);
    if (ns) return ns;
    const table = el("table", { class: "info-table" });
    ns = { table, node: el("details", { class: "ns", open: true, "data-ns": name },
      el("summary", {}, el("span", { class: "ns-name", text: name }), el("span", { class: "ns-count" })), table) };
    this.namespaces.set(name, ns);
    const after = [...this.namespaces.keys()].sort().find((n) => n > name);
    this.tree.insertBefore(ns.node, after ? this.namespaces.get(after).node : null);
    return ns;
  }

  upsert(object, flash, expand) {
    let entry = this.objects.get(object.name);
    if (!entry || entry.type !== object.type) {
      if (entry) this.remove(object.name);
      entry = this.createObject(object, expand);
    }
    entry.meta.textContent = `${recordTime(object.time)} · v${object.version}`;
    entry.summary.textContent = Object.entries(object.attributes || {}).slice(0, SUMMARY_ATTRIBUTES)
      .map(([attr, val]) => `${attr}=${value(val)}`).join("  ");
    for (const [attr, val] of Object.entries(object.attributes || {})) {
      let cell = entry.cells.get(attr);
      if (!cell) cell = this.addAttribute(entry, { name: attr, type: "", description: "" }, val);
      const text = value(val);
      if (cell.textContent === text) continue;
      cell.textContent = text;
      if (flash) {
        cell.classList.remove("flash");
        void cell.offsetWidth; // restarts the highlight animation
        cell.classList.add("flash");
      }
    }
  }

  createObject(object, expand) {
    const nsName = object.name.split(".")[0];
    const ns = this.namespace(nsName);
    const body = el("tbody", { class: expand ? "obj" : "obj collapsed", "data-name": object.name });
    const entry = { type: object.type, body, cells: new Map(), meta: el("span", { class: "meta" }),
      summary: el("span", { class: "summary" }) };
    body.append(el("tr", { class: "obj-row" },
      el("td", { colspan: 5 },
        el("button", { class: "twisty", "aria-label": `expand ${object.name}`, "aria-expanded": String(expand) }),
        el("span", { class: "obj-name", text: object.name }),
        el("span", { class: "obj-type", text: object.type, title: this.types.description(object.type) }),
        entry.meta, entry.summary)));
    for (const attr of this.types.attributes(object.type)) this.addAttribute(entry, attr, undefined, object.name);
    this.objects.set(object.name, entry);
    const names = [...this.objects.keys()].filter((n) => n.split(".")[0] === nsName).sort();
    const after = names.find((n) => n > object.name);
    ns.table.insertBefore(body, after ? this.objects.get(after).body : null);
    ns.node.querySelector(".ns-count").textContent = ` ${names.length}`;
    return entry;
  }

  addAttribute(entry, attr, val, objectName) {
    const name = objectName || entry.body.dataset.name;
    const numeric = NUMERIC_TYPES.has(attr.type) || (!attr.type && (typeof val === "number" || typeof val === "bigint"));
    const key = `${name}:${attr.name}`;
    const box = numeric ? el("input", { type: "checkbox", "data-series": key, "aria-label": `chart ${key}`, checked: this.chosen.has(key) }) : "";
    const cell = el("td", { class: "val", "data-attr": attr.name });
    entry.body.append(el("tr", { class: "attr-row" }, el("td", { class: "chk" }, box),
      el("td", { class: "attr", text: attr.name }), cell, el("td", { class: "atype", text: attr.type }),
      el("td", { class: "descr", text: attr.description })));
    entry.cells.set(attr.name, cell);
    return cell;
  }

  remove(name) {
    const entry = this.objects.get(name);
    if (!entry) return;
    entry.body.remove();
    this.objects.delete(name);
    const ns = this.namespaces.get(name.split(".")[0]);
    if (ns && !ns.table.querySelector("tbody")) {
      ns.node.remove();
      this.namespaces.delete(name.split(".")[0]);
    }
  }

  toggled(event) {
    const twisty = event.target.closest(".twisty");
    if (!twisty) return;
    const body = twisty.closest("tbody");
    body.classList.toggle("collapsed");
    twisty.setAttribute("aria-expanded", String(!body.classList.contains("collapsed")));
  }

  checked(event) {
    const key = event.target.dataset?.series;
    if (!key) return;
    if (event.target.checked) this.chosen.add(key);
    else this.chosen.delete(key);
    this.chartButton.disabled = this.chosen.size === 0;
    this.chartButton.textContent = this.chosen.size ? `Chart selected (${this.chosen.size})` : "Chart selected";
  }

  chart() {
    this.router.go("charts", { series: [...this.chosen].join(","), range: "1h" });
  }
}
