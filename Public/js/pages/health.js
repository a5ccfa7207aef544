// Health: every check run now (not recorded: recording is the timer's job), with its status and what
// to do; a chart per deadline the checks watch (days left for the Apple client secret, the membership and
// the transfer window; the key's age) against its warning and critical lines, over a chosen range; and the
// recorded runs as a table. Charts are inline SVG built with createElementNS (never markup), drawn at the
// width of their card so that their text keeps its size on a phone, each with a title, a description and
// its values as a table for keyboards and screen readers.
import { card, clear, el, errorBanner, pill, table, time, timeText, withTimes } from "../dom.js";

const SVG = "http://www.w3.org/2000/svg";
const LIMITS = ["50", "200", "1000"];
const RANGES = [["7", "7 days"], ["30", "30 days"], ["90", "90 days"]];
// A chart draws at most this many points: a longer series keeps the worst value of each slice of time.
const MAX_POINTS = 120;
// A deadline figure's horizontal padding and border, in px (console.css: .deadline-card).
const CHART_INSET = 23;

export async function render(container, api) {
  const current = el("div", { id: "health-current", "aria-live": "polite" });
  const deadlines = el("div", { id: "health-deadlines" });
  const history = el("div", { id: "health-history" });
  const again = el("button", { type: "button", class: "secondary", id: "health-run", text: "Run the checks again" });
  const limit = el("select", { id: "health-limit", "aria-label": "How many recorded runs" }, LIMITS.map((n) => el("option", { value: n, text: `last ${n} runs` })));
  const chosen = RANGES.some(([days]) => days === api.params.get("days")) ? api.params.get("days") : "30";
  const range = el("select", { id: "health-range" }, RANGES.map(([days, label]) => el("option", { value: days, text: label, selected: days === chosen })));
  range.value = chosen;

  async function runNow() {
    again.disabled = true;
    try {
      clear(current).append(renderReport(await api.get("/api/health")));
    } catch (error) {
      clear(current).append(errorBanner(error));
    } finally {
      again.disabled = false;
    }
  }
  let answer = null;
  function drawDeadlines() {
    if (answer) clear(deadlines).append(renderDeadlines(answer, deadlines.clientWidth));
  }
  async function loadDeadlines() {
    try {
      answer = await api.get("/api/health/deadlines", { days: range.value });
      drawDeadlines();
    } catch (error) {
      clear(deadlines).append(errorBanner(error));
    }
  }
  async function loadHistory() {
    try {
      clear(history).append(renderHistory(await api.get("/api/health/history", { limit: limit.value })));
    } catch (error) {
      clear(history).append(errorBanner(error));
    }
  }
  again.addEventListener("click", runNow);
  limit.addEventListener("change", loadHistory);
  range.addEventListener("change", () => {
    window.history.replaceState(null, "", `#/health?days=${range.value}`);
    loadDeadlines();
  });
  // Charts are drawn in pixels of their card: drawn again when the card's width changes.
  let lastWidth = 0, pending = 0;
  const onResize = () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => {
      if (Math.abs(deadlines.clientWidth - lastWidth) < 8) return;
      lastWidth = deadlines.clientWidth;
      drawDeadlines();
    });
  };
  window.addEventListener("resize", onResize);

  container.append(el("h1", { text: "Health" }),
    card("Checks now", el("p", { class: "muted", text: "Run now against the store; not recorded. The scheduled health timer records its runs." }), current, again),
    card("Deadlines", el("p", { class: "muted", text: "What the recorded runs found, against the lines the checks warn and alarm at." }),
      el("div", { class: "actions" }, el("label", { for: "health-range", text: "Time range" }), range), deadlines),
    card("Recorded runs", el("div", { class: "actions" }, limit), history));
  lastWidth = deadlines.clientWidth;
  await Promise.all([runNow(), loadDeadlines(), loadHistory()]);
  return () => window.removeEventListener("resize", onResize);
}

// Problems first, worst first; the OK checks folded by family (the id's first part: store, accounts, apple, gates…).
const WORST_FIRST = ["critical", "warning", "unknown"];

function renderReport(report) {
  const problems = report.checks.filter((c) => c.status !== "ok")
    .sort((a, b) => WORST_FIRST.indexOf(a.status) - WORST_FIRST.indexOf(b.status));
  const families = new Map();
  for (const check of report.checks.filter((c) => c.status === "ok")) {
    const family = check.id.split(".")[0];
    families.set(family, [...(families.get(family) ?? []), check]);
  }
  return el("div", {},
    el("p", { class: "switch-state" }, pill(report.status), ` ${report.checks.length} checks in ${report.durationMilliseconds} ms at `, time(report.at)),
    el("h3", { text: problems.length ? `Needs attention (${problems.length})` : "Needs attention" }),
    problems.length
      ? el("div", { id: "health-problems" }, table(["Check", "Status", "Summary", "What to do"], problems.map((c) => [
        el("code", { text: c.id }), pill(c.status), withTimes(c.summary), c.action ?? "—",
      ]), { caption: "Checks that are not OK, worst first" }))
      : el("p", { class: "banner ok", id: "health-problems", text: "Nothing: every check is OK." }),
    el("h3", { text: `OK (${report.checks.length - problems.length})` }),
    el("div", { id: "health-ok" }, [...families].map(([family, checks]) => el("details", { class: "family", "data-family": family },
      el("summary", {}, el("code", { text: family }), ` — ${checks.length} OK`),
      table(["Check", "Summary"], checks.map((c) => [el("code", { text: c.id }), withTimes(c.summary)]), { caption: `${family} checks that are OK` })))));
}

/** How to get recorded runs: the timer, or one by hand. */
function timerSteps() {
  return [
    el("pre", {}, el("code", { text: "systemctl enable --now gatehouse-health.timer" })),
    el("p", { class: "muted" }, "The units are ", el("code", { text: "ops/systemd/gatehouse-health.{service,timer}" }), " (or the line in ",
      el("code", { text: "ops/cron/gatehouse-health" }), "). To record one now by hand: ", el("code", { text: "gatehouse health --record" }),
      ". The runbook: ", el("code", { text: "ops/runbooks/health-alerts.md" }), "."),
  ];
}

function renderHistory(runs) {
  if (runs.length === 0) {
    return el("div", { id: "health-history-empty" },
      el("p", { text: "No recorded run yet. The health timer records one every hour; on the server, enable it with:" }), ...timerSteps());
  }
  return el("div", {},
    table(["At", "Status", "OK", "Not OK", "Took"], runs.map((run) => {
      const bad = run.checks.filter((c) => c.status !== "ok");
      return [time(run.at), pill(run.status), String(run.checks.length - bad.length),
        bad.length ? el("ul", { class: "samples" }, bad.map((c) => el("li", {}, pill(c.status), " ", el("code", { text: c.id }), `: ${c.summary}`))) : "—",
        `${run.durationMilliseconds} ms`];
    }), { caption: "Recorded health runs, newest first" }));
}

// MARK: - the deadline charts

/** What a deadline check's id names, and how its value reads. */
function describe(series) {
  const id = series.check;
  const left = (v) => `${formatDays(v)} left`;
  const old = (v) => `${formatDays(v)} old`;
  if (id.startsWith("apple.secret.")) return { title: "Apple client secret", detail: id.slice("apple.secret.".length), reads: left };
  if (id === "gates.membership") return { title: "Apple Developer membership", detail: "until renewal", reads: left };
  if (id === "apple.transfer") return { title: "Apple transfer window", detail: "until Apple's migration endpoints stop answering", reads: left };
  if (id === "apple.key_age") return { title: "Apple key age", detail: "the active key, since activated", reads: old };
  return { title: id, detail: "", reads: series.lowerIsWorse ? left : old };
}

function formatDays(value) {
  const rounded = Math.abs(value) < 10 ? Math.round(value * 10) / 10 : Math.round(value);
  return `${rounded} ${Math.abs(rounded) === 1 ? "day" : "days"}`;
}

function renderDeadlines(answer, width) {
  if (answer.series.length === 0) {
    return el("div", { id: "health-deadlines-empty" },
      el("p", { text: `No deadline in the runs recorded over the last ${answer.days} days. The health timer records each run's deadlines (the Apple client secret, the membership, a transfer window, the key's age) once Apple has them; on the server, enable it with:` }),
      ...timerSteps());
  }
  const end = Date.parse(answer.since) + answer.days * 86_400_000;
  // One column on a phone, two from 760 px of card, three from 1140 px; the chart fills its column less the
  // figure's padding and border (CHART_INSET), so it is drawn at the size it is shown.
  const columns = width >= 1140 ? 3 : width >= 760 ? 2 : 1;
  const chartWidth = Math.max(240, Math.floor((width - (columns - 1) * 16) / columns) - CHART_INSET);
  return el("div", { class: `deadline-grid columns-${columns}` },
    answer.series.map((series, index) => deadlineChart(series, { start: Date.parse(answer.since), end, width: chartWidth, index })));
}

function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

const RANK = { ok: 0, warning: 1, unknown: 2, critical: 3 };

/** At most `MAX_POINTS` points: each slice of time keeps its worst value (the status first, then the value). */
function thin(points, lowerIsWorse) {
  if (points.length <= MAX_POINTS) return points;
  const size = points.length / MAX_POINTS;
  const kept = [];
  for (let i = 0; i < MAX_POINTS; i += 1) {
    const slice = points.slice(Math.floor(i * size), Math.floor((i + 1) * size));
    kept.push(slice.reduce((worst, p) => (RANK[p.status] > RANK[worst.status]
      || (RANK[p.status] === RANK[worst.status] && (lowerIsWorse ? p.value < worst.value : p.value > worst.value)) ? p : worst)));
  }
  kept[kept.length - 1] = points[points.length - 1];
  return kept;
}

/** Round steps for an axis from `low` to `high`: about four ticks. */
function ticks(low, high) {
  const span = Math.max(1, high - low);
  const raw = span / 4;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw);
  const values = [];
  for (let v = Math.ceil(low / step) * step; v <= high + 1e-9; v += step) values.push(Math.round(v * 100) / 100);
  return values;
}

const dateFormat = new Intl.DateTimeFormat("en", { month: "short", day: "numeric", timeZone: "UTC" });

/** One deadline: its line over the range, its warning and critical lines, a label that follows the pointer or keys. */
function deadlineChart(series, { start, end, width, index }) {
  const { title, detail, reads } = describe(series);
  const points = thin(series.points, series.lowerIsWorse);
  const latest = series.points[series.points.length - 1];
  const height = 200, left = 48, right = 16, top = 14, bottom = 30;
  const plotWidth = width - left - right, plotHeight = height - top - bottom;
  const values = points.map((p) => p.value).concat([series.warning, series.critical].filter((v) => v !== null && v !== undefined));
  let low = Math.min(0, ...values), high = Math.max(...values);
  high += Math.max(1, (high - low) * 0.08);
  const x = (t) => left + ((t - start) / (end - start)) * plotWidth;
  const y = (v) => top + plotHeight - ((v - low) / (high - low)) * plotHeight;
  const id = `deadline-${index}`;
  const lowest = series.points.reduce((a, p) => (series.lowerIsWorse ? (p.value < a.value ? p : a) : (p.value > a.value ? p : a)));
  const lines = [series.warning != null ? `warning line at ${formatDays(series.warning)}` : null,
    series.critical != null ? `critical line at ${formatDays(series.critical)}` : null].filter(Boolean).join(", ");

  const root = svg("svg", { class: "chart deadline", id: `${id}-chart`, width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    tabindex: "0", "aria-labelledby": `${id}-title ${id}-desc`, "data-check": series.check },
  svg("title", { id: `${id}-title` }, `${title}${detail ? ` (${detail})` : ""}: ${reads(latest.value)}`),
  svg("desc", { id: `${id}-desc` }, `${series.recorded} recorded value${series.recorded === 1 ? "" : "s"} from ${timeText(series.points[0].at)} to ${timeText(latest.at)}; `
    + `latest ${reads(latest.value)} (${latest.status}); ${series.lowerIsWorse ? "lowest" : "highest"} ${reads(lowest.value)} at ${timeText(lowest.at)}`
    + `${lines ? `; ${lines}` : ""}. Arrow keys step through the values; the table below lists them.`));

  // The zones past each line, shaded, then the lines, labelled at their right end.
  const zone = (from, to, kind) => {
    const [a, b] = [y(Math.min(Math.max(from, low), high)), y(Math.min(Math.max(to, low), high))];
    if (Math.abs(a - b) > 0.5) root.append(svg("rect", { class: `zone zone-${kind}`, x: left, y: Math.min(a, b).toFixed(1), width: plotWidth, height: Math.abs(a - b).toFixed(1) }));
  };
  if (series.lowerIsWorse) {
    if (series.warning != null) zone(series.critical ?? low, series.warning, "warning");
    if (series.critical != null) zone(low, series.critical, "critical");
  } else {
    if (series.warning != null) zone(series.warning, series.critical ?? high, "warning");
    if (series.critical != null) zone(series.critical, high, "critical");
  }
  for (const v of ticks(low, high)) {
    root.append(svg("line", { class: "grid-line", x1: left, x2: left + plotWidth, y1: y(v).toFixed(1), y2: y(v).toFixed(1) }),
      svg("text", { class: "tick", x: left - 6, y: (y(v) + 4).toFixed(1), "text-anchor": "end" }, `${v} d`));
  }
  // Each line's label sits above its right end; when the two lines are too close for that, the critical one's
  // sits above its left end.
  const close = series.warning != null && series.critical != null && Math.abs(y(series.warning) - y(series.critical)) < 16;
  for (const [kind, v] of [["warning", series.warning], ["critical", series.critical]]) {
    if (v == null) continue;
    const atLeft = close && kind === "critical";
    root.append(svg("line", { class: `threshold threshold-${kind}`, x1: left, x2: left + plotWidth, y1: y(v).toFixed(1), y2: y(v).toFixed(1) }),
      svg("text", { class: `threshold-label threshold-${kind}`, x: atLeft ? left + 4 : left + plotWidth - 4, y: (y(v) - 5).toFixed(1),
        "text-anchor": atLeft ? "start" : "end" }, `${kind} ${formatDays(v)}`));
  }
  root.append(svg("line", { class: "axis", x1: left, y1: top + plotHeight, x2: left + plotWidth, y2: top + plotHeight }));
  // Dates along the bottom: the range's ends and a middle one when there is room.
  const dates = plotWidth > 360 ? [start, (start + end) / 2, end] : [start, end];
  dates.forEach((t, i) => root.append(svg("text", { class: "tick", x: x(t).toFixed(1), y: height - 8,
    "text-anchor": i === 0 ? "start" : i === dates.length - 1 ? "end" : "middle" }, dateFormat.format(new Date(t)))));

  const coords = points.map((p) => [x(Date.parse(p.at)), y(p.value)]);
  if (coords.length > 1) root.append(svg("polyline", { class: "series", points: coords.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(" ") }));
  const pointLabel = (p) => `${timeText(p.at)}: ${reads(p.value)}, ${p.status.toUpperCase()}`;
  points.forEach((p, i) => {
    root.append(svg("circle", { class: `dot status-${p.status}`, cx: coords[i][0].toFixed(1), cy: coords[i][1].toFixed(1), r: points.length > 40 ? 2 : 4 },
      svg("title", {}, pointLabel(p))));
  });
  const cursor = svg("circle", { class: "cursor", r: 7, cx: 0, cy: 0, visibility: "hidden", "aria-hidden": "true" });
  root.append(cursor);

  // The visible label: follows the pointer and the arrow keys; read out politely.
  const tip = el("p", { class: "chart-tip", id: `${id}-tip`, "aria-live": "polite" }, "Point at the line (or focus it and use the arrow keys) to read a value.");
  let at = -1;
  const show = (i) => {
    at = Math.max(0, Math.min(points.length - 1, i));
    cursor.setAttribute("cx", coords[at][0].toFixed(1));
    cursor.setAttribute("cy", coords[at][1].toFixed(1));
    cursor.setAttribute("visibility", "visible");
    tip.textContent = pointLabel(points[at]);
    tip.dataset.status = points[at].status;
  };
  root.addEventListener("pointermove", (event) => {
    const box = root.getBoundingClientRect();
    const px = ((event.clientX - box.left) / box.width) * width;
    let best = 0;
    coords.forEach(([cx], i) => { if (Math.abs(cx - px) < Math.abs(coords[best][0] - px)) best = i; });
    show(best);
  });
  root.addEventListener("keydown", (event) => {
    const moves = { ArrowLeft: at - 1, ArrowRight: at < 0 ? points.length - 1 : at + 1, Home: 0, End: points.length - 1 };
    if (!(event.key in moves)) return;
    event.preventDefault();
    show(moves[event.key]);
  });
  root.addEventListener("focus", () => { if (at < 0) show(points.length - 1); });

  const rows = [...series.points].reverse().slice(0, 200).map((p) => [time(p.at), reads(p.value), pill(p.status)]);
  return el("figure", { class: "deadline-card", id, "data-check": series.check },
    el("figcaption", {},
      el("span", { class: "deadline-title" }, el("strong", { text: title }), detail ? el("span", { class: "muted", text: ` ${detail}` }) : null),
      el("span", { class: "deadline-now" }, pill(latest.status), ` ${reads(latest.value)}`)),
    root, tip,
    el("details", { class: "deadline-values" }, el("summary", { text: "Values as a table" }),
      table(["At", series.lowerIsWorse ? "Days left" : "Age", "Status"], rows, { caption: `${title}: recorded values, newest first${series.points.length < series.recorded ? ` (the worst of each slice of the ${series.recorded} runs)` : ""}${series.points.length > 200 ? ", the latest 200" : ""}` })));
}
