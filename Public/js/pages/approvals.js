// Approvals: the writes held for a second admin (two-person approval, `gatehouse approvals require` on the host).
// The list shows what waits and what was decided lately; one request's page shows what it would do with the same
// detail as the page it was made on (the merge plan's rows, the policy value before and after, the deletion's rows),
// and lets another admin approve it (it then runs exactly as asked, against the store as it is now) or deny it with a
// reason. Nobody approves their own request; the requester may withdraw it.
import { approvalsChanged } from "../api.js";
import { card, clear, confirmInline, el, errorBanner, facts, field, pill, table, time } from "../dom.js";
import { changesView } from "./merges.js";

export async function render(container, api) {
  const id = api.params.get("id");
  container.append(el("h1", { text: id ? `Approval request ${id}` : "Approvals" }));
  const settings = await api.get("/api/approvals/settings");
  if (id) {
    container.append(el("p", { class: "actions wrap" }, el("a", { href: "#/approvals", text: "← All requests" })));
    container.append(await requestCard(api, id));
    return;
  }
  container.append(settingsNote(settings));
  const [pending, all] = await Promise.all([api.get("/api/approvals"), api.get("/api/approvals", { status: "all", limit: 50 })]);
  container.append(card("Waiting for a second admin",
    table(["Request", "Action", "Asked by", "Asked", "Expires"], pending.map((a) => [
      el("a", { href: `#/approvals?id=${a.id}`, class: "approval-link", text: `#${a.id}` }), actionText(a), a.requestedBy, time(a.requestedAt), time(a.expiresAt),
    ]), { caption: "Requests waiting for approval", empty: "No request waits for approval." })));
  const decided = all.filter((a) => a.status !== "pending");
  container.append(card("Decided lately",
    table(["Request", "Status", "Action", "Asked by", "Decided by", "Decided"], decided.map((a) => [
      el("a", { href: `#/approvals?id=${a.id}`, text: `#${a.id}` }), pill(statusTone(a.status), a.status), actionText(a), a.requestedBy, decider(a.decidedBy),
      a.decidedAt ? time(a.decidedAt) : "—",
    ]), { caption: "Requests decided lately", empty: "Nothing decided yet." })));
}

function settingsNote(settings) {
  return el("p", { class: "muted", id: "approvals-settings" }, settings.actions.length
    ? `Needs a second admin in the console: ${settings.actions.join(", ")}. A request waits ${Math.round(settings.expiresAfter / 3600)} h. `
    : "No action needs a second admin's approval. ",
  "Which actions need one is set on the host with ", el("code", { text: "gatehouse approvals require" }), ".");
}

const ACTIONS = {
  "merge.apply": "Apply a merge", "merge.undo": "Undo a merge", "user.delete": "Delete a user", "policy.set": "Change the policy",
  "gate.enable": "Turn a provider on", "apple.key.revoke": "Revoke an Apple key", "apple.key.activate": "Activate an Apple key", admins: "Change admins",
};

function actionText(approval) {
  return el("span", {}, el("span", { text: ACTIONS[approval.action] ?? approval.action }), " ", el("code", { class: "small muted", text: `${approval.method} ${approval.path}` }));
}

/** Who decided: a console admin by their name, anyone else (the CLI's actor) as on the host. */
function decider(actor) {
  if (!actor) return "—";
  return actor.startsWith("console:") ? actor.slice("console:".length) : `${actor} (on the host)`;
}

function statusTone(status) {
  return { pending: "warning", running: "warning", approved: "ok", failed: "critical", denied: "unknown", expired: "unknown" }[status] ?? "unknown";
}

async function requestCard(api, id) {
  const approval = await api.get(`/api/approvals/${encodeURIComponent(id)}`);
  const me = api.session()?.username;
  const mine = approval.requestedBy === me;
  const decision = el("div", { id: "approval-decision", "aria-live": "polite" });
  const section = card(ACTIONS[approval.action] ?? approval.action,
    facts([
      ["Status", el("span", { id: "approval-status" }, pill(statusTone(approval.status), approval.status))],
      ["Asked by", el("span", { id: "approval-requester", text: approval.requestedBy + (mine ? " (you)" : "") })],
      ["Asked", time(approval.requestedAt)],
      [approval.status === "pending" ? "Expires" : "Expired or expires", time(approval.expiresAt)],
      ["Request", el("code", { text: `${approval.method} ${approval.path}` })],
      ...(approval.decidedBy ? [["Decided by", decider(approval.decidedBy)], ["Decided", time(approval.decidedAt)]] : []),
      ...(approval.reason ? [["Reason", approval.reason]] : []),
      ...(approval.outcomeStatus ? [["The action answered", outcomeText(approval)]] : []),
      ...(approval.outcome?.interrupted ? [["Interrupted", el("span", { id: "approval-interrupted", text: approval.outcome.interrupted })]] : []),
    ]),
    el("h3", { text: "What it does" }),
    what(approval),
    decision);
  if (approval.status === "pending") decision.append(decisionForms(api, approval, mine));
  return section;
}

function outcomeText(approval) {
  const outcome = approval.outcome ?? {};
  if (approval.outcomeStatus >= 200 && approval.outcomeStatus < 300) return `HTTP ${approval.outcomeStatus}: it ran`;
  return `HTTP ${approval.outcomeStatus}: refused — ${outcome.error?.message ?? "see the audit log"}`;
}

/** The request's detail, as the page it was made on shows it. */
function what(approval) {
  const body = approval.body ?? {};
  const detail = approval.detail;
  switch (approval.action) {
    case "merge.apply": {
      const plan = detail?.plan;
      if (!plan) return facts([["Ticket", body.ticket ?? "—"], ["Plan", approval.path.split("/")[3] ?? "?"]]);
      return el("div", { id: "approval-what" },
        el("p", { text: `Merge ${person(plan.sourceName, plan.sourceEmail, plan.source)} into ${person(plan.targetName, plan.targetEmail, plan.target)}: ${plan.rowsUpdated} row(s) updated, ${plan.rowsDeleted} deleted, under ticket ${body.ticket ?? "—"}.` }),
        changesView(plan.changes ?? []));
    }
    case "merge.undo":
      return el("div", { id: "approval-what" }, el("p", { text: detail
        ? `Undo merge ${detail.id}: give back ${person(detail.sourceName, detail.sourceEmail, detail.source)} from ${person(detail.targetName, detail.targetEmail, detail.target)} (merged under ticket ${detail.ticket}). Reason: ${body.reason ?? "—"}.`
        : `Undo merge ${approval.path.split("/")[3]}. Reason: ${body.reason ?? "—"}.` }));
    case "policy.set":
      return el("div", { id: "approval-what" }, table(["Key", "Now", "After", "For", "Reason"], [[
        el("code", { text: body.key ?? "?" }), el("code", { text: JSON.stringify(detail?.value ?? null) }), el("code", { class: "after", text: JSON.stringify(body.value) }),
        body.for ?? "until changed back", body.reason ?? "—",
      ]], { caption: "The policy change" }));
    case "user.delete": {
      const tables = detail?.plan?.tables ?? {};
      return el("div", { id: "approval-what" },
        el("p", { text: `Delete user ${detail?.email || detail?.plan?.userID || "?"} (${detail?.plan?.userID ?? "?"}) under ticket ${detail?.plan?.ticket ?? "—"}. Reason: ${body.reason ?? "—"}.` }),
        table(["Table", "Rows"], Object.entries(tables).map(([name, rows]) => [name, String(rows)]), { caption: "Rows the deletion removes" }));
    }
    default:
      return el("div", { id: "approval-what" }, Object.keys(body).length
        ? facts(Object.entries(body).map(([key, value]) => [key, typeof value === "string" ? value : JSON.stringify(value)]))
        : el("p", { class: "muted", text: "The request has no body: the path says it all." }));
  }
}

function person(name, email, id) {
  return name || email ? `${name || email}${name && email ? ` <${email}>` : ""}` : id ?? "?";
}

function decisionForms(api, approval, mine) {
  const box = el("div", { class: "stack" });
  const outcome = el("div", { id: "approval-result", "aria-live": "polite" });
  if (api.hasRole("admin") && !mine) {
    const approve = el("button", { type: "button", class: "danger", id: "approval-approve", text: "Approve and run it" });
    const slot = el("div", { id: "approval-approve-confirm" });
    approve.addEventListener("click", () => confirmInline(slot, {
      question: `Run request ${approval.id} now, as ${approval.requestedBy} asked? It runs against the store as it is now; a merge plan that went stale is refused.`,
      confirmLabel: "Approve and run", danger: true, returnTo: approve,
      action: async () => {
        try {
          await api.post(`/api/approvals/${approval.id}/approve`, {});
          clear(slot);
          approve.disabled = true;
          clear(outcome).append(el("div", { class: "banner ok", role: "status", id: "approval-approved" },
            `Request ${approval.id} approved: it ran as ${approval.requestedBy} asked. `, el("a", { href: "#/audit?action=approval.*", text: "Audit entries" })));
        } catch (error) {
          clear(slot);
          clear(outcome).append(errorBanner(error));
        }
        approvalsChanged();
      },
    }));
    box.append(el("div", { class: "actions" }, approve), slot);
  } else if (mine) {
    box.append(el("p", { class: "banner info", id: "approval-own", text: "You asked for this: another admin must approve it. You can withdraw it below." }));
  } else {
    box.append(el("p", { class: "muted", text: "An admin approves or denies it." }));
  }
  if (api.hasRole("admin")) {
    const reason = el("input", { id: "approval-deny-reason", name: "reason", required: true, maxlength: "500", autocomplete: "off", placeholder: mine ? "No longer needed" : "Wrong user: see SUP-1234" });
    const deny = el("button", { type: "submit", class: "secondary", id: "approval-deny", text: mine ? "Withdraw it" : "Deny it" });
    const form = el("form", { class: "stack", "aria-label": mine ? "Withdraw the request" : "Deny the request" },
      field("Reason", reason, "Kept with the request and in the audit log."), el("div", { class: "actions" }, deny));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        const denied = await api.post(`/api/approvals/${approval.id}/deny`, { reason: reason.value });
        deny.disabled = true;
        clear(outcome).append(el("div", { class: "banner ok", role: "status", id: "approval-denied", text: `Request ${denied.id} ${mine ? "withdrawn" : "denied"}: ${denied.reason}` }));
      } catch (error) {
        clear(outcome).append(errorBanner(error));
      }
      approvalsChanged();
    });
    box.append(form);
  }
  box.append(outcome);
  return box;
}
