// The Server view: the /monitor snapshot every 2 s — rates, connections, closes, the archive
// writer, the cluster's routes (on a member of one), and every client's subscriptions with
// queue depth, deliveries and drops.

import { getJSON } from "./api.js";
import { el } from "./dom.js";
import { count, duration, rate } from "./format.js";

const REFRESH_MS = 2000;

export class ServerView {
  constructor(root, router) {
    this.router = router;
    this.summary = el("div", { class: "cards" });
    this.archive = el("div", { class: "cards" });
    this.closes = el("div", { class: "cards" });
    this.routes = el("tbody");
    this.namespaces = el("tbody");
    this.clusterTitle = el("h3", { text: "Cluster" });
    this.namespacesTable = el("table", { class: "grid namespaces" },
      el("thead", {}, el("tr", {}, ["namespace", "names", "owner", "ownership"].map((h) => el("th", { text: h })))),
      this.namespaces);
    this.cluster = el("div", { class: "cluster" }, this.clusterTitle,
      el("table", { class: "grid routes" },
        el("thead", {}, el("tr", {}, ["route to member", "address", "direction", "state", "records in", "in/s",
          "records out", "out/s", "queue", "dropped", "round trip", "their interests"].map((h) => el("th", { text: h })))),
        this.routes),
      this.namespacesTable);
    this.mirrorRows = el("tbody");
    this.mirrors = el("div", { class: "mirrors" }, el("h3", { text: "Mirrors" }),
      el("table", { class: "grid mirrors" },
        el("thead", {}, el("tr", {}, ["mirror", "state", "sent", "waiting", "lag", "dropped", "round trip"]
          .map((h) => el("th", { text: h })))),
        this.mirrorRows));
    this.clients = el("tbody");
    this.updated = el("span", { class: "status" });
    this.error = el("div", { class: "error-bar", hidden: true });
    root.append(
      el("div", { class: "toolbar" }, el("h2", { text: "Server" }), el("span", { class: "spacer" }), this.updated),
      this.error, this.summary, el("h3", { text: "Archive" }), this.archive,
      el("h3", { text: "Connections closed, by reason" }), this.closes, this.cluster, this.mirrors,
      el("h3", { text: "Clients and subscriptions" }),
      el("table", { class: "grid clients" },
        el("thead", {}, el("tr", {}, ["client", "peer", "records in", "sub", "filter", "policy", "depth",
          "delivered", "dropped", "drops by reason"].map((h) => el("th", { text: h })))),
        this.clients));
  }

  show() {
    this.refresh();
    clearInterval(this.timer); // shown again without a hide (same view, new hash)
    this.timer = setInterval(() => this.refresh(), REFRESH_MS);
  }

  hide() {
    clearInterval(this.timer);
  }

  async refresh() {
    try {
      const m = await getJSON("/monitor");
      this.error.hidden = true;
      this.render(m);
      this.updated.textContent = `updated ${new Date().toISOString().slice(11, 19)} UTC · every ${REFRESH_MS / 1000} s`;
    } catch (err) {
      this.error.hidden = false;
      this.error.textContent = `monitor: ${err.message}`;
    }
  }

  render(m) {
    this.router.serverName(m.server);
    this.summary.replaceChildren(
      card("server", m.server), card("version", m.version), card("uptime", duration(m.uptime_ms)),
      card("records in /s", rate(m.rate_in)), card("delivered /s", rate(m.rate_out)),
      card("records in", count(m.records_in)), card("deliveries", count(m.deliveries)),
      card("connections", count(m.connections)), card("subscriptions", count(m.subscriptions)),
      card("dropped", count(m.dropped), m.dropped > 0),
      ...Object.entries(m.drops || {}).filter(([, n]) => n > 0).map(([k, n]) => card(`dropped: ${k}`, count(n), true)),
      card("rejected frames", count(m.rejected_frames), m.rejected_frames > 0));
    const archive = m.archive && typeof m.archive === "object" ? Object.entries(m.archive) : [];
    this.archive.replaceChildren(...(archive.length ? archive.map(([k, v]) =>
      card(k, typeof v === "number" ? count(v) : String(v), /dropped|error|failed/.test(k) && v > 0))
      : [el("span", { class: "muted", text: "no archive section in the monitor" })]));
    this.closes.replaceChildren(...Object.entries(m.closes || {}).map(([k, v]) => card(k, count(v), v > 0 && k !== "client_closed" && k !== "closed")));
    this.renderCluster(m.cluster);
    this.renderMirrors(m.mirrors || [], m.mirrored || []);
    this.clients.replaceChildren(...(m.clients || []).flatMap(clientRows));
  }

  renderMirrors(mirrors, mirrored) {
    this.mirrors.hidden = !mirrors.length && !mirrored.length;
    const ms = (us) => us ? `${(us / 1000).toFixed(2)} ms` : "";
    this.mirrorRows.replaceChildren(
      ...mirrors.map((r) => el("tr", { class: r.dropped > 0 ? "drops" : "", "data-mirror": r.to },
        el("td", { text: `to ${r.to}${r.tls ? " (TLS)" : ""}` }), el("td", { text: r.up ? "up" : "down" }),
        el("td", { class: "num", text: count(r.records_out) }), el("td", { class: "num", text: count(r.queue) }),
        el("td", { class: "num lag", text: `${count(r.lag_ms)} ms` }), el("td", { class: "num dropped", text: count(r.dropped) }),
        el("td", { class: "num", text: ms(r.rtt_us) }))),
      ...mirrored.map((f) => el("tr", { "data-source": f.source },
        el("td", { colspan: 7, text: `read-only mirror of ${f.source}: subjects ${(f.subjects || []).join(" ")}; objects ${(f.objects || []).join(" ")}` }))));
  }

  renderCluster(cluster) {
    this.cluster.hidden = !cluster;
    if (!cluster) return;
    const known = (cluster.members || []).length;
    const guarded = [cluster.secret ? "authenticated by the cluster secret" : "not authenticated", cluster.tls ? "over TLS" : ""]
      .filter(Boolean).join(", ");
    this.clusterTitle.textContent = `Cluster ${cluster.name}: member ${cluster.me?.name} · ${known} others known · ${count(cluster.interests)} local interests announced · routes ${guarded}`;
    const routes = cluster.routes || [];
    const state = (r) => r.up ? "up" : `down ${Math.round((r.down_ms || 0) / 1000)} s`;
    const rtt = (r) => r.rtt_us ? `${(r.rtt_us / 1000).toFixed(2)} ms` : "";
    this.routes.replaceChildren(...(routes.length ? routes.map((r) =>
      el("tr", { class: r.dropped > 0 ? "drops" : "", "data-member": r.member },
        el("td", { text: r.member }), el("td", { text: r.address }), el("td", { text: r.direction }),
        el("td", { class: "state", text: state(r) }),
        el("td", { class: "num", text: count(r.records_in) }), el("td", { class: "num", text: count(Math.round(r.rate_in || 0)) }),
        el("td", { class: "num", text: count(r.records_out) }), el("td", { class: "num", text: count(Math.round(r.rate_out || 0)) }),
        el("td", { class: "num", text: count(r.queue) }), el("td", { class: "num dropped", text: count(r.dropped) }),
        el("td", { class: "num rtt", text: rtt(r) }),
        el("td", { class: "num", text: count(r.interests) })))
      : [el("tr", {}, el("td", { colspan: 12, class: "muted", text: "no route up: no other member reached yet" }))]));
    const namespaces = cluster.namespaces || [];
    this.namespacesTable.hidden = !namespaces.length;
    this.namespaces.replaceChildren(...namespaces.map((n) =>
      el("tr", { "data-namespace": n.name },
        el("td", { text: n.name }), el("td", { text: (n.names || []).join(" ") }),
        el("td", { class: "owner", text: n.owner || "none now" }),
        el("td", { text: n.leased ? "lease (Cassandra)" : "static" }))));
  }
}

function card(label, val, alarm) {
  return el("div", { class: alarm ? "card alarm" : "card" }, el("div", { class: "label", text: label }),
    el("div", { class: "value", text: val ?? "" }));
}

function clientRows(c) {
  const subs = c.subscriptions || [];
  const lead = (n) => [
    el("td", { rowspan: n }, c.name || `#${c.id}`,
      c.identity ? el("div", { class: "muted identity", text: `identity ${c.identity}` }) : null,
      c.filtered ? el("div", { class: "muted", text: `${count(c.filtered)} held back by host/process/text` }) : null),
    el("td", { rowspan: n, text: c.peer }),
    el("td", { rowspan: n, class: "num", text: count(c.records_in) })];
  if (!subs.length) return [el("tr", {}, lead(1), el("td", { colspan: 7, class: "muted", text: "no subscriptions" }))];
  return subs.map((s, i) => {
    const drops = Object.entries(s.drops || {}).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${count(n)}`).join(", ");
    return el("tr", { class: s.dropped > 0 ? "drops" : "", "data-client": c.name },
      i === 0 ? lead(subs.length) : [], el("td", { class: "num", text: s.id }), el("td", { class: "filter", text: s.filter }),
      el("td", { text: s.policy }), el("td", { class: "num", text: count(s.depth) }),
      el("td", { class: "num", text: count(s.delivered) }), el("td", { class: "num dropped", text: count(s.dropped) }),
      el("td", { text: drops }));
  });
}
