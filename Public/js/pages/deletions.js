// Deletions: the users deleted on request, newest first, each with its ticket, who applied it, the rows it took, the
// Apple token revocations, and how long it stays restorable. One deletion (#/deletions?id=N) can be undone with a
// reason until its undo deadline; after it the sealed rows are purged (by the health timer's recorded run, or the
// "Purge what is due" button here) and only the record remains. Admin only, as the API is.
import { append, card, clear, confirmInline, copyable, el, errorBanner, facts, pill, table, time } from "../dom.js";

export async function render(container, api) {
  const id = api.params.get("id");
  container.append(el("h1", { text: id ? `Deletion ${id}` : "Deletions" }));
  if (id) {
    container.append(el("p", {}, el("a", { href: "#/deletions", text: "← All deletions" })));
    container.append(await detailCard(api, id));
    return;
  }
  const deletions = await api.get("/api/deletions", { limit: 500 });
  const now = Date.now();
  const due = deletions.filter((d) => state(d, now) === "due");
  const purgeSlot = el("div", { id: "deletions-purge" });
  const purged = api.params.get("purged");
  append(container, [
    purged !== null ? el("p", { class: "banner ok", role: "status", text: `Purged ${purged} deletion${purged === "1" ? "" : "s"}: their sealed rows are destroyed.` }) : null,
    el("p", { class: "muted", id: "deletions-count", text: `${deletions.length} deletion${deletions.length === 1 ? "" : "s"}, newest first. A user is deleted from their page (Users → the user → Delete user).` }),
    card("Deletions",
      table(["Id", "State", "User", "Ticket", "By", "Applied", "Undo until"], deletions.map((d) => [
        el("a", { href: `#/deletions?id=${d.id}`, class: "deletion-link", text: String(d.id) }),
        statePill(d, now),
        el("a", { href: `#/users?id=${encodeURIComponent(d.userID)}`, class: "details", text: d.userID }),
        d.ticket, d.actor, time(d.appliedAt), deadline(d, now),
      ]), { caption: "User deletions, newest first", empty: "No user has been deleted." }),
      due.length ? purgeButton(api, purgeSlot, due) : null, purgeSlot)]);
}

/** `restorable`, `due` (the deadline passed, the rows not yet purged), `undone` or `purged`. */
function state(d, now) {
  if (d.status !== "applied") return d.status;
  return Date.parse(d.retainUntil) > now ? "restorable" : "due";
}

const STATE_PILLS = { restorable: ["staged", "restorable"], due: ["warning", "purge due"], undone: ["retired", "undone"], purged: ["unknown", "purged"] };

function statePill(d, now) {
  const [status, label] = STATE_PILLS[state(d, now)] ?? ["unknown", d.status];
  return pill(status, label);
}

function deadline(d, now) {
  const s = state(d, now);
  if (s === "restorable") return time(d.retainUntil);
  if (s === "due") return el("span", {}, time(d.retainUntil), el("small", { class: "warn", text: " (passed: purged at the next recorded health run)" }));
  if (s === "purged") return el("span", {}, "purged ", time(d.purgedAt));
  return el("span", {}, "undone ", time(d.undoneAt));
}

function purgeButton(api, slot, due) {
  const button = el("button", { type: "button", class: "secondary", id: "deletions-purge-button", text: `Purge what is due (${due.length})…` });
  button.addEventListener("click", () => confirmInline(slot, {
    question: `Destroy the sealed rows of ${due.length} deletion${due.length === 1 ? "" : "s"} whose undo deadline has passed (${due.map((d) => d.id).join(", ")})? They cannot be undone after this; their records stay.`,
    confirmLabel: "Purge", danger: true, returnTo: button,
    action: async () => {
      try {
        const result = await api.post("/api/deletions/purge", {});
        api.navigate(`#/deletions?purged=${result.purged.length}&t=${Date.now()}`);
      } catch (error) {
        clear(slot).append(errorBanner(error));
      }
    },
  }));
  return el("div", { class: "actions" }, button);
}

async function detailCard(api, id) {
  const d = await api.get(`/api/deletions/${encodeURIComponent(id)}`);
  const now = Date.now();
  const s = state(d, now);
  const tables = Object.entries(d.deleted).sort(([a], [b]) => a.localeCompare(b));
  const purgeText = {
    restorable: ["The deleted rows are kept sealed until the undo deadline (", time(d.retainUntil), "); the first recorded health run after that (or a purge) destroys them."],
    due: "The undo deadline has passed: the next recorded health run (or a purge on the Deletions page) destroys the sealed rows.",
    undone: "Undone: the rows are back; nothing is left to purge.",
    purged: ["Purged ", time(d.purgedAt), ": the sealed rows are destroyed; only this record remains."],
  }[s];
  return card(`Deletion ${d.id}`,
    el("div", { id: "deletion-detail" },
      el("p", { class: "switch-state" }, statePill(d, now), " ", el("span", { id: "deletion-deadline" }, deadline(d, now))),
      facts([
        ["User", el("span", {}, el("a", { href: `#/users?id=${encodeURIComponent(d.userID)}`, text: d.status === "applied" ? "(deleted)" : "Open the user" }), " ", copyable(d.userID, "user id"))],
        ["Plan", copyable(d.planID, "plan id")], ["Ticket", d.ticket], ["Applied", el("span", {}, time(d.appliedAt), ` by ${d.actor}`)],
        ["Undo until", time(d.retainUntil)], ["Purge", el("span", { id: "deletion-purge-state" }, purgeText)],
        ["Apple tokens", d.revocation.length
          ? el("ul", { class: "samples" }, d.revocation.map((r) => el("li", {}, el("code", { text: r.accountID }), ` ${r.status}: ${r.detail}`)))
          : d.noRevokeReason ? `not revoked: ${d.noRevokeReason}` : "no Apple account"],
        d.undoneAt ? ["Undone", el("span", {}, time(d.undoneAt), ` by ${d.undoneBy ?? "?"}: ${d.undoReason ?? ""}`)] : null,
      ].filter(Boolean)),
      el("h3", { text: "Rows deleted" }),
      table(["Table", "Rows"], tables.map(([name, count]) => [el("code", { text: name }), String(count)]), { caption: "Rows deleted per table" }),
      el("p", { class: "muted small", text: "Rows are counted by table; their values are never shown. Token values are never restored." }),
      s === "restorable" ? undoForm(api, d) : null));
}

/** A reason and an Undo button: the user's rows come back (tokens empty); the reason goes to the record and the audit log. */
function undoForm(api, d) {
  const reason = el("textarea", { id: "deletion-undo-reason", rows: "2", required: true, maxlength: "2000", placeholder: "deleted by mistake, SUP-1240" });
  const submit = el("button", { type: "submit", class: "danger", id: "deletion-undo-submit", text: `Undo deletion ${d.id}` });
  const outcome = el("div", { id: "deletion-undo-result", "aria-live": "polite" });
  const form = el("form", { class: "stack confirm", "aria-label": `Undo deletion ${d.id}` },
    el("p", {}, `Undo deletion ${d.id}: user ${d.userID} and every row it took come back, but no token (they were revoked or are not kept). The deadline is `, time(d.retainUntil), "."),
    el("label", { for: "deletion-undo-reason", text: "Reason (kept in the record and the audit log)" }), reason,
    el("div", { class: "actions" }, submit), outcome);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!reason.value.trim()) { clear(outcome).append(errorBanner(new Error("A reason is required."))); reason.focus(); return; }
    submit.disabled = true;
    try {
      const result = await api.post(`/api/deletions/${d.id}/undo`, { reason: reason.value });
      clear(outcome).append(el("div", { class: "banner ok", role: "status", id: "deletion-undone" },
        `Deletion ${result.deletionID} undone: ${result.rowsRestored} row(s) restored${result.restoredAsNull.length ? `; ${result.restoredAsNull.join(", ")} come back empty` : ""}. `,
        el("a", { href: `#/users?id=${encodeURIComponent(result.userID)}`, id: "deletion-undone-user", text: "Open the user" })));
    } catch (error) {
      clear(outcome).append(errorBanner(error));
      submit.disabled = false;
    }
  });
  return el("div", {}, el("h3", { text: "Undo" }), form);
}
