// Overview: the store's counts, the linkSocial switch, and the newest audit entries. It shows only
// what the API has today; jobs that land later add their own cards here.
import { card, el, facts, json, table, time } from "../dom.js";

const SWITCH = "linkSocial.allowDifferentEmails";

export async function render(container, api) {
  const [status, policy, audit] = await Promise.all([
    api.get("/api/status"),
    api.get("/api/policy"),
    api.get("/api/audit", { limit: 10 }),
  ]);
  const entry = policy.entries.find((e) => e.key === SWITCH);
  container.append(
    el("h1", { text: "Overview" }),
    el("div", { class: "grid" },
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
