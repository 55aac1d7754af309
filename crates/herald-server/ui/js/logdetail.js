// The detail pane of one log record: every field, origin detail and value, as key/value rows.

import { el } from "./dom.js";
import { priorityClass, value } from "./format.js";

const HEAD = ["time", "received", "priority", "kind", "subject", "type", "audience", "seq", "id"];

/** Fills `pane` with the record's fields; `close` is called by the close button. */
export function renderDetail(pane, record, close) {
  const rows = [];
  const add = (key, val, cls) => {
    if (val === undefined || val === null || val === "" || (Array.isArray(val) && !val.length)) return;
    rows.push(el("tr", {}, el("th", { text: key }), el("td", { class: cls, text: value(val) })));
  };
  for (const key of HEAD) add(key, record[key], key === "priority" ? priorityClass(record.priority) : null);
  for (const [key, val] of Object.entries(record.origin || {})) add(`origin.${key}`, val);
  for (const [key, val] of Object.entries(record.fields || {})) add(`fields.${key}`, val);
  for (const [key, val] of Object.entries(record)) {
    if (!HEAD.includes(key) && !["origin", "fields", "text", "time_ns"].includes(key)) add(key, val);
  }
  pane.replaceChildren(
    el("div", { class: "detail-head" },
      el("span", { text: `${record.subject} · ${record.priority}` }),
      el("button", { title: "Close (Escape)", onclick: close }, "✕")),
    el("pre", { class: "detail-text", text: record.text || "" }),
    el("table", { class: "kv" }, el("tbody", {}, rows)));
}
