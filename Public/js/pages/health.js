// Health: every check run now (not recorded: recording is the timer's job), with its status and what
// to do, and the recorded runs over time as an inline SVG chart (built with createElementNS, never
// markup) with the same runs in a table for keyboards and screen readers.
import { card, clear, el, errorBanner, pill, table, time, withTimes } from "../dom.js";

const SVG = "http://www.w3.org/2000/svg";
// Stacked from the bottom, in this order; the worst ends on top.
const STATUSES = ["ok", "warning", "unknown", "critical"];
const LIMITS = ["50", "200", "1000"];

export async function render(container, api) {
  const current = el("div", { id: "health-current", "aria-live": "polite" });
  const history = el("div", { id: "health-history" });
  const again = el("button", { type: "button", class: "secondary", id: "health-run", text: "Run the checks again" });
  const limit = el("select", { id: "health-limit", "aria-label": "How many recorded runs" }, LIMITS.map((n) => el("option", { value: n, text: `last ${n} runs` })));

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
  async function loadHistory() {
    try {
      clear(history).append(renderHistory(await api.get("/api/health/history", { limit: limit.value })));
    } catch (error) {
      clear(history).append(errorBanner(error));
    }
  }
  again.addEventListener("click", runNow);
  limit.addEventListener("change", loadHistory);

  container.append(el("h1", { text: "Health" }),
    card("Checks now", el("p", { class: "muted", text: "Run now against the store; not recorded. The scheduled health timer records its runs." }), current, again),
    card("Recorded runs", el("div", { class: "actions" }, limit), history));
  await Promise.all([runNow(), loadHistory()]);
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

function counts(run) {
  const result = Object.fromEntries(STATUSES.map((s) => [s, 0]));
  for (const check of run.checks) result[check.status] = (result[check.status] ?? 0) + 1;
  return result;
}

function renderHistory(runs) {
  if (runs.length === 0) {
    return el("div", { id: "health-history-empty" },
      el("p", { text: "No recorded run yet. The health timer records one every hour; on the server, enable it with:" }),
      el("pre", {}, el("code", { text: "systemctl enable --now gatehouse-health.timer" })),
      el("p", { class: "muted" }, "The units are ", el("code", { text: "ops/systemd/gatehouse-health.{service,timer}" }), " (or the line in ",
        el("code", { text: "ops/cron/gatehouse-health" }), "). To record one now by hand: ", el("code", { text: "gatehouse health --record" }),
        ". The runbook: ", el("code", { text: "ops/runbooks/health-alerts.md" }), "."));
  }
  const oldestFirst = [...runs].reverse();
  return el("div", {},
    chart(oldestFirst),
    el("ul", { class: "legend", "aria-hidden": "true" }, STATUSES.map((s) => el("li", {}, el("span", { class: `swatch status-${s}` }), s))),
    el("h3", { id: "health-runs-heading", text: "The same runs as a table" }),
    table(["At", "Status", "OK", "Warning", "Unknown", "Critical", "Took", "Not OK"], runs.map((run) => {
      const n = counts(run);
      const bad = run.checks.filter((c) => c.status !== "ok");
      return [time(run.at), pill(run.status), String(n.ok), String(n.warning), String(n.unknown), String(n.critical), `${run.durationMilliseconds} ms`,
        bad.length ? el("ul", { class: "samples" }, bad.map((c) => el("li", {}, el("code", { text: c.id }), `: ${c.summary}`))) : "—"];
    }), { caption: "Recorded health runs, newest first" }));
}

function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

/** Stacked bars of check statuses per run, placed by time. */
function chart(runs) {
  const width = 720, height = 220, left = 36, right = 12, top = 12, bottom = 34;
  const plotWidth = width - left - right, plotHeight = height - top - bottom;
  const times = runs.map((r) => Date.parse(r.at));
  const start = Math.min(...times), end = Math.max(...times);
  const most = Math.max(1, ...runs.map((r) => r.checks.length));
  const barWidth = Math.max(3, Math.min(22, (plotWidth / runs.length) * 0.7));
  const x = (t) => (end === start ? left + plotWidth / 2 : left + barWidth / 2 + ((t - start) / (end - start)) * (plotWidth - barWidth));
  const y = (n) => top + plotHeight - (n / most) * plotHeight;
  const worst = STATUSES.map((s) => [s, runs.filter((r) => r.status === s).length]).filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`).join(", ");
  const titleID = `health-chart-title-${Math.random().toString(36).slice(2, 7)}`;

  const root = svg("svg", { class: "chart", id: "health-chart", viewBox: `0 0 ${width} ${height}`, role: "img", "aria-labelledby": `${titleID} ${titleID}-desc`, preserveAspectRatio: "xMidYMid meet" },
    svg("title", { id: titleID }, "Recorded health runs over time"),
    svg("desc", { id: `${titleID}-desc` }, `${runs.length} runs from ${runs[0].at} to ${runs[runs.length - 1].at}; overall: ${worst}. Each bar stacks the run's checks by status. The table below lists the same runs.`));
  // Axes and gridlines.
  root.append(svg("line", { class: "axis", x1: left, y1: top + plotHeight, x2: width - right, y2: top + plotHeight }),
    svg("line", { class: "axis", x1: left, y1: top, x2: left, y2: top + plotHeight }),
    svg("line", { class: "grid-line", x1: left, y1: y(most), x2: width - right, y2: y(most) }),
    svg("text", { class: "tick", x: left - 6, y: y(0) + 4, "text-anchor": "end" }, "0"),
    svg("text", { class: "tick", x: left - 6, y: y(most) + 4, "text-anchor": "end" }, String(most)));
  const label = (iso) => iso.replace("T", " ").replace(/:\d\d\.\d+Z$/, "Z");
  root.append(svg("text", { class: "tick", x: left, y: height - 10, "text-anchor": "start" }, label(runs[0].at)));
  if (runs.length > 1) root.append(svg("text", { class: "tick", x: width - right, y: height - 10, "text-anchor": "end" }, label(runs[runs.length - 1].at)));
  // One group per run.
  runs.forEach((run, index) => {
    const n = counts(run);
    const cx = x(times[index]);
    const group = svg("g", { class: `run status-${run.status}`, "data-at": run.at },
      svg("title", {}, `${run.at}: ${run.status.toUpperCase()} — ${STATUSES.map((s) => `${n[s]} ${s}`).join(", ")}`));
    let stacked = 0;
    for (const status of STATUSES) {
      if (n[status] === 0) continue;
      group.append(svg("rect", { class: `bar status-${status}`, x: (cx - barWidth / 2).toFixed(1), y: y(stacked + n[status]).toFixed(1), width: barWidth.toFixed(1), height: (y(stacked) - y(stacked + n[status])).toFixed(1) }));
      stacked += n[status];
    }
    root.append(group);
  });
  return el("figure", { class: "chart-wrap" }, root);
}
