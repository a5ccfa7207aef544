// Overview: the latest recorded health run, the active Apple key and its age, the gate board, the
// store's counts, the linkSocial switch, and the newest audit entries. It shows only what the API answers; a job the
// API gains adds its own card here.
import { age, card, copyable, el, facts, findings, json, pill, table, time } from "../dom.js";

const SWITCH = "linkSocial.allowDifferentEmails";

export async function render(container, api) {
  const [status, policy, audit, health, ring, gates] = await Promise.all([
    api.get("/api/status"),
    api.get("/api/policy"),
    api.get("/api/audit", { limit: 10 }),
    api.get("/api/health/history", { limit: 1 }),
    api.get("/api/apple/keys"),
    api.get("/api/gates"),
  ]);
  const entry = policy.entries.find((e) => e.key === SWITCH);
  container.append(
    el("h1", { text: "Overview" }),
    el("div", { class: "grid" },
      healthCard(health[0], ring.now),
      appleKeyCard(ring),
      gatesCard(gates.board),
      switchCard(entry, policy),
      card("Store",
        facts([["Gatehouse", status.version], ["Store", status.store], ["Schema", status.schema], ["Migrations", String(status.migrations)]]),
        table(["Table", "Rows"], Object.entries(status.counts).map(([name, count]) => [name.replaceAll("_", " "), el("span", { class: "number", text: count.toLocaleString("en") })]), { caption: "Row counts" })),
      wide(card("Recent audit entries",
        table(["At", "Actor", "Action", "Subject"], audit.map((e) => [time(e.at), e.actor, el("code", { text: e.action }), e.subject ?? "—"]), { caption: "Recent audit entries", empty: "No audit entries yet." }),
        el("p", {}, el("a", { href: "#/audit", text: "All audit entries →" }))))));
}

function wide(node) {
  node.classList.add("wide");
  return node;
}

function switchCard(entry, policy) {
  const on = entry?.value === true;
  return card("linkSocial switch",
    el("p", { class: "switch-state" },
      el("span", { class: `pill ${on ? "on" : "off"}`, id: "overview-switch", text: on ? "ON" : "OFF" }),
      " allowDifferentEmails for the authenticated linkSocial call"),
    facts([
      ["Set by", entry?.setBy ?? "(default)"],
      ["Set at", time(entry?.setAt)],
      ["Reason", entry?.reason ?? "—"],
      ["Reverts", entry?.revertsAt ? el("span", {}, time(entry.revertsAt), " to ", json(entry.revertsTo)) : "—"],
      ["Policy version", String(policy.version)],
    ]),
    policy.risks.length ? el("ul", { class: "risks" }, policy.risks.map((r) => el("li", { class: r.severity, text: `${r.severity.toUpperCase()}: ${r.message}` }))) : null,
    el("p", {}, el("a", { href: "#/policy", text: "Change it on the Policy page →" })));
}

function healthCard(run, now) {
  if (!run) {
    return card("Health",
      el("p", { id: "overview-health", class: "muted" }, "No recorded run yet: the health timer records one every hour (",
        el("code", { text: "systemctl enable --now gatehouse-health.timer" }), ")."),
      el("p", {}, el("a", { href: "#/health", text: "Run the checks now on the Health page →" })));
  }
  const notOK = run.checks.filter((c) => c.status !== "ok");
  return card("Health",
    el("p", { class: "switch-state", id: "overview-health" }, pill(run.status), ` latest recorded run, ${age(run.at, now)} ago`),
    facts([["At", time(run.at)], ["Checks", `${run.checks.length - notOK.length} of ${run.checks.length} OK`]]),
    notOK.length ? el("ul", { class: "risks" }, notOK.map((c) => el("li", { class: c.status }, el("code", { text: c.id }), `: ${c.summary}`))) : null,
    el("p", {}, el("a", { href: "#/health", text: "Checks now and history →" })));
}

function gatesCard(board) {
  const verdict = board.guideline48;
  const renewal = board.membership;
  return card("Gates",
    el("div", { id: "overview-gates", class: "compact" },
      table(["Provider", "ios", "desktop", "web"], ["apple", "google"].map((provider) => [provider,
        ...["ios", "desktop", "web"].map((platform) => pill(board.gates.find((g) => g.provider === provider && g.platform === platform)?.state ?? "unknown"))]),
      { caption: "Gate states, provider by platform" }),
      el("p", { class: verdict.breached ? "bad" : "", id: "overview-guideline", text: `${verdict.breached ? "CRITICAL: " : ""}${verdict.message}` }),
      el("p", { class: renewal && renewal.level !== "ok" ? "warn" : "muted", text: renewal
        ? `${renewal.level === "ok" ? "" : `${renewal.level.toUpperCase()}: `}${renewal.message}`
        : "Membership not declared met: every Apple gate is blocked until it is." })),
    el("p", {}, el("a", { href: "#/gates", text: "Gates →" })));
}

function appleKeyCard(ring) {
  const key = ring.active;
  return card("Apple signing key",
    key
      ? el("div", {},
        el("p", { class: "switch-state", id: "overview-apple-key" }, pill(key.state), " ", el("code", { text: key.keyID }), ` active for ${age(key.activatedAt, ring.now)}`),
        facts([["Team ID", key.teamID], ["Activated", time(key.activatedAt)], ["Imported", `${age(key.importedAt, ring.now)} ago`],
          ["Fingerprint", copyable(key.fingerprint, "fingerprint", { shown: `${key.fingerprint.slice(0, 16)}…` })]]))
      : el("p", { id: "overview-apple-key", class: "muted", text: ring.keys.length ? "No key is active." : "The key ring is empty." }),
    findings(ring.warnings),
    el("p", {}, el("a", { href: "#/apple", text: "Apple keys →" })));
}
