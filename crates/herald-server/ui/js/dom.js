// Tiny DOM helpers: build elements without innerHTML (record text is never parsed as HTML).

/** Creates `<tag>` with attributes (`class`, `title`, `on*` handlers, …) and children. */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, val] of Object.entries(attrs || {})) {
    if (val === undefined || val === null || val === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), val);
    else if (key === "class") node.className = val;
    else if (key === "text") node.textContent = val;
    else node.setAttribute(key, val === true ? "" : val);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** Triggers a download of `blob` (or a data: URL) as `filename`. */
export function download(filename, blobOrUrl) {
  const url = typeof blobOrUrl === "string" ? blobOrUrl : URL.createObjectURL(blobOrUrl);
  const link = el("a", { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  if (typeof blobOrUrl !== "string") setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** True when a key event comes from a text field (shortcuts must leave typing alone). */
export function typing(event) {
  const t = event.target;
  return t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
}
