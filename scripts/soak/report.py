"""The end of a soak: resource growth, the plot and the summary."""

from __future__ import annotations

import argparse
from typing import Any, Dict, List, Optional, Tuple

from common import info_objects
from sampler import Sampler

GROWTH_LIMIT_PCT = 5.0


def mean(values: List[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def growth(rows: List[Dict[str, Any]], column: str) -> Optional[Dict[str, Any]]:
    """Growth of `column` over the second half of the load phase: the mean of its last k
    samples against the mean of its first k (k = a sixth of that half's samples, at least 3),
    in per cent of the latter."""
    load = [r for r in rows if r["phase"] == "load" and r.get(column) is not None]
    if len(load) < 6:
        return None
    middle = (load[0]["elapsed_s"] + load[-1]["elapsed_s"]) / 2.0
    half = [r for r in load if r["elapsed_s"] >= middle]
    k = max(3, len(half) // 6)
    if len(half) < 2 * k:
        return None
    first = mean([float(r[column]) for r in half[:k]])
    last = mean([float(r[column]) for r in half[-k:]])
    pct = 100.0 * (last - first) / first if first else float("inf")
    return {
        "column": column,
        "samples": len(half),
        "k": k,
        "from_s": half[0]["elapsed_s"],
        "to_s": half[-1]["elapsed_s"],
        "first": first,
        "last": last,
        "pct": pct,
        "ok": pct < GROWTH_LIMIT_PCT,
        "windows": (
            (half[0]["elapsed_s"], half[k - 1]["elapsed_s"]),
            (half[-k]["elapsed_s"], half[-1]["elapsed_s"]),
        ),
    }


def rates(rows: List[Dict[str, Any]], column: str) -> List[Tuple[float, float]]:
    """Per-second rate of a counter column between samples: (elapsed, rate)."""
    out = []
    previous = None
    for row in rows:
        if row.get(column) is None:
            continue
        if previous is not None and row["elapsed_s"] > previous["elapsed_s"]:
            dt = row["elapsed_s"] - previous["elapsed_s"]
            out.append((row["elapsed_s"], (row[column] - previous[column]) / dt))
        previous = row
    return out


def plot(rows: List[Dict[str, Any]], path: str, title: str, checks: List[Dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def series(column: str, scale: float = 1.0) -> Tuple[List[float], List[float]]:
        picked = [r for r in rows if r.get(column) is not None]
        return [r["elapsed_s"] / 60.0 for r in picked], [float(r[column]) * scale for r in picked]

    fig, axes = plt.subplots(4, 1, figsize=(11, 12), sharex=True)
    rss, fds, cpu, flow = axes
    rss.plot(*series("rss_kib", 1.0 / 1024), color="tab:blue", label="RSS")
    rss.plot(*series("rss_anon_kib", 1.0 / 1024), color="tab:blue", ls="--", lw=0.8, label="anon")
    rss.plot(*series("rss_file_kib", 1.0 / 1024), color="tab:blue", ls=":", lw=0.8, label="file")
    rss.set_ylabel("server RSS (MiB)")
    rss.legend(loc="upper left", fontsize=8, framealpha=0.8)
    fds.plot(*series("fds"), color="tab:green", drawstyle="steps-post")
    fds.set_ylabel("open fds")
    cpu.plot(*series("cpu_pct"), color="tab:red", label="server")
    cpu.plot(*series("load_cpu_pct"), color="tab:gray", alpha=0.7, label="load generators")
    cpu.set_ylabel("CPU (% of one core)")
    cpu.legend(loc="upper left", fontsize=8, framealpha=0.8)
    for column, colour, label in (
        ("records_in", "tab:purple", "records in /s"),
        ("deliveries", "tab:olive", "deliveries /s"),
        ("dropped", "tab:orange", "dropped /s (all queues)"),
    ):
        points = rates(rows, column)
        flow.plot([t / 60.0 for t, _ in points], [v for _, v in points], color=colour, label=label)
    flow.set_ylabel("records/s")
    flow.legend(loc="upper left", fontsize=8, framealpha=0.8)
    queued = flow.twinx()
    queued.plot(*series("queued_bytes", 1.0 / 1024), color="tab:cyan", alpha=0.6)
    queued.set_ylabel("queued (KiB)", color="tab:cyan")
    flow.set_xlabel("minutes")
    for check in checks:
        axis = rss if check["column"] == "rss_kib" else fds
        for start, end in check["windows"]:
            axis.axvspan(start / 60.0, end / 60.0, color="gold", alpha=0.3)
        axis.set_title(
            f"{check['column']}: {check['pct']:+.2f} % over the second half "
            f"(means of the shaded samples) — {'ok' if check['ok'] else 'OVER 5 %'}",
            fontsize=9,
        )
    load = [r["elapsed_s"] / 60.0 for r in rows if r["phase"] == "load"]
    if load:
        for axis in axes:
            axis.axvspan(min(load), max(load), color="gray", alpha=0.06)
            axis.grid(True, alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def fmt_kib(kib: Optional[float]) -> str:
    return "?" if kib is None else f"{kib / 1024:.1f} MiB"


def summarize_accounts(accounted: List[Dict[str, Any]]) -> List[str]:
    lines = []
    groups: Dict[str, List[Dict[str, Any]]] = {}
    for a in accounted:
        group = "slow " + a["tag"] if a["tag"].startswith("slow") else f"{a['kind']} churn"
        groups.setdefault(group, []).append(a)
    for group, items in sorted(groups.items()):
        owed = sum(a.get("owed", 0) for a in items)
        got = sum(a.get("delivered", 0) for a in items)
        lost = sum(a.get("lost", 0) for a in items)
        gaps = sum(a.get("gaps", 0) for a in items)
        bad = sum(1 for a in items if a["problems"])
        ended = sum(1 for a in items if a.get("ended") == "disconnect")
        late = sum(a.get("out_of_order", 0) for a in items)
        behind = max(a.get("most_behind", 0) for a in items)
        lines.append(
            f"{group}: {len(items)} subscriptions ({ended} ended by disconnecting), owed {owed} = "
            f"delivered {got} + lost {lost} in {gaps} GAPs; "
            + ("exact" if not bad else f"{bad} NOT exact")
            + (
                f"; {late} records came after one with a higher number (up to {behind} higher)"
                if late
                else ""
            )
        )
    for a in accounted:
        for problem in a["problems"][:5]:
            lines.append(f"  {a['tag']}: {problem}")
    return lines


def summary(
    title: str,
    args: argparse.Namespace,
    cfg: Dict[str, Any],
    sampler: Sampler,
    results: Dict[str, Dict[str, Any]],
    accounted: List[Dict[str, Any]],
    checks: List[Tuple[str, bool, List[str]]],
    load_start: float,
    load_end: float,
) -> str:
    rows = sampler.rows
    load = [r for r in rows if r["phase"] == "load"]
    seconds = max(1e-9, load_end - load_start)

    def delta(column: str) -> int:
        picked = [r[column] for r in load if r.get(column) is not None]
        return picked[-1] - picked[0] if len(picked) > 1 else 0

    span = max(1e-9, load[-1]["elapsed_s"] - load[0]["elapsed_s"]) if len(load) > 1 else 1e-9
    cpu = [r["cpu_pct"] for r in load if r.get("cpu_pct") is not None]
    load_cpu = [r["load_cpu_pct"] for r in load if r.get("load_cpu_pct") is not None]
    rss = [r["rss_kib"] for r in rows if r.get("rss_kib") is not None]
    fds = [r["fds"] for r in rows if r.get("fds") is not None]
    producers = results.get("producers", {}).get("producers", {})
    sent = sum(p.get("sent", 0) for p in producers.values())
    archive = results.get("archive", {})
    latencies = archive.get("latencies", {})
    churn = [a for a in accounted if not a["tag"].startswith("slow")]
    lines = [
        title,
        "=" * len(title),
        f"server: {args.server_bin} pid {args.server_pid}, native {args.native}, http {args.http}",
        f"output: {args.out}",
        f"sampling every {sampler.interval:g} s, {len(rows)} samples ({len(load)} under load)",
        "",
        "Load (all loopback, measured over the load phase):",
        f"  producers: {cfg['producers']} × {cfg['rate']:g} records/s at 10 priorities with a "
        f"{cfg['storm_factor']:g}× storm of {cfg['storm_seconds']:g} s every "
        f"{cfg['storm_every']:g} s; sent {sent} records = {sent / seconds:.0f}/s",
        f"  info: {len(info_objects())} objects of 2 types, "
        f"{results.get('info', {}).get('updates', 0)} updates = "
        f"{results.get('info', {}).get('updates', 0) / seconds:.0f}/s",
        f"  server records_in {delta('records_in') / span:.0f}/s, deliveries "
        f"{delta('deliveries') / span:.0f}/s, dropped {delta('dropped') / span:.1f}/s "
        f"(the slow subscribers)",
        f"  subscribers coming and going: {len(churn)} subscriptions "
        f"({cfg['churn_log']} log + {cfg['churn_info']} info threads); slow: "
        + ", ".join(f"{s['name']} {s['policy']} at {s['rate']:g} records/s" for s in cfg["slow"]),
        f"  archive/monitor queries: {archive.get('rounds', 0)} rounds, "
        + ", ".join(
            f"{what} mean {1000 * sum(v) / len(v):.0f} ms max {1000 * max(v):.0f} ms"
            for what, v in sorted(latencies.items())
            if v
        ),
        "",
        "Server resources:",
        f"  RSS {fmt_kib(rss[0] if rss else None)} at start → "
        f"{fmt_kib(load[-1]['rss_kib'] if load else None)} at the end of the load "
        f"(peak {fmt_kib(max(rss) if rss else None)}; at the end "
        f"{fmt_kib(load[-1].get('rss_anon_kib') if load else None)} anonymous, "
        f"{fmt_kib(load[-1].get('rss_file_kib') if load else None)} file-backed)",
        f"  fds {fds[0] if fds else '?'} → {load[-1]['fds'] if load else '?'} "
        f"(max {max(fds) if fds else '?'})",
        f"  CPU under load: mean {mean(cpu):.1f} %, max {max(cpu or [0]):.1f} % of one "
        f"core; load generators mean {mean(load_cpu):.1f} %",
        "",
        "Checks:",
    ]
    for name, ok, details in checks:
        lines.append(f"  [{'PASS' if ok else 'FAIL'}] {name}")
        lines += [f"      {d}" for d in details]
    lines += [
        "",
        "Files: samples.csv, soak.png, server.stderr, summary.txt, accounting.json,",
        "server-memory.txt (/proc status, smaps_rollup, largest mappings at the end of the load),",
        "workers/ (each load process's log and result)",
        "",
    ]
    return "\n".join(lines)
