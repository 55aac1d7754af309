// Formatting shared by every view: priorities, times, counts, values. Pure functions, no DOM.

/** Returns the CSS class of a priority name: `p-error`, `p-info`, … */
export function priorityClass(name) {
  return "p-" + String(name || "info").toLowerCase();
}

const integer = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 });

/** Formats a count with thousands separators: `1,234`. */
export function count(n) {
  return integer.format(n || 0);
}

/** Formats a rate with at most one decimal: `1,234.5`. */
export function rate(n) {
  return decimal.format(n || 0);
}

/** Formats a record time (ISO 8601 text from the server) as `2026-11-21 09:48:40.025` (UTC). */
export function recordTime(iso) {
  if (!iso) return "";
  return iso.replace("T", " ").replace(/Z$/, "");
}

/** Formats a Date as ISO 8601 UTC with milliseconds, the form the archive routes take. */
export function isoTime(date) {
  return new Date(date).toISOString();
}

/** Formats milliseconds as `3d 04:05:06`. */
export function duration(ms) {
  const s = Math.floor((ms || 0) / 1000);
  const days = Math.floor(s / 86400);
  const hms = [Math.floor(s / 3600) % 24, Math.floor(s / 60) % 60, s % 60]
    .map((v) => String(v).padStart(2, "0")).join(":");
  return days ? `${days}d ${hms}` : hms;
}

/** A JSON.stringify replacer that writes a BigInt (a u64 value) as its digits. */
function exactBigInt(key, value) {
  if (typeof value !== "bigint") return value;
  return JSON.rawJSON ? JSON.rawJSON(String(value)) : String(value);
}

/** Formats an attribute or field value for a table cell. */
export function value(v) {
  if (v === null || v === undefined) return "";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : String(+v.toPrecision(10));
  if (typeof v === "bigint") return String(v);
  if (typeof v === "object") return JSON.stringify(v, exactBigInt);
  return String(v);
}

/**
 * The badge of a log-storm record (docs/interfaces.md, Log storms): `×996` on a summary
 * (`repeated 996 times from … to …` as its title), `storm` on the record that starts one;
 * null for any other record.
 */
export function stormText(fields) {
  const state = fields?.["herald.storm"];
  if (!state) return null;
  if (state === "collapsing") {
    const window = fields["herald.storm_window_ms"];
    return { badge: "storm", title: `identical records from here on collapse into one summary per ${window / 1000} s` };
  }
  const n = fields["herald.repeated"] ?? 0;
  const total = fields["herald.repeated_total"];
  if (state === "ended" && !Number(n)) {
    return { badge: "storm over", title: `storm over: ${total} identical records were collapsed into summaries` };
  }
  const span = `from ${fields["herald.repeated_from"] ?? "?"} to ${fields["herald.repeated_to"] ?? "?"}`;
  const title = `repeated ${n} more times ${span}` + (state === "ended" ? `; storm over, ${total} in all` : "");
  return { badge: `×${count(Number(n))}${state === "ended" ? " (end)" : ""}`, title };
}

/** The gap notice text: `⚠ 1,234 records dropped (DEBUG 1,200, INFO 34)`. */
export function gapText(gap) {
  if (gap.local) {
    return `⚠ ${count(gap.count)} records let go while paused (more than the view holds; they are in the archive)`;
  }
  const parts = Object.entries(gap.priorities || {})
    .filter(([, n]) => n > 0)
    .map(([name, n]) => `${name} ${count(n)}`);
  const which = parts.length ? ` (${parts.join(", ")})` : "";
  const seqs = gap.first_seq !== undefined ? ` · seq ${gap.first_seq}–${gap.last_seq}` : "";
  if (gap.member) {
    // Lost on the way from another server — a cluster member, a mirror's source (its
    // sequence numbers).
    return `⚠ ${count(gap.count)} records lost on the way from server ${gap.member}${which}${seqs} of ${gap.member}`;
  }
  return `⚠ ${count(gap.count)} records dropped by the server for this view${which}${seqs}`;
}

/** Attribute types that hold numbers, so can be charted. */
export const NUMERIC_TYPES = new Set([
  "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "float", "double",
]);
