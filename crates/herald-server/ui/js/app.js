// The application shell: tabs, and the router that keeps each view's state in the URL hash
// (`#/logs?priority=%3E%3DWARNING&subject=ANTENNA.*`) so a view can be shared and reloaded.

import { queryString } from "./api.js";
import { showSignOut } from "./auth.js";
import { typing } from "./dom.js";
import { LogsView } from "./logs.js";
import { InfoView } from "./info.js";
import { ChartsView } from "./charts.js";
import { ServerView } from "./server.js";

const VIEWS = { logs: LogsView, info: InfoView, charts: ChartsView, server: ServerView };
const DEFAULT_VIEW = "logs";

class App {
  constructor() {
    this.views = new Map();
    this.current = null;
    window.addEventListener("hashchange", () => this.route());
    document.addEventListener("keydown", (e) => this.key(e));
    this.route();
  }

  /** Shows the view named in the hash with its parameters. */
  route() {
    const [path, query] = location.hash.replace(/^#\/?/, "").split("?");
    const name = VIEWS[path] ? path : DEFAULT_VIEW;
    const params = new URLSearchParams(query || "");
    if (this.current && this.current !== name) this.view(this.current).hide();
    this.current = name;
    for (const tab of document.querySelectorAll("nav a[data-view]")) {
      tab.setAttribute("aria-current", tab.dataset.view === name ? "page" : "false");
    }
    for (const section of document.querySelectorAll("main > section")) section.hidden = section.id !== name;
    this.view(name).show(params);
  }

  /** Returns the view called `name`, creating it on first use. */
  view(name) {
    if (!this.views.has(name)) {
      this.views.set(name, new VIEWS[name](document.getElementById(name), this));
    }
    return this.views.get(name);
  }

  /** Records a view's state in the URL without reloading it. */
  setParams(name, params) {
    history.replaceState(null, "", `#/${name}${queryString(params)}`);
  }

  /** Switches to view `name` with `params`. */
  go(name, params) {
    location.hash = `#/${name}${queryString(params)}`;
  }

  /** Shows the server's name (from the monitor or a socket's hello) in the header and title. */
  serverName(name) {
    if (!name || name === this.name) return;
    this.name = name;
    document.getElementById("server-name").textContent = name;
    document.title = `${name} · Herald`;
  }

  /** 1–4 switch views; / focuses the first field of the view. */
  key(event) {
    if (typing(event) || event.ctrlKey || event.metaKey || event.altKey) return;
    const names = Object.keys(VIEWS);
    const index = Number(event.key) - 1;
    if (names[index]) {
      this.go(names[index], Object.fromEntries(new URLSearchParams(this.current === names[index] ? location.hash.split("?")[1] : "")));
    } else if (event.key === "/") {
      document.querySelector(`#${this.current} input`)?.focus();
    } else return;
    event.preventDefault();
  }
}

window.herald = new App();
showSignOut();
