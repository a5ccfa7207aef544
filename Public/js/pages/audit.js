// Audit: the hash-chained audit log, filterable by time, action (exact or prefix*), actor and
// subject, and a check of the chain. Filters live in the hash (#/audit?action=policy.*) so a view
// can be linked.
import { card, clear, el, errorBanner, table, time } from "../dom.js";

/** An entry's details as one line: key=value key=[a,b]. */
export function auditDetails(details) {
  return Object.entries(details ?? {}).sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${key}=${Array.isArray(value) ? `[${value.join(",")}]` : value}`).join(" ");
}

const SINCE = [["", "Any time"], ["1h", "Last hour"], ["24h", "Last 24 hours"], ["7d", "Last 7 days"], ["30d", "Last 30 days"]];

export async function render(container, api) {
  const initial = Object.fromEntries(api.params);
  const since = el("select", { id: "audit-since", name: "since" }, SINCE.map(([value, label]) => el("option", { value, selected: value === (initial.since ?? ""), text: label })));
  const action = el("input", { id: "audit-action", name: "action", value: initial.action ?? "", placeholder: "policy.set or policy.*", spellcheck: "false" });
  const actor = el("input", { id: "audit-actor", name: "actor", value: initial.actor ?? "", placeholder: "console:alice", spellcheck: "false" });
  const subject = el("input", { id: "audit-subject", name: "subject", value: initial.subject ?? "", spellcheck: "false" });
  const limit = el("select", { id: "audit-limit", name: "limit" }, ["50", "200", "1000"].map((n) => el("option", { value: n, selected: n === (initial.limit ?? "50"), text: n })));
  const results = el("div", { id: "audit-results", "aria-live": "polite" });
  const verifyResult = el("div", { id: "audit-verify-result", "aria-live": "polite" });

  const filters = () => ({ since: since.value, action: action.value.trim(), actor: actor.value.trim(), subject: subject.value.trim(), limit: limit.value });
  async function load() {
    clear(results).append(el("p", { class: "muted", text: "Loading…" }));
    try {
      const entries = await api.get("/api/audit", filters());
      clear(results).append(
        el("p", { class: "muted", id: "audit-count", text: `${entries.length} ${entries.length === 1 ? "entry" : "entries"}, newest first` }),
        table(["#", "At", "Actor", "Action", "Subject", "Details"], entries.map((e) => [
          String(e.id), time(e.at), e.actor, el("code", { text: e.action }), e.subject ?? "—", el("span", { class: "details", text: auditDetails(e.details) }),
        ]), { caption: "Audit entries", empty: "No audit entries match these filters." }));
    } catch (error) {
      clear(results).append(errorBanner(error));
    }
  }

  const form = el("form", { class: "filters", role: "search", "aria-label": "Filter audit entries" },
    field("Since", since), field("Action (exact, or prefix*)", action), field("Actor", actor), field("Subject", subject), field("Limit", limit),
    el("div", { class: "actions" }, el("button", { type: "submit", class: "primary", id: "audit-apply", text: "Apply filters" })));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    // Keep the filters in the hash without re-rendering the page.
    const search = new URLSearchParams(Object.entries(filters()).filter(([, v]) => v !== ""));
    history.replaceState(null, "", `#/audit${search.toString() ? `?${search}` : ""}`);
    load();
  });

  const verify = el("button", { type: "button", class: "secondary", id: "audit-verify", text: "Verify the chain" });
  verify.addEventListener("click", async () => {
    clear(verifyResult).append(el("p", { class: "muted", text: "Checking every entry…" }));
    try {
      const result = await api.get("/api/audit/verify");
      clear(verifyResult).append(result.problems.length === 0
        ? el("p", { class: "banner ok", text: `Intact: ${result.entries} entries; head ${result.head.slice(0, 16)}…` })
        : el("div", { class: "banner error", role: "alert" }, el("strong", { text: "The chain is broken:" }), el("ul", {}, result.problems.map((p) => el("li", { text: p })))));
    } catch (error) {
      clear(verifyResult).append(errorBanner(error));
    }
  });

  container.append(el("h1", { text: "Audit log" }),
    card("Filters", form),
    card("Entries", results),
    card("Integrity", el("p", { class: "muted", text: "Each entry is chained to the one before it by SHA-256; an edited or deleted entry breaks the chain." }), verify, verifyResult));
  await load();
}

function field(label, control, hint) {
  const id = control.id;
  return el("div", { class: "field" }, el("label", { for: id, text: label }), control, hint ? el("small", { class: "muted", text: hint }) : null);
}
