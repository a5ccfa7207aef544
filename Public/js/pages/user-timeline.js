// A user's timeline for the Users page: what happened to them, newest first, from what the console already reads —
// the user row and its accounts, the latest sessions, merges naming them, their deletions (an admin's to read), the
// audit entries whose subject is the user, and Apple's notifications about them.
import { card, el, time } from "../dom.js";

const SHOWN = 60;

/** The Timeline card for `detail` (what GET /api/users/:id answers). */
export async function timelineCard(api, detail) {
  const id = detail.user.id;
  const [audit, merges, deletions, apple] = await Promise.all([
    api.get("/api/audit", { subject: id, limit: 200 }).catch(() => []),
    api.get("/api/merges", { limit: 500 }).catch(() => []),
    api.hasRole("admin") ? api.get("/api/deletions", { limit: 10000 }).catch(() => []) : [],
    api.get("/api/apple/notifications", { limit: 500 }).catch(() => []),
  ]);
  const events = [];
  const add = (at, kind, ...what) => { if (at && !Number.isNaN(Date.parse(at))) events.push({ at, kind, what }); };
  add(detail.user.createdAt, "user", "User created");
  for (const account of detail.accounts) add(account.createdAt, "account", `${account.providerId} account linked`);
  for (const session of detail.sessions.latest) {
    add(session.createdAt, "session", `Signed in: a session from ${session.ipAddress ?? "an unknown address"}${session.impersonatedBy ? ` (impersonated by ${session.impersonatedBy})` : ""}`);
  }
  for (const merge of merges.filter((m) => m.source === id || m.target === id)) {
    const link = el("a", { href: `#/merges?id=${merge.id}`, text: `Merge ${merge.id}` });
    const other = merge.source === id ? `merged into ${merge.targetName || merge.targetEmail || merge.target}` : `took in ${merge.sourceName || merge.sourceEmail || merge.source}`;
    add(merge.appliedAt, "merge", link, `: ${other} (ticket ${merge.ticket}, by ${merge.actor})`);
    if (merge.undoneAt) add(merge.undoneAt, "merge", `Merge ${merge.id} undone by ${merge.undoneBy ?? "?"}: ${merge.undoReason ?? ""}`);
  }
  for (const deletion of deletions.filter((d) => d.userID === id)) {
    const link = el("a", { href: `#/deletions?id=${deletion.id}`, text: `Deletion ${deletion.id}` });
    add(deletion.appliedAt, "deletion", link, ` applied (ticket ${deletion.ticket}, by ${deletion.actor})`);
    if (deletion.undoneAt) add(deletion.undoneAt, "deletion", `Deletion ${deletion.id} undone by ${deletion.undoneBy ?? "?"}: ${deletion.undoReason ?? ""}`);
    if (deletion.purgedAt) add(deletion.purgedAt, "deletion", `Deletion ${deletion.id} purged`);
  }
  for (const entry of audit) add(entry.at, "audit", el("code", { text: entry.action }), ` by ${entry.actor}`);
  for (const note of apple.filter((n) => n.userID === id)) add(note.receivedAt, "apple", `Apple ${note.type ?? "notification"}: ${note.action ?? note.reason ?? note.outcome}`);
  events.sort((a, b) => Date.parse(b.at) - Date.parse(a.at));
  const shown = events.slice(0, SHOWN);
  return card("Timeline",
    el("ol", { class: "timeline", id: "user-timeline" }, shown.map((e) => el("li", { class: `event ${e.kind}`, "data-kind": e.kind },
      time(e.at), el("span", { class: "event-kind", text: e.kind }), el("span", { class: "event-what" }, e.what)))),
    el("p", { class: "muted small", text: `Newest first${events.length > SHOWN ? `; the latest ${SHOWN} of ${events.length}` : ""}. Sessions: the latest ${detail.sessions.latest.length} of ${detail.sessions.total}; Apple events: among the newest 500 received.` }));
}
