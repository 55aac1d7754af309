// Chart data: the points of each series (from archive buckets and live values) and their
// merge into uPlot's column arrays [x, mean₁, min₁, max₁, mean₂, …] on one shared time axis.

import { getJSON } from "./api.js";

/** Parses `A.b:value,C.d:x` into [{name, field, key}]; a missing field means `value`. */
export function parseSeries(text) {
  return (text || "").split(",").map((s) => s.trim()).filter(Boolean).map((key) => {
    const at = key.lastIndexOf(":");
    const name = at > 0 ? key.slice(0, at) : key;
    const field = at > 0 ? key.slice(at + 1) : "value";
    return { name, field, key: `${name}:${field}` };
  });
}

/** Fetches one series as buckets over [fromMs, toMs): points [t_s, mean, min, max]. */
export async function fetchBuckets(series, fromMs, toMs, buckets, signal) {
  const page = await getJSON(`/archive/samples/${encodeURIComponent(series.name)}`, {
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    buckets,
    field: series.field,
  }, signal);
  const points = [];
  for (const b of page.buckets || []) {
    const f = b.fields?.[series.field];
    if (!f || !f.count || typeof f.mean !== "number") continue;
    points.push([(b.start_ns + b.end_ns) / 2e9, f.mean, f.min, f.max]);
  }
  return points;
}

/** Merges per-series points into uPlot data with nulls where a series has no point at an x. */
export function mergeSeries(pointLists) {
  const xs = [...new Set(pointLists.flatMap((pts) => pts.map((p) => p[0])))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const data = [xs];
  for (const pts of pointLists) {
    const cols = [1, 2, 3].map(() => new Array(xs.length).fill(null));
    for (const p of pts) {
      const i = index.get(p[0]);
      for (let c = 0; c < 3; c++) cols[c][i] = p[c + 1];
    }
    data.push(...cols);
  }
  return data;
}

/** Returns the visible rows of uPlot data as CSV: time, then mean/min/max of each series. */
export function toCsv(data, series, fromS, toS) {
  const head = ["time", ...series.flatMap((s) => [`${s.key} mean`, `${s.key} min`, `${s.key} max`])];
  const lines = [head.map(csvCell).join(",")];
  for (let i = 0; i < data[0].length; i++) {
    const x = data[0][i];
    if (x < fromS || x > toS) continue;
    const cells = [new Date(x * 1000).toISOString()];
    for (let c = 1; c < data.length; c++) cells.push(data[c][i] ?? "");
    lines.push(cells.map(csvCell).join(","));
  }
  return lines.join("\n") + "\n";
}

function csvCell(v) {
  const s = String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
