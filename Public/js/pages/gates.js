// Gates: which sign-in provider may go live on which platform. The board (provider × platform, each
// blocked, ready, live or lapsed), the unmet requirements and how to meet them, the membership's
// renewal, the App Store Review Guideline 4.8 verdict, forms to declare operator requirements and to
// enable or disable a gate (refusals shown in the service's own words), the history and the export.
// Every rule is the server's (GateStore, Guideline48, MembershipRenewal).
import { append, card, clear, el, errorBanner, facts, field, findings, pill, table, time, withTimes } from "../dom.js";

const PLATFORMS = ["ios", "desktop", "web"];
const PROVIDERS = ["apple", "google"];

export async function render(container, api) {
  const canChange = api.hasRole("admin");
  const summary = el("div", { id: "gates-summary" });
  const board = el("div", { id: "gates-board" });
  const details = el("div", { id: "gates-details" });
  const historySlot = el("div", { id: "gates-history" });
  const exportSlot = el("div", { id: "gates-export" });
  let catalog = [];

  async function load() {
    const [answer, history, exported] = await Promise.all([api.get("/api/gates"), api.get("/api/gates/history", { limit: 50 }), api.get("/api/gates/export")]);
    catalog = answer.requirements;
    append(clear(summary), [summaryView(answer)]);
    append(clear(board), [boardTable(answer.board)]);
    append(clear(details), [gateDetails(answer.board)]);
    append(clear(historySlot), [historyTable(history)]);
    append(clear(exportSlot), [exportView(exported)]);
  }
  async function reload() {
    try { await load(); } catch (error) { clear(summary).append(errorBanner(error)); }
  }

  await load();
  container.append(
    el("h1", { text: "Gates" }),
    summary,
    card("Board", el("p", { class: "muted", text: "Blocked: a requirement is unmet. Ready: all met, may be enabled. Live: enabled and all met, the app offers it. Lapsed: enabled, but a requirement has since lapsed." }), board),
    el("div", { class: "grid" },
      requirementForm(api, () => catalog, canChange, reload),
      toggleForm(api, canChange, reload)),
    card("Requirements per gate", el("p", { class: "muted small", text: "Open a gate for each requirement: what is known, its evidence and expiry, and how to meet it." }), details),
    card("What the app offers (export)", exportSlot),
    card("History", historySlot));
}

function summaryView(answer) {
  const verdict = answer.board.guideline48;
  const membership = answer.board.membership;
  return [
    el("div", { class: `banner ${verdict.breached ? "error" : "ok"}`, id: "gates-guideline", role: verdict.breached ? "alert" : null },
      el("strong", { text: verdict.breached ? "CRITICAL: " : "" }), verdict.message,
      el("div", { class: "small", text: answer.rule })),
    membership
      ? el("div", { class: `banner ${membership.level === "ok" ? "info" : membership.level === "warning" ? "warning" : "error"}`, id: "gates-membership" },
        pill(membership.level === "ok" ? "ok" : membership.level === "warning" ? "warning" : "critical", membership.level), " ", membership.message,
        membership.action ? el("div", { class: "fix", text: `What to do: ${membership.action}` }) : null)
      : el("div", { class: "banner warning", id: "gates-membership" },
        "The Apple Developer Program membership is not declared met: every Apple gate is blocked until it is.",
        el("div", { class: "fix", text: "What to do: declare it below (apple membership, met, with its renewal date as the expiry)." })),
  ];
}

function boardTable(board) {
  return [
    table(["Provider", ...PLATFORMS], PROVIDERS.map((provider) => [
      el("strong", { text: provider }),
      ...PLATFORMS.map((platform) => {
        const gate = board.gates.find((g) => g.provider === provider && g.platform === platform);
        return el("span", { id: `gate-${provider}-${platform}`, class: "gate-cell" }, pill(gate.state),
          gate.unmet.length ? el("small", { class: "muted", text: ` unmet: ${gate.unmet.join(", ")}` }) : null);
      }),
    ]), { caption: "Gate states, provider by platform" }),
    board.nextExpiry ? el("p", { class: "muted small" }, "Next expiry on the board: ", time(board.nextExpiry)) : null,
    todo(board),
  ];
}

function todo(board) {
  const fixes = [...new Set(board.gates.filter((g) => g.state === "blocked" || g.state === "lapsed")
    .flatMap((g) => g.requirements.filter((r) => r.condition !== "met" && r.fix).map((r) => r.fix)))];
  if (fixes.length === 0) return null;
  return el("div", { id: "gates-todo" }, el("h3", { text: "To do" }), el("ul", { class: "samples" }, fixes.map((f) => el("li", { class: "details", text: f }))));
}

function gateDetails(board) {
  return board.gates.map((gate) => el("details", { class: "gate", open: gate.state === "lapsed" },
    el("summary", {}, `${gate.provider} on ${gate.platform}: `, pill(gate.state),
      gate.unmet.length ? el("span", { class: "muted small", text: ` ${gate.unmet.length} unmet` }) : null),
    gate.since ? el("p", { class: "small" }, gate.enabled ? "Enabled " : "Disabled ", time(gate.since), ` by ${gate.changedBy ?? "?"}: ${gate.reason ?? ""}`) : null,
    table(["Requirement", "Source", "Condition", "What is known", "How to meet it"], gate.requirements.map((r) => [
      el("code", { text: r.requirement }), r.source,
      el("span", { class: r.condition === "met" ? "" : "bad", text: r.condition }),
      el("span", {}, withTimes(r.detail), r.evidence ? el("div", { class: "small muted details", text: `Evidence (${r.declaredFor ?? "all"}): ${r.evidence}` }) : null,
        r.expiresAt ? el("div", { class: "small" }, "Expires ", time(r.expiresAt)) : null),
      r.fix ? el("span", { class: "details small", text: r.fix }) : "—",
    ]), { caption: `Requirements of ${gate.provider} on ${gate.platform}` })));
}

function requirementForm(api, catalog, canChange, reload) {
  const requirement = el("select", { id: "gate-req-name", name: "requirement", disabled: !canChange });
  const platform = el("select", { id: "gate-req-platform", name: "platform", disabled: !canChange });
  const state = el("select", { id: "gate-req-met", name: "met", disabled: !canChange },
    el("option", { value: "met", text: "met" }), el("option", { value: "unmet", text: "unmet" }));
  const evidence = el("textarea", { id: "gate-req-evidence", rows: "2", required: true, maxlength: "2000", disabled: !canChange,
    placeholder: "what you checked and where (order number, portal page, ticket)" });
  const expires = el("input", { id: "gate-req-expires", name: "expires", maxlength: "40", spellcheck: "false", disabled: !canChange, placeholder: "YYYY-MM-DD" });
  const force = el("input", { type: "checkbox", id: "gate-req-force", disabled: !canChange });
  const submit = el("button", { type: "submit", class: "primary", id: "gate-req-submit", text: "Declare", disabled: !canChange });
  const outcome = el("div", { id: "gate-req-result", "aria-live": "polite" });

  for (const r of catalog()) requirement.append(el("option", { value: `${r.provider}/${r.requirement}`, text: `${r.provider} ${r.requirement} — ${r.summary}` }));
  function fillPlatforms() {
    const chosen = catalog().find((r) => `${r.provider}/${r.requirement}` === requirement.value);
    clear(platform).append(el("option", { value: "", text: chosen?.accountWide ? "the whole team (every platform)" : "every platform it applies to" }),
      (chosen?.accountWide ? [] : chosen?.platforms ?? []).map((p) => el("option", { value: p, text: p })));
    expires.placeholder = chosen?.needsExpiry ? "YYYY-MM-DD (required when met: the renewal date)" : "YYYY-MM-DD (optional)";
  }
  requirement.addEventListener("change", fillPlatforms);
  fillPlatforms();

  const form = el("form", { class: "stack", "aria-label": "Declare a requirement" },
    field("Requirement", requirement), field("Platform", platform), field("State", state), field("Evidence", evidence),
    field("Expires", expires, "When it stops being met; the membership needs its renewal date."),
    el("div", { class: "field checkbox" }, force, el("label", { for: "gate-req-force", text: "Accept an expiry in the past (it reads as expired)" })),
    el("div", { class: "actions" }, submit), outcome);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const [provider, name] = requirement.value.split("/");
    submit.disabled = true;
    try {
      const result = await api.post("/api/gates/requirements", {
        provider, requirement: name, platform: platform.value || undefined, met: state.value === "met",
        evidence: evidence.value, expires: expires.value.trim() || undefined, force: force.checked,
      });
      append(clear(outcome), [
        el("p", { class: "banner ok", role: "status", text: `${result.provider} ${result.requirement} (${result.platform}): ${result.previous ? (result.previous.met ? "met" : "unmet") : "undeclared"} → ${result.met ? "met" : "unmet"}.` }),
        result.transitions.length ? el("ul", { class: "samples" }, result.transitions.map((t) => el("li", { text: `${t.gate}: ${t.from} → ${t.to}` }))) : null,
        findings(result.warnings.map((message) => ({ severity: "warning", message }))),
      ]);
      await reload();
    } catch (error) {
      clear(outcome).append(errorBanner(error));
    } finally {
      submit.disabled = !canChange;
    }
  });
  return card("Declare a requirement",
    canChange ? null : el("p", { class: "banner info", text: "Declaring requirements needs the admin role." }),
    el("p", { class: "muted small", text: "Operator requirements only: the key (p8_key), the bundle audience and Google's client ids follow the key ring and the provider configuration." }),
    form);
}

function toggleForm(api, canChange, reload) {
  const provider = el("select", { id: "gate-toggle-provider", disabled: !canChange }, PROVIDERS.map((p) => el("option", { value: p, text: p })));
  const platform = el("select", { id: "gate-toggle-platform", disabled: !canChange }, PLATFORMS.map((p) => el("option", { value: p, text: p })));
  const reason = el("input", { id: "gate-toggle-reason", required: true, maxlength: "2000", disabled: !canChange, placeholder: "why (kept in the history and the audit log)" });
  const enable = el("button", { type: "submit", class: "primary", id: "gate-enable", value: "enable", text: "Enable", disabled: !canChange });
  const disable = el("button", { type: "submit", class: "secondary", id: "gate-disable", value: "disable", text: "Disable", disabled: !canChange });
  const outcome = el("div", { id: "gate-toggle-result", "aria-live": "polite" });
  const form = el("form", { class: "stack", "aria-label": "Enable or disable a gate" },
    field("Provider", provider), field("Platform", platform), field("Reason", reason), el("div", { class: "actions" }, enable, disable), outcome);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const action = event.submitter?.value === "disable" ? "disable" : "enable";
    enable.disabled = disable.disabled = true;
    try {
      const result = await api.post(`/api/gates/${action}`, { provider: provider.value, platform: platform.value, reason: reason.value });
      const gate = result.gate;
      clear(outcome).append(el("p", { class: "banner ok", role: "status", text: result.changed
        ? `${gate.provider} on ${gate.platform}: ${action}d (now ${gate.state}).`
        : `${gate.provider} on ${gate.platform} is already ${action}d (${gate.state}); nothing changed.` }));
      await reload();
    } catch (error) {
      clear(outcome).append(errorBanner(error));
    } finally {
      enable.disabled = disable.disabled = !canChange;
    }
  });
  return card("Enable or disable",
    canChange ? null : el("p", { class: "banner info", text: "Enabling and disabling gates needs the admin role." }),
    el("p", { class: "muted small", text: "A gate must be ready to be enabled. Google cannot go live on ios before Apple, and Apple cannot be disabled on ios while Google is enabled there (Guideline 4.8)." }),
    form);
}

function exportView(exported) {
  return [
    facts(PLATFORMS.map((p) => [p, (exported.offer[p] ?? []).length ? exported.offer[p].join(", ") : "(none)"])),
    exported.validUntil ? el("p", { class: "small" }, "Valid until ", time(exported.validUntil), ": read the export again after it.") : null,
    table(["Provider", "Platform", "State", "Why withheld"], exported.withheld.map((w) => [w.provider, w.platform, pill(w.state), w.reason]),
      { caption: "Withheld providers", empty: "Nothing is withheld." }),
  ];
}

function historyTable(entries) {
  return table(["At", "Actor", "Action", "What", "Change", "Evidence / reason"], entries.map((e) => {
    let what = `${e.provider}/${e.platform}`;
    let change = `${e.fromState ?? "?"} → ${e.toState ?? "?"}`;
    if (e.requirement) {
      what = `${e.provider} ${e.requirement} (${e.platform})`;
      change = el("span", {}, e.met ? "met" : "unmet", e.expiresAt ? [", expires ", time(e.expiresAt)] : null, e.forced ? " (forced)" : null);
    }
    return [time(e.at), e.actor, e.action, what, change, el("span", { class: "details", text: e.text })];
  }), { caption: "Gate history, newest first", empty: "No gate changes yet." });
}
