// Merges: plan a merge of a split identity (U2, merged away, into U1, kept), review the server's
// diff, decide its conflicts (each choice plans again), apply the plan with a ticket, list merges and
// undo one with a reason. Every rule is the server's (MergePlanner, MergeApplier, MergeUndo); the page
// shows what `gatehouse merge plan` prints, which never holds a token or password value.
// Links: #/merges?from=U2&into=U1 plans at once (the Duplicates page and a user's detail link here);
// #/merges?id=N shows one merge.
import { append, card, clear, confirmInline, copyable, el, errorBanner, facts, field, findings, table, time } from "../dom.js";

const SIDE_LABELS = { target: "U1's (kept user)", source: "U2's (merged away)", both: "keep both", true: "carry to U1", false: "drop" };
const FIELD_LABELS = {
  keepEmail: "Which email U1 ends with", keepSubscription: "Which live subscription stays live",
  keepPassword: "Whose password U1 keeps", sameProvider: "Two accounts of one provider", carryRoles: "Roles only U2 had",
};
const SHOWN_PER_GROUP = 50;

export async function render(container, api) {
  const params = Object.fromEntries(api.params);
  const canChange = api.hasRole("support");
  container.append(el("h1", { text: params.id ? `Merge ${params.id}` : "Merges" }));
  if (params.id) {
    container.append(el("p", {}, el("a", { href: "#/merges", text: "← All merges" })));
    container.append(await detailCard(api, params.id, canChange));
    return;
  }
  const list = el("div", { id: "merge-list", "aria-live": "polite" });
  const undoSlot = el("div", { id: "merge-undo" });
  const reloadList = () => loadList(api, list, undoSlot, canChange);
  container.append(planCard(api, params, canChange, reloadList), card("Merges", list, undoSlot));
  await reloadList();
}

// MARK: Planning

function planCard(api, params, canChange, reloadList) {
  const from = el("input", { id: "merge-from", name: "from", value: params.from ?? "", required: true, maxlength: "320", spellcheck: "false",
    autocomplete: "off", placeholder: "user id, exact email or better_auth|<id>", disabled: !canChange });
  const into = el("input", { id: "merge-into", name: "into", value: params.into ?? "", required: true, maxlength: "320", spellcheck: "false",
    autocomplete: "off", placeholder: "user id, exact email or better_auth|<id>", disabled: !canChange });
  const swap = el("button", { type: "button", class: "secondary", id: "merge-swap", text: "Swap", disabled: !canChange,
    title: "Merge the other way round" });
  const submit = el("button", { type: "submit", class: "primary", id: "merge-plan-submit", text: "Plan the merge", disabled: !canChange });
  const form = el("form", { class: "filters", "aria-label": "Plan a merge" },
    field("From (U2, merged away)", from), field("Into (U1, kept: its id and sub stay)", into),
    el("div", { class: "actions" }, submit, swap));
  const result = el("div", { id: "merge-plan", "aria-live": "polite" });
  let decisions = {};

  /** Plans with the form's users and the decisions so far; `focusId` gets the focus back after a choice re-plans. */
  async function plan(focusId) {
    const body = { from: from.value.trim(), into: into.value.trim(), ...decisions };
    if ("carryRoles" in body) body.carryRoles = body.carryRoles === "true";
    submit.disabled = true;
    clear(result).append(el("p", { class: "muted", text: "Planning…" }));
    try {
      const answer = await api.post("/api/merges/plan", body);
      clear(result).append(planView(api, answer, (fieldName, value) => {
        decisions = { ...decisions, [fieldName]: value };
        plan(`merge-${fieldName}-${value}`);
      }, reloadList));
      if (focusId) document.getElementById(focusId)?.focus();
    } catch (error) {
      clear(result).append(errorBanner(error));
    } finally {
      submit.disabled = !canChange;
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    decisions = {};
    history.replaceState(null, "", `#/merges?from=${encodeURIComponent(from.value.trim())}&into=${encodeURIComponent(into.value.trim())}`);
    plan();
  });
  swap.addEventListener("click", () => { [from.value, into.value] = [into.value, from.value]; decisions = {}; clear(result); from.focus(); });
  if (canChange && params.from && params.into) plan();

  return card("Plan a merge",
    el("p", { class: "muted", text: "U1 keeps its id, so the sub better_auth|U1 and everything keyed on it stay. U2's accounts move to U1, U2's sessions are deleted (its devices sign in again and land on U1), sync rows follow, and U2's user row is deleted. Nothing changes until you apply a plan, and an applied merge can be undone while nothing has touched its rows." }),
    canChange ? null : el("p", { class: "banner info", text: "Planning, applying and undoing merges needs the support role; you can read the merges below." }),
    form, result);
}

function planView(api, answer, decide, reloadList) {
  const plan = answer.plan;
  const byKind = Object.fromEntries(answer.decisions.map((d) => [d.kind, d]));
  const offered = new Set();
  const wrap = el("div", { class: "stack" });
  wrap.append(
    plan.planID
      ? el("p", { class: "banner ok", id: "merge-plan-id" }, "Plan ", copyable(plan.planID, "plan id"), " is stored: review it, then apply it with a ticket.")
      : el("p", { class: "banner error", id: "merge-plan-id", role: "alert", text: `Not stored: ${plan.unresolved} conflict${plan.unresolved === 1 ? "" : "s"} need${plan.unresolved === 1 ? "s" : ""} a decision below.` }),
    facts([["From (U2)", el("span", {}, el("code", { text: plan.source }), ` ${plan.sourceEmail || "(no email)"}`)],
      ["Into (U1)", el("span", {}, el("code", { text: plan.target }), ` ${plan.targetEmail || "(no email)"}`)],
      ["Changes", `${plan.rowsUpdated} row${plan.rowsUpdated === 1 ? "" : "s"} updated, ${plan.rowsDeleted} deleted`]]),
    el("h3", { text: "Conflicts and decisions" }),
    el("ul", { class: "findings", id: "merge-conflicts" }, plan.conflicts.map((conflict) => {
      const decision = byKind[conflict.kind];
      const choices = decision && !offered.has(decision.field) ? choiceGroup(decision, decide) : null;
      if (decision) offered.add(decision.field);
      return el("li", { class: `finding ${conflict.decision ? "ok" : "critical"}`, "data-kind": conflict.kind },
        el("strong", { text: `${conflict.kind}: ` }), conflict.message,
        el("div", { class: conflict.decision ? "small" : "small bad" }, "→ ", conflict.decision ?? "UNDECIDED: choose below"),
        choices);
    })),
    plan.warnings.length ? el("h3", { text: "Warnings" }) : null,
    findings(plan.warnings.map((message) => ({ severity: "warning", message })), { id: "merge-warnings" }),
    el("h3", { text: "What changes" }),
    changesView(plan.changes),
    el("p", { class: "muted small", text: `Follows foreign keys: ${plan.references.length ? plan.references.join(", ") : "(none)"}. Token and password values are never shown.` }));
  if (plan.planID) wrap.append(applyForm(api, plan, reloadList));
  return wrap;
}

/** Radio buttons for one decision; choosing one plans again with it. */
function choiceGroup(decision, decide) {
  const name = `merge-decision-${decision.field}`;
  return el("fieldset", { class: "choices", id: name },
    el("legend", { text: FIELD_LABELS[decision.field] ?? decision.field }),
    decision.values.map((value) => {
      const id = `merge-${decision.field}-${value}`;
      const radio = el("input", { type: "radio", name, id, value, checked: decision.chosen === value });
      radio.addEventListener("change", () => { if (radio.checked) decide(decision.field, value); });
      return el("span", { class: "choice" }, radio, el("label", { for: id, text: SIDE_LABELS[value] ?? value }));
    }));
}

function changesView(changes) {
  const groups = [];
  for (const change of changes) if (!groups.includes(change.group)) groups.push(change.group);
  if (groups.length === 0) return el("p", { class: "muted", text: "No row changes." });
  return el("div", { id: "merge-changes" }, groups.map((group) => {
    const rows = changes.filter((c) => c.group === group);
    const shown = rows.slice(0, SHOWN_PER_GROUP);
    return el("div", {},
      el("h3", { text: `${group} (${rows.length})` }),
      table(["Change", "Table", "Row", "Sets", "Why"], shown.map((c) => [
        el("span", { class: c.operation === "delete" ? "bad" : "", text: c.operation }), c.table, el("code", { class: "details", text: c.key }),
        Object.keys(c.set).length ? el("span", { class: "details", text: Object.entries(c.set).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k} → ${v}`).join(", ") }) : "—",
        c.reason,
      ]), { caption: `Changes: ${group}` }),
      rows.length > shown.length ? el("p", { class: "muted small", text: `… and ${rows.length - shown.length} more.` }) : null);
  }));
}

function applyForm(api, plan, reloadList) {
  const ticket = el("input", { id: "merge-ticket", name: "ticket", required: true, maxlength: "200", spellcheck: "false", autocomplete: "off", placeholder: "SUP-1234" });
  const submit = el("button", { type: "submit", class: "danger", id: "merge-apply", text: "Apply the merge" });
  const slot = el("div", { id: "merge-apply-confirm" });
  const outcome = el("div", { id: "merge-apply-result", "aria-live": "polite" });
  const form = el("form", { class: "stack", "aria-label": "Apply the plan" },
    field("Support ticket", ticket, "Kept in the merge record and the audit log."), el("div", { class: "actions" }, submit));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    confirmInline(slot, {
      question: `Merge ${plan.source} into ${plan.target} (${plan.rowsUpdated} updated, ${plan.rowsDeleted} deleted) under ticket ${ticket.value.trim()}?`,
      confirmLabel: "Apply", danger: true, returnTo: submit,
      action: async () => {
        try {
          const result = await api.post(`/api/merges/${encodeURIComponent(plan.planID)}/apply`, { ticket: ticket.value });
          clear(slot);
          submit.disabled = true;
          clear(outcome).append(el("div", { class: "banner ok", role: "status", id: "merge-applied" },
            `Merge ${result.mergeID} applied: ${result.source} merged into ${result.target} (ticket ${result.ticket}). `,
            el("a", { href: `#/merges?id=${result.mergeID}`, text: "Open it" }), " · ",
            el("a", { href: `#/audit?action=${encodeURIComponent("merge.*")}`, text: "Audit entries" })));
          await reloadList();
        } catch (error) {
          clear(slot);
          clear(outcome).append(errorBanner(error));
          submit.focus();
        }
      },
    });
  });
  return el("div", {}, el("h3", { text: "Apply" }), form, slot, outcome);
}

// MARK: Merges

async function loadList(api, list, undoSlot, canChange) {
  try {
    const records = await api.get("/api/merges", { limit: 100 });
    clear(list).append(
      table(["Id", "Status", "Applied", "From (U2)", "Into (U1)", "Ticket", "By", ""], records.map((r) => [
        el("a", { href: `#/merges?id=${r.id}`, class: "merge-link", text: String(r.id) }),
        el("span", { class: r.status === "undone" ? "muted" : "", text: r.status }), time(r.appliedAt),
        el("code", { class: "details", text: r.source }), el("code", { class: "details", text: r.target }), r.ticket, r.actor,
        canChange && r.status === "applied"
          ? el("button", { type: "button", class: "secondary small-button", id: `merge-undo-${r.id}`, text: "Undo…",
            onclick: (event) => undoForm(api, undoSlot, r, event.currentTarget, () => loadList(api, list, undoSlot, canChange)) })
          : "",
      ]), { caption: "Merges, newest first", empty: "No merges yet." }));
  } catch (error) {
    clear(list).append(errorBanner(error));
  }
}

/** A reason field and an Undo button in `slot` for merge `record`. */
function undoForm(api, slot, record, returnTo, done) {
  const reason = el("textarea", { id: "merge-undo-reason", rows: "2", required: true, maxlength: "2000", placeholder: "wrong person, SUP-1240" });
  const submit = el("button", { type: "submit", class: "danger", id: "merge-undo-submit", text: `Undo merge ${record.id}` });
  const cancel = el("button", { type: "button", class: "secondary", text: "Cancel" });
  const outcome = el("div", { id: "merge-undo-result", "aria-live": "polite" });
  const form = el("form", { class: "stack confirm", "aria-label": `Undo merge ${record.id}` },
    el("p", { text: `Undo merge ${record.id}: ${record.source} and ${record.target} become separate users again, if nothing touched the merged rows since.` }),
    field("Reason", reason, "Kept in the merge record and the audit log."), el("div", { class: "actions" }, submit, cancel), outcome);
  cancel.addEventListener("click", () => { clear(slot); returnTo?.focus(); });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    submit.disabled = true;
    try {
      const result = await api.post(`/api/merges/${record.id}/undo`, { reason: reason.value });
      await done();
      append(clear(slot), [el("p", { class: "banner ok", role: "status", id: "merge-undone",
        text: `Merge ${result.mergeID} undone: ${result.rowsRestored} row(s) restored; ${result.source} and ${result.target} are separate users again.` })]);
    } catch (error) {
      clear(outcome).append(errorBanner(error));
      submit.disabled = false;
    }
  });
  clear(slot).append(form);
  reason.focus();
}

async function detailCard(api, id, canChange) {
  const record = await api.get(`/api/merges/${encodeURIComponent(id)}`);
  const counts = (map) => (Object.keys(map).length ? Object.entries(map).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${v} ${k}`).join(", ") : "none");
  const undoSlot = el("div", { id: "merge-undo" });
  const reload = () => api.navigate(`#/merges?id=${record.id}&t=${Date.now()}`);
  return card(`Merge ${record.id} (${record.status})`,
    el("div", { id: "merge-detail" },
      facts([["Status", record.status], ["Plan", copyable(record.planID, "plan id")],
        ["From (U2)", el("a", { href: `#/users?id=${encodeURIComponent(record.source)}`, text: record.source })],
        ["Into (U1)", el("a", { href: `#/users?id=${encodeURIComponent(record.target)}`, text: record.target })],
        ["Ticket", record.ticket], ["Applied", el("span", {}, time(record.appliedAt), ` by ${record.actor}`)], ["Planned", time(record.plannedAt)],
        record.undoneAt ? ["Undone", el("span", {}, time(record.undoneAt), ` by ${record.undoneBy ?? "?"}: ${record.undoReason ?? ""}`)] : null,
        ["Updated", counts(record.summary.updated)], ["Deleted", counts(record.summary.deleted)]].filter(Boolean)),
      canChange && record.status === "applied"
        ? el("div", { class: "actions" }, el("button", { type: "button", class: "secondary", id: `merge-undo-${record.id}`, text: "Undo…",
          onclick: (event) => undoForm(api, undoSlot, record, event.currentTarget, reload) }))
        : null,
      undoSlot,
      el("h3", { text: `Rows touched (${(record.rows ?? []).length})` }),
      (record.rows ?? []).length ? el("ul", { class: "samples" }, record.rows.map((row) => el("li", { class: "details", text: row }))) : el("p", { class: "muted", text: "None." }),
      el("p", { class: "muted small", text: "Rows are named by table and key; their values are never shown." })));
}
