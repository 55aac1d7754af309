// Scroll-back into the archive: fetches the newest archived log records before a time.
//
// `/archive/logs` pages ascend by time, so "the newest N before T" is found by choosing a
// window [T - w, T) that fits in one page: narrow it while the page overflows (`next` is not
// null), widen it while it holds too few records, bisecting between the two once both are
// known, and start the next call from the window that worked. A burst denser than one page
// per millisecond is paged through.

import { getJSON, isoTimeFromMs } from "./api.js";

const PAGE_LIMIT = 1000;
const ENOUGH_RECORDS = 200;
const FIRST_WINDOW_MS = 10 * 60 * 1000;
const MAX_WINDOW_MS = 400 * 24 * 3600 * 1000;
const MAX_ATTEMPTS = 24;

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
    let fits = null; // the widest window known to fit in one page, and its records
    let overflows = null; // the narrowest window known not to
    let records = null;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const page = await this.page(toMs - win, toMs);
      if (page.next) {
        overflows = win;
        if (overflows - (fits || 0) <= 1) break;
        win = fits === null ? Math.max(1, Math.floor(win / 4)) : Math.floor((fits + overflows) / 2);
        continue;
      }
      fits = win;
      records = page.records;
      if (records.length >= ENOUGH_RECORDS || win >= MAX_WINDOW_MS) break;
      if (overflows === null) win = Math.min(MAX_WINDOW_MS, win * 8);
      else if (overflows - fits > Math.max(1, fits / 8)) win = Math.floor((fits + overflows) / 2);
      else break;
    }
    if (overflows !== null && !records?.length) {
      fits = overflows;
      records = await this.pageThrough(toMs - overflows, toMs);
    }
    this.windowMs = Math.min(Math.max(fits, 1000), MAX_WINDOW_MS);
    if (!records.length && fits >= MAX_WINDOW_MS) this.exhausted = true;
    return records.filter(this.accept);
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
  async pageThrough(fromMs, toMs) {
    let kept = [];
    let next;
    for (;;) {
      const page = await this.page(fromMs, toMs, next);
      kept = kept.concat(page.records).slice(-PAGE_LIMIT);
      next = page.next;
      if (!next) return kept;
    }
  }
}

/** Returns a RegExp matching a whole string against a glob (`*` any run, `?` one char). */
export function globRegex(glob) {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${body}$`);
}
