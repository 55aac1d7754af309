// A virtualised list of fixed-height rows: only the rows in view (plus a margin) exist in the
// DOM, so a list of 100,000 records scrolls as fast as one of 100.

const MARGIN_ROWS = 8;

export class VirtualList {
  /** `scroller` is an element with overflow; `renderRow(node, item, index)` fills one row. */
  constructor(scroller, rowHeight, renderRow) {
    this.scroller = scroller;
    this.rowHeight = rowHeight;
    this.renderRow = renderRow;
    this.items = [];
    this.pool = [];
    this.version = 0;
    this.spacer = document.createElement("div");
    this.spacer.className = "vlist-spacer";
    scroller.append(this.spacer);
    scroller.addEventListener("scroll", () => this.scheduleRender(), { passive: true });
  }

  /** Replaces the items (the array is kept by reference; call `invalidate` after changes). */
  setItems(items) {
    this.items = items;
    this.invalidate();
  }

  /** Marks every row for re-rendering (after a selection or content change). */
  invalidate() {
    this.version += 1;
  }

  scheduleRender() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      this.render();
    });
  }

  /** Renders the rows in view now. */
  render() {
    const { items, rowHeight, scroller } = this;
    this.spacer.style.height = `${items.length * rowHeight}px`;
    const top = scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / rowHeight) - MARGIN_ROWS);
    const last = Math.max(first, Math.min(items.length, Math.ceil((top + scroller.clientHeight) / rowHeight) + MARGIN_ROWS));
    while (this.pool.length < last - first) {
      const node = document.createElement("div");
      this.spacer.append(node);
      this.pool.push(node);
    }
    for (let i = first; i < last; i++) this.place(this.pool[i - first], items[i], i);
    for (let j = last - first; j < this.pool.length; j++) this.retire(this.pool[j]);
  }

  /** Hides a spare row and empties it, so that no stale copy of a record stays in the DOM. */
  retire(node) {
    if (node.hidden && node._index === -1) return;
    node.hidden = true;
    node.textContent = "";
    delete node.dataset.index;
    node._index = -1;
    node._item = null;
  }

  place(node, item, index) {
    node.hidden = false;
    if (node._index !== index) {
      node.style.transform = `translateY(${index * this.rowHeight}px)`;
    }
    if (node._item !== item || node._version !== this.version || node._index !== index) {
      this.renderRow(node, item, index);
      node._item = item;
      node._version = this.version;
    }
    node._index = index;
  }

  /** True when the view shows the last row (the list "follows" new rows). */
  atBottom() {
    const s = this.scroller;
    return s.scrollTop + s.clientHeight >= s.scrollHeight - this.rowHeight;
  }

  scrollToBottom() {
    this.spacer.style.height = `${this.items.length * this.rowHeight}px`;
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  /** Scrolls just enough to show row `index`. */
  reveal(index) {
    const s = this.scroller;
    const y = index * this.rowHeight;
    if (y < s.scrollTop) s.scrollTop = y;
    else if (y + this.rowHeight > s.scrollTop + s.clientHeight) {
      s.scrollTop = y + this.rowHeight - s.clientHeight;
    }
  }

  /** Rows that fit in the view. */
  visibleRows() {
    return Math.max(1, Math.floor(this.scroller.clientHeight / this.rowHeight));
  }
}
