// Merges: plan a merge of a split identity (U2, merged away, into U1, kept), review the server's
// diff, decide its conflicts (each choice plans again), apply the plan with a ticket, list merges and
// undo one with a reason. Every rule is the server's (MergePlanner, MergeApplier, MergeUndo); the page
// shows what `gatehouse merge plan` prints, which never holds a token or password value.
// Links: #/merges?from=U2&into=U1 plans at once (the Duplicates page and a user's detail link here), with any
// decision named as the plan's field (&sameProvider=source&keepEmail=source: the Apple transfer page's stragglers);
// #/merges?id=N shows one merge.
import { append, card, clear, confirmInline, copyable, el, errorBanner, facts, field, findings, table, time } from "../dom.js";

const SIDE_TAGS = { target: "U1, kept", source: "U2, merged away" };
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
  // Decisions a link names, as the plan's fields; the server checks their values.
  let decisions = Object.fromEntries(Object.keys(FIELD_LABELS).filter((name) => params[name]).map((name) => [name, params[name]]));
  // Both users' details for the pair being planned (names, accounts, subscriptions, roles), read once per pair.
  let sides = { key: "", source: null, target: null };

  /** Plans with the form's users and the decisions so far; `focusId` gets the focus back after a choice re-plans. */
  async function plan(focusId) {
    const body = { from: from.value.trim(), into: into.value.trim(), ...decisions };
    if ("carryRoles" in body) body.carryRoles = body.carryRoles === "true";
    submit.disabled = true;
    clear(result).append(el("p", { class: "muted", text: "Planning…" }));
    try {
      const answer = await api.post("/api/merges/plan", body);
      const key = `${answer.plan.source}|${answer.plan.target}`;
      if (sides.key !== key) {
        const read = (id) => api.get(`/api/users/${encodeURIComponent(id)}`, { sessions: 0 }).catch(() => null);
        const [source, target] = await Promise.all([read(answer.plan.source), read(answer.plan.target)]);
        sides = { key, source, target };
      }
      clear(result).append(planView(api, answer, sides, (fieldName, value) => {
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

function planView(api, answer, sides, decide, reloadList) {
  const plan = answer.plan;
  const needed = plan.unresolved;
  const byKind = Object.fromEntries(answer.decisions.map((d) => [d.kind, d]));
  const offered = new Set();
  const wrap = el("div", { class: "stack" });
  append(wrap, [
    plan.planID
      ? el("p", { class: "banner ok", id: "merge-plan-id" }, "Plan ", copyable(plan.planID, "plan id"), " is stored: review it, then apply it with a ticket.")
      : el("p", { class: "banner info", id: "merge-plan-id", role: "status" },
        el("strong", { text: `${needed} decision${needed === 1 ? "" : "s"} needed` }), ": choose below which value U1 keeps; the plan is stored once each is made."),
    el("div", { class: "grid two sides", id: "merge-sides" },
      sideCard("Merged away (U2)", plan.source, plan.sourceEmail, sides.source),
      sideCard("Kept (U1)", plan.target, plan.targetEmail, sides.target)),
    facts([["Changes", `${plan.rowsUpdated} row${plan.rowsUpdated === 1 ? "" : "s"} updated, ${plan.rowsDeleted} deleted`]]),
    el("h3", { text: "Conflicts and decisions" }),
    el("ul", { class: "findings", id: "merge-conflicts" }, plan.conflicts.map((conflict) => {
      const decision = byKind[conflict.kind];
      const choices = decision && !offered.has(decision.field) ? choiceGroup(decision, plan, sides, decide) : null;
      if (decision) offered.add(decision.field);
      return el("li", { class: `finding ${conflict.decision ? "ok" : "note"}`, "data-kind": conflict.kind },
        el("strong", { text: `${conflict.kind}: ` }), conflict.message,
        el("div", { class: "small" }, "→ ", conflict.decision ?? el("strong", { text: "Needs a decision: choose below" })),
        choices);
    })),
    plan.warnings.length ? el("h3", { text: "Warnings" }) : null,
    findings(plan.warnings.map((message) => ({ severity: "warning", message })), { id: "merge-warnings" }),
    el("h3", { text: "What changes" }),
    changesView(plan.changes),
    el("p", { class: "muted small", text: `Follows foreign keys: ${plan.references.length ? plan.references.join(", ") : "(none)"}. Token and password values are never shown.` })]);
  if (plan.planID) wrap.append(applyForm(api, plan, sides, reloadList));
  return wrap;
}

/** "Ana Costa <ana@example.com>", or the id when the user is not known. */
function who(detail, id, email) {
  const name = detail?.user?.name;
  const mail = email || detail?.user?.email;
  return name ? `${name}${mail ? ` <${mail}>` : ""}` : (mail || id);
}

/** One side of the merge: who the user is and what they hold, for reading both side by side. */
function sideCard(title, id, email, detail) {
  const accounts = detail?.accounts ?? [];
  const subscriptions = detail?.sync?.subscriptions ?? [];
  return el("section", { class: "side card", "aria-label": title },
    el("h3", { text: title }),
    el("p", { class: "side-name" }, el("a", { href: `#/users?id=${encodeURIComponent(id)}`, text: detail?.user?.name || "(no name)" })),
    facts([["Email", email || "(none)"], ["User id", copyable(id, "user id")],
      ["Accounts", accounts.length ? accounts.map((a) => a.providerId).join(", ") : "none"],
      ["Subscriptions", subscriptions.length ? subscriptions.map((s) => `${s.plan} (${s.status})`).join(", ") : "none"],
      ["Created", time(detail?.user?.createdAt)]]));
}

/** What choosing `value` for `field` keeps, in the users' own values. */
function choiceText(field, value, plan, sides) {
  const side = value === "source" ? sides.source : sides.target;
  switch (field) {
    case "keepEmail": return (value === "source" ? plan.sourceEmail : plan.targetEmail) || "(no email)";
    case "keepSubscription": {
      const subscriptions = side?.sync?.subscriptions ?? [];
      return subscriptions.length ? subscriptions.map((s) => `${s.plan} (${s.status}, ${s.id})`).join(", ") : `${SIDE_TAGS[value]}'s subscription`;
    }
    case "keepPassword": return `the password of ${who(side, value === "source" ? plan.source : plan.target, value === "source" ? plan.sourceEmail : plan.targetEmail)}`;
    case "sameProvider": {
      if (value === "both") return "both accounts";
      const other = value === "source" ? sides.target : sides.source;
      const shared = new Set((other?.accounts ?? []).map((a) => a.providerId));
      const mine = (side?.accounts ?? []).filter((a) => shared.has(a.providerId));
      return mine.length ? mine.map((a) => `${a.providerId} account ${a.accountId}`).join(", ") : `${SIDE_TAGS[value]}'s account`;
    }
    case "carryRoles": {
      const have = new Set((sides.target?.sync?.roles ?? []).map((r) => r.role));
      const only = (sides.source?.sync?.roles ?? []).map((r) => r.role).filter((r) => !have.has(r));
      const roles = only.length ? only.join(", ") : "U2's roles";
      return value === "true" ? `carry ${roles} to U1` : `drop ${roles}`;
    }
    default: return value;
  }
}

/** Radio buttons for one decision, each naming the value it keeps; choosing one plans again with it. */
function choiceGroup(decision, plan, sides, decide) {
  const name = `merge-decision-${decision.field}`;
  return el("fieldset", { class: "choices", id: name },
    el("legend", { text: FIELD_LABELS[decision.field] ?? decision.field }),
    decision.values.map((value) => {
      const id = `merge-${decision.field}-${value}`;
      const radio = el("input", { type: "radio", name, id, value, checked: decision.chosen === value });
      radio.addEventListener("change", () => { if (radio.checked) decide(decision.field, value); });
      return el("span", { class: "choice" }, radio, el("label", { for: id },
        el("span", { class: "choice-value", text: choiceText(decision.field, value, plan, sides) }),
        SIDE_TAGS[value] ? el("small", { class: "muted", text: ` (${SIDE_TAGS[value]})` }) : null));
    }));
}

export function changesView(changes) {
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

function applyForm(api, plan, sides, reloadList) {
  const ticket = el("input", { id: "merge-ticket", name: "ticket", required: true, maxlength: "200", spellcheck: "false", autocomplete: "off", placeholder: "SUP-1234" });
  const submit = el("button", { type: "submit", class: "danger", id: "merge-apply", text: "Apply the merge" });
  const slot = el("div", { id: "merge-apply-confirm" });
  const outcome = el("div", { id: "merge-apply-result", "aria-live": "polite" });
  const form = el("form", { class: "stack", "aria-label": "Apply the plan" },
    field("Support ticket", ticket, "Kept in the merge record and the audit log."), el("div", { class: "actions" }, submit));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    confirmInline(slot, {
      question: `Merge ${who(sides.source, plan.source, plan.sourceEmail)} (${plan.source}) into ${who(sides.target, plan.target, plan.targetEmail)} (${plan.target}): ${plan.rowsUpdated} rows updated, ${plan.rowsDeleted} deleted, under ticket ${ticket.value.trim()}?`,
      confirmLabel: "Apply", danger: true, returnTo: submit,
      action: async () => {
        try {
          const result = await api.post(`/api/merges/${encodeURIComponent(plan.planID)}/apply`, { ticket: ticket.value });
          clear(slot);
          submit.disabled = true;
          clear(outcome).append(el("div", { class: "banner ok", role: "status", id: "merge-applied" },
            `Merge ${result.mergeID} applied: ${who(sides.source, result.source, plan.sourceEmail)} merged into ${who(sides.target, result.target, plan.targetEmail)} (ticket ${result.ticket}). `,
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

/** A merged user in a list: name, email, and the id in small type. */
function person(name, email, id) {
  return el("span", { class: "pair-user" }, el("span", { text: name || "(no name)" }), email ? el("span", { class: "small", text: email }) : null,
    el("code", { class: "details small muted", text: id }));
}

async function loadList(api, list, undoSlot, canChange) {
  try {
    const records = await api.get("/api/merges", { limit: 100 });
    clear(list).append(
      table(["Id", "Status", "Applied", "From (U2)", "Into (U1)", "Ticket", "By", ""], records.map((r) => [
        el("a", { href: `#/merges?id=${r.id}`, class: "merge-link", text: String(r.id) }),
        el("span", { class: r.status === "undone" ? "muted" : "", text: r.status }), time(r.appliedAt),
        person(r.sourceName, r.sourceEmail, r.source), person(r.targetName, r.targetEmail, r.target), r.ticket, r.actor,
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
    el("p", { text: `Undo merge ${record.id}: ${who({ user: { name: record.sourceName } }, record.source, record.sourceEmail)} and ${who({ user: { name: record.targetName } }, record.target, record.targetEmail)} become separate users again, if nothing touched the merged rows since.` }),
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
        ["From (U2)", el("span", {}, el("a", { href: `#/users?id=${encodeURIComponent(record.source)}`, text: who({ user: { name: record.sourceName } }, record.source, record.sourceEmail) }), " ", copyable(record.source, "user id"))],
        ["Into (U1)", el("span", {}, el("a", { href: `#/users?id=${encodeURIComponent(record.target)}`, text: who({ user: { name: record.targetName } }, record.target, record.targetEmail) }), " ", copyable(record.target, "user id"))],
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
