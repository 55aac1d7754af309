// The info type registry from /info-types: each type's attributes with inherited ones first,
// so a view can show an attribute's declared type and description.

import { getJSON } from "./api.js";

export class TypeRegistry {
  constructor() {
    this.types = new Map();
    this.loadedAt = 0;
  }

  /** Loads the types (again at most every 2 s, when an unknown type shows up). */
  async load() {
    if (performance.now() - this.loadedAt < 2000 && this.types.size) return;
    this.loadedAt = performance.now();
    const list = await getJSON("/info-types");
    this.types = new Map(list.map((t) => [t.name, t]));
  }

  has(name) {
    return this.types.has(name);
  }

  description(name) {
    return this.types.get(name)?.description || "";
  }

  /** Returns the attributes of `name`, those of its bases first: [{name, type, description}]. */
  attributes(name) {
    const chain = [];
    for (let t = this.types.get(name); t && chain.length < 32; t = this.types.get(t.base)) chain.unshift(t);
    return chain.flatMap((t) => t.attributes || []);
  }
}
