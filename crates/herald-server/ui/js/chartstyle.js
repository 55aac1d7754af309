// uPlot options for Herald charts (colours from the page's CSS variables, UTC axis, drag to
// zoom, mean line with a min/max band per series) and the PNG export of a chart.

/* global uPlot */

const PALETTE = ["#4e9fe5", "#e5a04e", "#5cc48c", "#d66b8f", "#a58ae6", "#4fc3c9", "#c9b74f", "#e56b5a"];

function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

/** Returns the colour of series `i`. */
export function seriesColor(i) {
  return PALETTE[i % PALETTE.length];
}

/** uPlot options: per series a mean line and hidden min/max lines filled as a band. */
export function chartOptions(series, width, height, onZoom) {
  const fg = cssVar("--muted"), grid = cssVar("--grid");
  const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, font: "11px system-ui, sans-serif" };
  const uSeries = [{ label: "time (UTC)" }];
  const bands = [];
  const scales = { x: { time: true } };
  const axes = [{ ...axis, values: timeLabels }];
  // Every series has its own y scale, so a beam current in mA and a lifetime in hours both
  // use the plot's height; the first two get an axis (left, right) in their colour.
  series.forEach((s, i) => {
    const color = seriesColor(i);
    const scale = `y${i}`;
    scales[scale] = {};
    if (i < 2) {
      axes.push({ ...axis, scale, side: i === 0 ? 3 : 1, size: 60, stroke: color,
        grid: { ...axis.grid, show: i === 0 } });
    }
    uSeries.push({ label: s.key, scale, stroke: color, width: 1.5 },
      { label: `${s.key} min`, scale, stroke: "transparent", points: { show: false } },
      { label: `${s.key} max`, scale, stroke: "transparent", points: { show: false } });
    bands.push({ series: [3 + 3 * i, 2 + 3 * i], fill: color + "30" });
  });
  if (axes.length === 1) axes.push({ ...axis, size: 60 });
  return {
    width, height, series: uSeries, bands, scales, axes,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"),
    cursor: { drag: { x: true, y: false, setScale: false } },
    legend: { live: true },
    hooks: {
      ready: [(u) => hideBandLegends(u)],
      setSelect: [(u) => {
        if (u.select.width < 4) return;
        const a = u.posToVal(u.select.left, "x"), b = u.posToVal(u.select.left + u.select.width, "x");
        u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
        onZoom(a * 1000, b * 1000);
      }],
    },
  };
}

/** 24-hour UTC tick labels, with seconds for short spans and the date for long ones. */
function timeLabels(u, splits) {
  const span = u.scales.x.max - u.scales.x.min;
  return splits.map((s) => {
    const iso = new Date(s * 1000).toISOString();
    if (span > 2 * 86400) return iso.slice(5, 10);
    if (span > 86400 / 2) return `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
    return span < 600 ? iso.slice(11, 19) : iso.slice(11, 16);
  });
}

/** The legend shows one row per series: its min and max rows are hidden. */
function hideBandLegends(u) {
  u.root.querySelectorAll(".u-legend .u-series").forEach((row, i) => {
    if (i > 0 && (i - 1) % 3 !== 0) row.style.display = "none";
  });
}

/** Returns the chart as a PNG data URL: background, the plot canvas, and a legend line. */
export function chartPng(chart, series) {
  const plot = chart.ctx.canvas;
  const ratio = plot.width / chart.width;
  const legend = Math.round(24 * ratio);
  const canvas = document.createElement("canvas");
  canvas.width = plot.width;
  canvas.height = plot.height + legend;
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = cssVar("--bg") || "#fff";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(plot, 0, legend);
  ctx.font = `${Math.round(12 * ratio)}px system-ui, sans-serif`;
  ctx.textBaseline = "middle";
  let x = Math.round(60 * ratio);
  series.forEach((s, i) => {
    ctx.fillStyle = seriesColor(i);
    ctx.fillRect(x, legend / 2 - 4 * ratio, 10 * ratio, 8 * ratio);
    ctx.fillStyle = cssVar("--fg") || "#000";
    ctx.fillText(s.key, x + 14 * ratio, legend / 2);
    x += ctx.measureText(s.key).width + 40 * ratio;
  });
  return canvas.toDataURL("image/png");
}
