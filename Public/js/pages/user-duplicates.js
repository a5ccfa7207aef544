// A user's likely duplicates for the Users page: the other side of each split identity the duplicates scan would
// pair with this user (an Apple user behind a relay address and the Google user created days later, say), whichever
// side is open, with the score, the reasons, a link to the other user and a merge planned the way the Duplicates
// page plans it (the later user merged into the earlier one).
import { card, el, time } from "../dom.js";

/** The "Likely duplicates" card for `detail` (what GET /api/users/:id answers). */
export async function duplicatesCard(api, detail) {
  const id = detail.user.id;
  let answer;
  try {
    answer = await api.get(`/api/users/${encodeURIComponent(id)}/duplicates`);
  } catch (error) {
    return card("Likely duplicates", el("p", { class: "muted", id: "user-duplicates", text: `Could not look for duplicates: ${error?.message ?? error}` }));
  }
  const canPlan = api.hasRole("support");
  if (answer.candidates.length === 0) {
    return card("Likely duplicates", el("p", { class: "muted", id: "user-duplicates", text: `No other user scores ${answer.minScore.toFixed(2)} or more as the same person.` }));
  }
  return card("Likely duplicates",
    el("ul", { class: "twins", id: "user-duplicates" }, answer.candidates.map((c) => {
      const other = c.earlier.id === id ? c.later : c.earlier;
      const plan = `#/merges?from=${encodeURIComponent(c.later.id)}&into=${encodeURIComponent(c.earlier.id)}`;
      return el("li", { class: "twin", "data-user": other.id },
        el("div", { class: "twin-head" },
          el("span", { class: "score", title: "0 to 1: the reasons' points over 100", text: c.score.toFixed(2) }),
          el("a", { href: `#/users?id=${encodeURIComponent(other.id)}`, class: "user-link", text: other.name || other.email || other.id }),
          canPlan ? el("a", { href: plan, class: "plan-merge", text: "Plan merge",
            "aria-label": `Plan a merge of ${c.later.name || c.later.email || c.later.id} into ${c.earlier.name || c.earlier.email || c.earlier.id}` }) : null),
        el("div", { class: "small" }, other.email || "(no email)", " · ", other.providers.length ? other.providers.join(" + ") : "no accounts",
          " · created ", time(other.createdAt), c.earlier.id === id ? " (after this user)" : " (before this user)"),
        el("ul", { class: "reasons small" }, c.reasons.map((r) => el("li", {}, el("span", { class: "points", text: `+${(r.points / 100).toFixed(2)} ` }), r.detail))));
    })),
    el("p", { class: "muted small" }, "Scored as on the ", el("a", { href: "#/duplicates", text: "Duplicates" }), " page. A merge keeps the user created first."));
}
