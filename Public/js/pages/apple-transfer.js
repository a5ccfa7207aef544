// Apple transfer: when the app moves to another Apple developer team, every Sign in with Apple user is migrated to
// the new team's identifiers within Apple's 60 days. This page follows the job `gatehouse apple transfer` does on
// the host: the stages, the counts, the countdown to the deadline, the accounts Apple refused, and the stragglers
// (people Better Auth already made a new user for) with a link that plans their merge. Read-only: collect and
// exchange talk to Apple for a long time and run on the host (ops/runbooks/apple-transfer.md).
import { card, el, facts, pill, table, time, timeText } from "../dom.js";

const stages = [
  ["collecting", "Collect", "the sending team's transfer identifiers"],
  ["exchanging", "Exchange", "the recipient team's new identifiers"],
  ["planning", "Plan", "the rewrite, and the stragglers"],
  ["applying", "Apply", "the rewrite, in the store"],
  ["applied", "Done", "every exchanged account rewritten"],
];

export async function render(container, api) {
  const { transfer } = await api.get("/api/apple/transfer");
  container.append(el("h1", { text: "Apple transfer" }));
  if (!transfer) {
    container.append(card("No transfer recorded",
      el("p", { text: "When the app moves to another Apple developer team, every Sign in with Apple user gets a new identifier, and Apple bridges the two for only 60 days. Start the job on the host, with both teams' keys in the key ring:" }),
      el("pre", { class: "command", text: "gatehouse apple transfer start --to-team TEAMID\ngatehouse apple transfer collect" }),
      el("p", { class: "muted", text: "The runbook ops/runbooks/apple-transfer.md walks the whole job: before the transfer, the day of, after it, the stragglers, the deadline." })));
    return;
  }
  const severity = transfer.stage === "applied" || transfer.stage === "exported" ? "ok" : transfer.stage === "expired" || transfer.daysLeft <= 7 ? "critical" : transfer.daysLeft <= 21 ? "warning" : "ok";
  const countdown = el("p", { class: `countdown status-${severity}`, id: "transfer-countdown" },
    el("strong", { text: transfer.stage === "expired" ? "The 60 days are over." : `${transfer.daysLeft} day${transfer.daysLeft === 1 ? "" : "s"} left` }),
    // The date itself: a relative "in 10 d" beside a floored "9 days left" would read as two deadlines.
    ` — Apple's migration endpoints stop answering at `, el("time", { datetime: transfer.deadline, text: timeText(transfer.deadline) }), ".");
  const current = stages.findIndex(([id]) => id === transfer.stage);
  const steps = el("ol", { class: "stages", id: "transfer-stages" }, stages.map(([id, label, what], index) =>
    el("li", { class: index < current || transfer.stage === "applied" ? "done" : index === current ? "current" : "", "aria-current": index === current ? "step" : null },
      el("strong", { text: label }), el("span", { class: "muted small", text: ` ${what}` }))));
  const c = transfer.counts;
  container.append(
    countdown,
    card("Where it stands",
      facts([
        ["Teams", `${transfer.fromTeam} → ${transfer.toTeam}`],
        ["Client id", transfer.clientId],
        ["Transferred", time(transfer.transferredAt)],
        ["Stage", pill(severity, transfer.stage)],
        ["Next", el("code", { text: transfer.next })],
      ]),
      steps),
    card("Counts", table(["Apple accounts", "Collected", "Exchanged", "Applied", "Failed"],
      [[String(c.accounts), String(c.collected), String(c.exchanged), String(c.applied), String(c.failed)]], { caption: "Transfer counts" })),
    card("Refused by Apple", table(["User", "Account", "Step", "Error"], transfer.failed.map((f) => [
      el("a", { href: `#/users?q=${encodeURIComponent(f.userId)}`, text: f.userId }), f.accountId, f.step, f.error,
    ]), { caption: "Accounts Apple refused", empty: "Apple refused no account." }),
      transfer.failed.length ? el("p", { class: "muted small", text: "invalid_request: the person revoked the app, or the sub is not the sending team's. `gatehouse apple transfer collect --retry-refused` asks again." }) : null),
  );
  const plan = transfer.plan;
  if (plan) {
    container.append(card(`Plan ${plan.planId}`,
      facts([
        ["Status", pill(plan.status === "applied" ? "ok" : "unknown", plan.status)],
        ["Rewrites", `${plan.rewrites} account(s), ${plan.emailRewrites} relay address(es)`],
        ["Left as they are", `${plan.stragglers} straggler(s), ${plan.unchanged} unchanged, ${plan.notExchanged} not exchanged`],
        ["Applied", plan.appliedAt ? time(plan.appliedAt) : "—"],
      ]),
      el("h3", { text: "Stragglers" }),
      el("p", { class: "muted small", text: "Each signed in during the window, so Better Auth made a new user for the new identifier. Merge the new user into the old one, keeping the new user's Apple account." }),
      table(["User with the data", "New user", "Why", ""], plan.stragglerPairs.map((p) => [
        el("a", { href: `#/users?q=${encodeURIComponent(p.userId)}`, text: p.userId }),
        el("a", { href: `#/users?q=${encodeURIComponent(p.newUserId)}`, text: p.newUserId }),
        p.reason === "sub" ? "already signed in with the new sub" : "already has the new relay address",
        el("a", { href: `#/merges?from=${encodeURIComponent(p.newUserId)}&into=${encodeURIComponent(p.userId)}&sameProvider=source${p.keepEmail ? `&keepEmail=${encodeURIComponent(p.keepEmail)}` : ""}`,
          class: "plan-merge", text: "Plan merge" }),
      ]), { caption: "Straggler pairs", empty: "No straggler: nobody signed in with a new identifier before the apply." })));
  }
}
