// Duplicates: pairs of users who are probably one person split in two (an Apple user with a relay
// address and a Google user, say), best first, each with its score and the reasons behind it, and
// links to both users. Scoring is the server's (SplitIdentityFinder); the page only lists it.
import { card, clear, copyable, el, errorBanner, field, table, time } from "../dom.js";

const SCORES = ["0.5", "0.6", "0.7", "0.8", "0.9", "1"];
const LIMITS = ["20", "50", "200"];

export async function render(container, api) {
  const params = Object.fromEntries(api.params);
  const minScore = el("select", { id: "dup-min-score", name: "minScore" }, SCORES.map((s) => el("option", { value: s, selected: s === (params.minScore ?? "0.7"), text: `at least ${s}` })));
  const limit = el("select", { id: "dup-limit", name: "limit" }, LIMITS.map((n) => el("option", { value: n, selected: n === (params.limit ?? "50"), text: n })));
  const form = el("form", { class: "filters", "aria-label": "Filter likely duplicates" }, field("Score", minScore), field("At most", limit),
    el("div", { class: "actions" }, el("button", { type: "submit", class: "primary", id: "dup-apply", text: "Find pairs" })));
  const results = el("div", { id: "dup-results", "aria-live": "polite" });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    history.replaceState(null, "", `#/duplicates?minScore=${minScore.value}&limit=${limit.value}`);
    load();
  });

  async function load() {
    clear(results).append(el("p", { class: "muted", text: "Scoring pairs…" }));
    try {
      const report = await api.get("/api/users/duplicates", { minScore: minScore.value, limit: limit.value });
      clear(results).append(
        el("p", { class: "muted", id: "dup-summary", text: `${report.pairsFound} pair${report.pairsFound === 1 ? "" : "s"} scoring at least ${report.minScore.toFixed(2)} among ${report.usersScanned.toLocaleString("en")} users`
          + ` (${report.nameGroups} shared names, ${report.pairsScored} pairs scored)${report.pairsFound > report.candidates.length ? `; the best ${report.candidates.length} are shown` : ""}.`
          + (report.mergeRecordsChecked ? ` Users already in a merge record are left out (${report.usersExcludedAsMerged}).` : "") }),
        table(["Score", "Earlier user", "Later user", "Why", ""], report.candidates.map((c) => [
          el("span", { class: "score", text: c.score.toFixed(2) }), userCell(c.earlier), userCell(c.later),
          el("ul", { class: "reasons" }, c.reasons.map((r) => el("li", {}, el("span", { class: "points", text: `+${(r.points / 100).toFixed(2)} ` }), r.detail))),
          el("a", { href: `#/merges?from=${encodeURIComponent(c.later.id)}&into=${encodeURIComponent(c.earlier.id)}`, class: "plan-merge", text: "Plan a merge" }),
        ]), { caption: "Likely split identities", empty: "No pair scores that high." }));
    } catch (error) {
      clear(results).append(errorBanner(error));
    }
  }

  container.append(el("h1", { text: "Likely duplicates" }),
    card("Filters", el("p", { class: "muted", text: "Pairs sharing a name (or a mailbox at another domain), scored on shared IP addresses, creation times, a relay/real address pair and user agents." }), form),
    card("Pairs", results));
  await load();
}

function userCell(user) {
  return el("div", { class: "pair-user" },
    el("a", { href: `#/users?id=${encodeURIComponent(user.id)}`, class: "user-link", text: user.name || user.email || user.id }),
    el("div", { class: "small", text: user.email || "(no email)" }),
    el("div", { class: "small muted" }, user.providers.length ? user.providers.join(" + ") : "no accounts", " · created ", time(user.createdAt)),
    copyable(user.id, "user id"));
}
