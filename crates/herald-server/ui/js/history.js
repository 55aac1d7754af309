// Scroll-back into the archive: fetches the newest archived log records before a time.
//
// `/archive/logs` pages ascend by time, so "the newest N before T" is found by choosing a
// window [T - w, T) small enough that it fits in one page: narrow it while the page overflows
// (`next` is not null), widen it while it holds too few records, and remember the window that
// worked for the next call. A burst denser than one page per millisecond is paged through.

import { getJSON, isoTimeFromMs } from "./api.js";

const PAGE_LIMIT = 1000;
const ENOUGH_RECORDS = 200;
const FIRST_WINDOW_MS = 10 * 60 * 1000;
const MAX_WINDOW_MS = 400 * 24 * 3600 * 1000;

export class ArchiveHistory {
  /** `filters`: the archive's query parameters (priority, subject, host, process, text). */
  constructor(filters, accept) {
    this.filters = filters;
    this.accept = accept || (() => true);
    this.windowMs = FIRST_WINDOW_MS;
    this.exhausted = false;
  }

  /** Returns archived records before `toMs` (exclusive), ascending; [] once nothing is left. */
  async before(toMs) {
    let win = this.windowMs;
    let narrowed = false;
    for (;;) {
      const fromMs = toMs - win;
      const page = await this.page(fromMs, toMs);
      if (page.next && win > 1) {
        win = Math.max(1, Math.floor(win / 4));
        narrowed = true;
        continue;
      }
      let records = page.records;
      if (page.next) records = await this.pageThrough(fromMs, toMs, page);
      if (records.length < ENOUGH_RECORDS && !narrowed && win < MAX_WINDOW_MS) {
        win = Math.min(MAX_WINDOW_MS, win * 8);
        if (records.length === 0) continue;
        // a few records: keep them, and look further back with a wider window next time
      }
      this.windowMs = Math.min(Math.max(win, 1000), MAX_WINDOW_MS);
      if (records.length === 0 && win >= MAX_WINDOW_MS) this.exhausted = true;
      return records.filter(this.accept);
    }
  }

  page(fromMs, toMs, after) {
    return getJSON("/archive/logs", {
      ...this.filters,
      from: isoTimeFromMs(fromMs),
      to: isoTimeFromMs(toMs),
      limit: PAGE_LIMIT,
      after,
    });
  }

  /** Pages through a window denser than one page; keeps the newest PAGE_LIMIT records. */
  async pageThrough(fromMs, toMs, first) {
    let kept = first.records;
    let next = first.next;
    while (next) {
      const page = await this.page(fromMs, toMs, next);
      kept = kept.concat(page.records).slice(-PAGE_LIMIT);
      next = page.next;
    }
    return kept;
  }
}

/** Returns a RegExp matching a whole string against a glob (`*` any run, `?` one char). */
export function globRegex(glob) {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${body}$`);
}
