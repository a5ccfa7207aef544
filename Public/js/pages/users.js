// Users: search by any part of the email, name, user id, sub or provider account id, a page at a time (sorted,
// filtered, "Next page" following the server's nextCursor); one user's detail with
// linked accounts (never token values, only whether each is present), flags, sessions, the sync row,
// workspaces, subscriptions, roles and merge history; and the integrity check of the whole store.
// The query, its sort, filters and page, and the open user live in the hash (#/users?q=ana&sort=created&cursor=…&id=…)
// so a view can be linked.
import { append, card, clear, copyable, el, errorBanner, facts, field, table, time } from "../dom.js";
import { duplicatesCard } from "./user-duplicates.js";
import { timelineCard } from "./user-timeline.js";

const KINDS = [["", "Recognise it"], ["email", "Email (any part)"], ["name", "Name"], ["id", "User id"], ["sub", "Sync sub"], ["account", "Provider account id"]];
const LIMITS = ["20", "50", "200"];
const SORTS = [["", "Default"], ["match", "Starting with it first"], ["email", "Email"], ["name", "Name"], ["created", "Newest first"], ["lastSignIn", "Last sign-in"]];
const PROVIDERS = [["", "Any provider"], ["apple", "Apple"], ["google", "Google"], ["credential", "Email and password"]];
const FLAGS = [["", "Any"], ["relay", "Relay address"], ["splitIdentity", "Split identity"], ["googleDisabled", "Google disabled"], ["deletionPending", "Deletion pending"]];
// What the hash keeps of a search, in the order it writes them; `cursor` is the page.
const SEARCH_KEYS = ["q", "by", "limit", "sort", "provider", "flag", "createdAfter", "createdBefore", "cursor"];

export async function render(container, api) {
  const params = Object.fromEntries(api.params);
  container.append(el("h1", { text: params.id ? "User" : "Users" }));
  if (params.id) {
    container.append(el("p", { class: "actions wrap" }, el("a", { href: searchHash(params), text: "← Back to the search" }),
      el("a", { href: `#/merges?into=${encodeURIComponent(params.id)}`, id: "user-plan-merge", text: "Plan a merge into this user" })));
    let detail;
    try {
      detail = await api.get(`/api/users/${encodeURIComponent(params.id)}`, { sessions: 10 });
    } catch (error) {
      if (error?.status !== 404) throw error;
      container.append(await goneCard(api, params.id, error));
      return;
    }
    container.append(await renderDetail(detail, params), await duplicatesCard(api, detail), await timelineCard(api, detail));
    if (api.hasRole("admin")) container.append(deletionCard(api, detail.user));
    return;
  }
  container.append(searchCard(api, params));
  if (params.q) container.append(await renderResults(api, params));
  container.append(integrityCard(api));
}

/** No such user: when a deletion took them, say so and link to it (the deletions are an admin's to read). */
async function goneCard(api, id, error) {
  const deletion = api.hasRole("admin")
    ? (await api.get("/api/deletions", { limit: 10000 }).catch(() => [])).find((d) => d.userID === id && d.status !== "undone")
    : null;
  if (!deletion) {
    return card("No such user", errorBanner(error),
      el("p", { class: "muted", id: "user-gone", text: api.hasRole("admin")
        ? "No deletion names this id either: check it, or search for the user."
        : "If the user was deleted on request, an admin finds the deletion on the Deletions page." }));
  }
  const restorable = deletion.status === "applied" && Date.parse(deletion.retainUntil) > Date.now();
  return card("This user was deleted",
    el("p", { class: "banner info", id: "user-gone" },
      `Deleted by deletion ${deletion.id} (ticket ${deletion.ticket}) by ${deletion.actor} `, time(deletion.appliedAt), "; ",
      restorable ? ["it can be undone; the deadline is ", time(deletion.retainUntil), ". "] : `${deletion.status === "purged" ? "purged: it can no longer be undone" : "the undo deadline has passed"}. `,
      el("a", { href: `#/deletions?id=${deletion.id}`, id: "user-gone-deletion", text: restorable ? "Open the deletion to undo it" : "Open the deletion" })));
}

function searchHash(params) {
  const search = new URLSearchParams(SEARCH_KEYS.map((key) => [key, params[key]]).filter(([, v]) => v));
  return `#/users${search.toString() ? `?${search}` : ""}`;
}

function choice(id, name, choices, current) {
  return el("select", { id, name }, choices.map(([value, label]) => el("option", { value, selected: value === (current ?? ""), text: label })));
}

function searchCard(api, params) {
  const q = el("input", { id: "user-q", name: "q", type: "search", value: params.q ?? "", required: true, maxlength: "512", spellcheck: "false",
    placeholder: "ana@, Ana Costa, a user id, better_auth|…, a provider account id", "data-search": true, "aria-keyshortcuts": "/" });
  const by = choice("user-by", "by", KINDS, params.by);
  const limit = el("select", { id: "user-limit", name: "limit" }, LIMITS.map((n) => el("option", { value: n, selected: n === (params.limit ?? "20"), text: n })));
  const sort = choice("user-sort", "sort", SORTS, params.sort);
  const provider = choice("user-provider", "provider", PROVIDERS, params.provider);
  const flag = choice("user-flag", "flag", FLAGS, params.flag);
  const after = el("input", { id: "user-created-after", name: "createdAfter", type: "date", value: params.createdAfter ?? "" });
  const before = el("input", { id: "user-created-before", name: "createdBefore", type: "date", value: params.createdBefore ?? "" });
  // On a phone the order and the filters fold behind one button, open when one of them is set.
  const refined = ["sort", "provider", "flag", "createdAfter", "createdBefore"].some((key) => params[key]);
  const more = ["Sort by", sort, "Provider", provider, "Flag", flag, "Created on or after", after, "Created before", before];
  const toggle = el("button", { type: "button", class: "secondary more-filters-toggle", id: "user-more-filters", "aria-expanded": String(refined),
    "aria-controls": "user-search-form", text: "Sort and filters" });
  const form = el("form", { class: `filters${refined ? " show-more" : ""}`, id: "user-search-form", role: "search", "aria-label": "Search users" },
    el("div", { class: "field span-2" }, el("label", { for: "user-q" }, "Find a user ", el("small", { class: "muted", text: "(press / from any page)" })), q), field("Match as", by), field("At most", limit),
    Array.from({ length: more.length / 2 }, (_, i) => el("div", { class: "more-filter" }, field(more[2 * i], more[2 * i + 1]))),
    el("div", { class: "actions" }, toggle, el("button", { type: "submit", class: "primary", id: "user-search", text: "Search" })));
  toggle.addEventListener("click", () => {
    const open = form.classList.toggle("show-more");
    toggle.setAttribute("aria-expanded", String(open));
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    // A new search starts at its first page.
    api.navigate(searchHash({ q: q.value.trim(), by: by.value, limit: limit.value, sort: sort.value, provider: provider.value, flag: flag.value,
      createdAfter: after.value, createdBefore: before.value }));
  });
  return card("Search", form,
    el("p", { class: "muted small", text: "Emails match any part of the address, the domain included (privaterelay, @privaterelay.appleid.com, ana@); names by case- and accent-insensitive substring; % and _ are ordinary characters." }));
}

async function renderResults(api, params) {
  const results = el("div", { id: "user-results", "aria-live": "polite" });
  try {
    const found = await api.get("/api/users", { q: params.q, by: params.by, limit: params.limit, sort: params.sort, provider: params.provider,
      flag: params.flag, createdAfter: params.createdAfter, createdBefore: params.createdBefore, cursor: params.cursor });
    const rows = found.users.map((u) => [
      el("a", { href: `${searchHash(params)}${searchHash(params).includes("?") ? "&" : "?"}id=${encodeURIComponent(u.id)}`, class: "user-link", text: u.name || u.email || u.id }),
      u.email || "—", u.providers.length ? u.providers.join(", ") : "none", time(u.createdAt), u.matchedBy,
      flagList(u.flags),
    ]);
    const page = params.cursor ? "a later page" : "the first page";
    results.append(
      el("p", { class: "muted", id: "user-count", text: `${found.users.length} user${found.users.length === 1 ? "" : "s"} on ${page}, sorted by ${sortLabel(found.sort)} (tried: ${found.kinds.join(", ")})${found.nextCursor ? "; more on the next page" : ""}` }),
      table(["User", "Email", "Providers", "Created", "Matched by", "Flags"], rows, { caption: "Matching users", empty: `No user matches “${found.query}”${params.cursor ? " after the previous page" : ""}.` }),
      pager(api, params, found));
  } catch (error) {
    results.append(errorBanner(error));
  }
  return card("Results", results);
}

function sortLabel(sort) {
  return { email: "email", name: "name", created: "newest first", lastSignIn: "last sign-in", match: "email, addresses starting with it first" }[sort] ?? sort;
}

/** "First page" (on a later page) and "Next page" (when the server gave a nextCursor): the page lives in the hash. */
function pager(api, params, found) {
  const controls = [];
  if (params.cursor) {
    controls.push(el("button", { type: "button", id: "user-first-page", text: "← First page", onclick: () => api.navigate(searchHash({ ...params, cursor: "" })) }));
  }
  if (found.nextCursor) {
    controls.push(el("button", { type: "button", class: "primary", id: "user-next-page", text: "Next page →",
      onclick: () => api.navigate(searchHash({ ...params, cursor: found.nextCursor })) }));
  }
  return controls.length ? el("nav", { class: "actions wrap", "aria-label": "Result pages" }, controls) : null;
}

function flagList(flags) {
  if (!flags || flags.length === 0) return "—";
  return el("ul", { class: "flags" }, flags.map((f) => el("li", { class: `flag ${f.code}`, title: f.message, text: f.code.replaceAll("_", " ") })));
}

async function renderDetail(detail, params) {
  const user = detail.user;
  const sync = detail.sync;
  const present = (yes) => (yes ? "present" : "none");
  const wrap = el("div", { id: "user-detail" });
  wrap.append(
    el("div", { class: "grid two" },
      card(user.name || user.email || user.id,
        facts([["User id", copyable(user.id, "user id")], ["Sync sub", copyable(sync.sub, "sync sub")], ["Name", user.name || "(none)"],
          ["Email", `${user.email || "(none)"}${user.emailVerified ? " (verified)" : " (NOT verified)"}`], ["Created", time(user.createdAt)],
          ["Updated", time(user.updatedAt)], user.role ? ["Role", user.role] : null,
          user.ban ? ["Banned", user.ban.banned ? `yes${user.ban.reason ? ` — ${user.ban.reason}` : ""}` : "no"] : null].filter(Boolean))),
      card("Flags", detail.flags.length
        ? el("ul", { class: "findings", id: "user-flags" }, detail.flags.map((f) => el("li", { class: "finding warning" }, el("strong", { text: `${f.code.replaceAll("_", " ")}: ` }), f.message)))
        : el("p", { class: "muted", id: "user-flags", text: "No flag on this user. Likely duplicates, if any, are in their own card below." }))),
    card(`Linked accounts (${detail.accounts.length})`,
      el("div", { id: "user-accounts", class: "accounts" }, table(["Provider", "Issuer", "Account id", "Created", "Updated", "Scopes", "Tokens"], detail.accounts.map((a) => [
        el("strong", { text: a.providerId }), a.issuer ?? el("small", { class: "muted", text: "not recorded (before Better Auth 1.7)" }),
        copyable(a.accountId, `${a.providerId} account id`), time(a.createdAt), time(a.updatedAt),
        a.scope ? el("ul", { class: "scopes" }, a.scope.split(/[\s,]+/).filter(Boolean).map((s) => el("li", { text: s }))) : "—",
        el("small", { text: `access ${present(a.hasAccessToken)}, refresh ${present(a.hasRefreshToken)}, id ${present(a.hasIdToken)}, password ${present(a.hasPassword)}` }),
      ]), { caption: "Linked accounts", empty: "No account rows: this user cannot sign in." })),
      el("p", { class: "muted small", text: "Token and password values are never read; only whether each is present." })),
    card(`Sessions (${detail.sessions.total} in all, ${detail.sessions.unexpired} unexpired)`,
      table(["Created", "Expires", "IP address", "User agent", "Impersonated by"], detail.sessions.latest.map((s) => [
        time(s.createdAt), el("span", {}, time(s.expiresAt), s.expired ? el("small", { class: "muted", text: " (expired)" }) : null),
        s.ipAddress ?? "—", el("small", { class: "details", text: s.userAgent ?? "—" }), s.impersonatedBy ?? "—",
      ]), { caption: "Latest sessions", empty: "No sessions." })),
    el("div", { class: "grid two" },
      card("Sync server",
        el("p", { id: "user-sync" }, sync.user
          ? el("span", {}, "users row ", el("code", { text: String(sync.user.id) }), ", created ", time(sync.user.createdAt))
          : el("strong", { class: "bad", text: "UNPROVISIONED: no users row for this sub" })),
        sync.missingTables.length ? el("p", { class: "muted", text: `This database has no sync table: ${sync.missingTables.join(", ")}.` }) : null,
        el("h3", { text: `Workspaces owned (${sync.workspaces.length})` }),
        table(["Id", "Name", "Created"], sync.workspaces.map((w) => [el("code", { text: w.id }), w.name, time(w.createdAt)]), { caption: "Workspaces", empty: "None." }),
        el("h3", { text: `Subscriptions (${sync.subscriptions.length})` }),
        table(["Id", "Plan", "Status", "Period ends"], sync.subscriptions.map((s) => [el("code", { text: s.id }), s.plan, s.status, time(s.currentPeriodEnd)]), { caption: "Subscriptions", empty: "None." }),
        el("h3", { text: "Allow-list roles" }),
        table(["Role", "Granted"], sync.roles.map((r) => [r.role, time(r.grantedAt)]), { caption: "Allow-list roles", empty: "None." })),
      card("Merge history",
        !detail.merges.available ? el("p", { class: "muted", text: "Merges are not recorded in this store yet." })
          : detail.merges.records.length === 0 ? el("p", { class: "muted", text: "No merge names this user." })
            : el("ul", {}, detail.merges.records.map((r) => el("li", { class: "details", text: Object.entries(r.fields).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`).join(" ") }))))));
  return wrap;
}

// MARK: Deleting the user (admin)

// Plan first (rows per table, whether Apple tokens can be revoked), then type the user's email to confirm and apply.
// Revocation happens first unless "do not revoke" is ticked with a reason; the deleted rows stay restorable for the
// retention period (`gatehouse users delete undo`), their tokens never.
function deletionCard(api, user) {
  const ticket = el("input", { id: "deletion-ticket", name: "ticket", required: true, maxlength: "200", spellcheck: "false", autocomplete: "off", placeholder: "SUP-1234" });
  const planButton = el("button", { type: "submit", class: "secondary", id: "deletion-plan", text: "Plan the deletion" });
  const planned = el("div", { id: "deletion-plan-result", "aria-live": "polite" });
  const form = el("form", { class: "stack", "aria-label": "Plan deleting this user" },
    field("Support ticket", ticket, "Kept in the plan, the deletion record and the audit log."), el("div", { class: "actions" }, planButton));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    planButton.disabled = true;
    try {
      const answer = await api.post(`/api/users/${encodeURIComponent(user.id)}/deletion/plan`, { ticket: ticket.value });
      clear(planned).append(deletionPlan(api, answer.plan, answer.email));
    } catch (error) {
      clear(planned).append(errorBanner(error));
    } finally {
      planButton.disabled = false;
    }
  });
  return card("Delete user",
    el("p", { class: "muted", text: "Everything of this user goes: the user row, accounts, sessions, verification rows, and the sync server's rows found by foreign key. Apple tokens are revoked first. The rows stay sealed and restorable for the retention period; tokens are never restored." }),
    form, planned);
}

function deletionPlan(api, plan, email) {
  const counts = Object.entries(plan.tables).sort(([a], [b]) => a.localeCompare(b));
  const apple = plan.appleAccounts.length === 0 ? "No Apple account."
    : plan.appleAccounts.map((a) => `${a.accountID}: ${a.hasRefreshToken || a.hasAccessToken ? "holds a token, revoked first" : "no token held (nothing to revoke)"}`).join("; ");
  const confirm = el("input", { id: "deletion-confirm-email", name: "confirmEmail", required: true, spellcheck: "false", autocomplete: "off", placeholder: email });
  const noRevoke = el("input", { type: "checkbox", id: "deletion-no-revoke", name: "noRevoke" });
  const reason = el("input", { id: "deletion-reason", name: "reason", maxlength: "2000", autocomplete: "off", placeholder: "why the tokens are not revoked" });
  const retain = el("input", { id: "deletion-retain", name: "retain", maxlength: "20", autocomplete: "off", placeholder: "30d" });
  const submit = el("button", { type: "submit", class: "danger", id: "deletion-apply", text: "Delete this user" });
  const outcome = el("div", { id: "deletion-apply-result", "aria-live": "polite" });
  const form = el("form", { class: "stack", "aria-label": "Apply the deletion" },
    field(`Type the user's email (${email}) to confirm`, confirm),
    field("Do not revoke Apple tokens", noRevoke, "Only with a reason (kept in the record and the audit log)."),
    field("Reason", reason), field("Keep restorable for", retain, "Default 30d; from 1h to 400d."),
    el("div", { class: "actions" }, submit));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (confirm.value.trim().toLowerCase() !== email.toLowerCase()) {
      clear(outcome).append(el("p", { class: "banner error", role: "alert", text: "The email typed is not this user's." }));
      return;
    }
    submit.disabled = true;
    const body = { confirmEmail: confirm.value };
    if (noRevoke.checked) Object.assign(body, { noRevoke: true, reason: reason.value });
    if (retain.value.trim()) body.retain = retain.value.trim();
    try {
      const result = await api.post(`/api/deletions/${encodeURIComponent(plan.planID)}/apply`, body);
      clear(outcome).append(el("div", { class: "banner ok", role: "status", id: "deletion-applied" },
        `Deletion ${result.deletionID} applied: user ${result.userID} deleted (ticket ${result.ticket}). Restorable on the Deletions page (the deadline is `, time(result.retainUntil), `); tokens are not restorable (${result.notRestorable.join(", ")} come back empty). `,
        el("a", { href: `#/deletions?id=${result.deletionID}`, id: "deletion-applied-link", text: `Deletion ${result.deletionID}` }), " · ",
        el("a", { href: `#/audit?action=${encodeURIComponent("user.delete.*")}`, text: "Audit entries" })));
    } catch (error) {
      submit.disabled = false;
      clear(outcome).append(errorBanner(error));
    }
  });
  return el("div", {},
    el("p", { class: "banner info", id: "deletion-plan-id" }, "Plan ", copyable(plan.planID, "plan id"), ` deletes ${plan.rows.length} row(s).`),
    table(["Table", "Rows"], counts.map(([name, count]) => [el("code", { text: name }), String(count)]), { caption: "Rows deleted per table" }),
    el("p", { id: "deletion-apple", text: `Apple tokens: ${apple}` }),
    form, outcome);
}

function integrityCard(api) {
  const run = el("button", { type: "button", class: "secondary", id: "integrity-run", text: "Check the store" });
  const result = el("div", { id: "integrity-result", "aria-live": "polite" });
  run.addEventListener("click", async () => {
    run.disabled = true;
    clear(result).append(el("p", { class: "muted", text: "Checking every user, account, session and sync row…" }));
    try {
      const report = await api.get("/api/accounts/check");
      append(clear(result), [
        el("p", { class: "muted" }, `Schema: ${report.schema}; checked `, time(report.checkedAt), "."),
        table(["Finding", "Count", "Samples", "What to do"], report.findings.map((f) => [
          el("span", { class: f.count === 0 ? "" : f.severity === "error" ? "bad" : "warn", text: f.title }),
          el("span", { class: "number", text: f.count.toLocaleString("en") }),
          f.samples.length ? el("ul", { class: "samples" }, f.samples.map((s) => el("li", { class: "details", text: s }))) : "—",
          f.count ? f.fix : "—",
        ]), { caption: "Integrity findings" }),
        report.skipped.length ? el("p", { class: "muted", text: `Skipped (no sync-server tables): ${report.skipped.join(", ")}.` }) : null,
        report.missingIndexes.length ? el("p", { class: "banner info", text: `Missing indexes: ${report.missingIndexes.join(", ")} — an operator creates them on the server (accounts index).` }) : null]);
    } catch (error) {
      clear(result).append(errorBanner(error));
    } finally {
      run.disabled = false;
    }
  });
  return card("Integrity check", el("p", { class: "muted", text: "Orphaned accounts and sessions, users without accounts, malformed or dangling subs, unprovisioned users, accounts attached twice. It reads the whole store." }), run, result);
}
