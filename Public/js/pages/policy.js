// Policy: the linkSocial allowDifferentEmails switch (with a reason and an optional duration) and the
// requests it reaches, every key, the history, and the simulator of Better Auth 1.7.1's link and sign-in
// answers (by id token or by redirect). Changing the policy needs the admin role; the simulator needs
// support. The server enforces both; the page only disables what would be refused.
import { card, clear, confirmInline, el, errorBanner, facts, json, table, time } from "../dom.js";

const SWITCH = "linkSocial.allowDifferentEmails";
const PROVIDERS = ["google", "apple", "facebook", "microsoft", "github"];
const PROVIDER_OPTIONS = [
  ["requireEmailVerification", "requireEmailVerification"], ["disableSignUp", "disableSignUp"],
  ["disableImplicitSignUp", "disableImplicitSignUp"], ["disableIdTokenSignIn", "disableIdTokenSignIn"],
  ["verifyIdToken", "the app passes verifyIdToken"], ["overrideUserInfoOnSignIn", "overrideUserInfoOnSignIn (redirect)"],
];
const DURATIONS = [["", "Until changed back"], ["15m", "15 minutes"], ["1h", "1 hour"], ["2h", "2 hours"], ["8h", "8 hours"], ["1d", "1 day"], ["7d", "7 days"]];
// Turning the switch ON lets a signed-in user link an account whose email differs from theirs: it is ON for an hour
// unless the admin picks otherwise, and asks for a confirmation first.
const ON_DEFAULT = "1h";

export async function render(container, api) {
  const heading = el("h1", { text: "Account-linking policy" });
  const switchCard = el("div");
  const keysCard = el("div");
  const historyCard = el("div");
  const simulatorCard = el("div");
  container.append(heading, el("div", { class: "grid two" }, switchCard, simulatorCard), keysCard, historyCard);

  let loaded = false;
  async function refresh() {
    const [snapshot, history] = await Promise.all([api.get("/api/policy"), api.get("/api/policy/history", { limit: 50 })]);
    clear(switchCard).append(renderSwitch(snapshot, api, refresh));
    clear(keysCard).append(renderKeys(snapshot, api, refresh));
    clear(historyCard).append(renderHistory(history));
    // The shell's banner says whether the switch is ON on every page.
    if (loaded) window.dispatchEvent(new Event("gatehouse:policy-changed"));
    loaded = true;
  }
  simulatorCard.append(renderSimulator(api));
  await refresh();
  // #/policy?focus=switch (the banner's "Turn it off now"): straight to the switch's button.
  if (api.params.get("focus") === "switch") {
    const button = document.getElementById("switch-submit");
    button?.scrollIntoView({ block: "center" });
    button?.focus();
  }
}

function renderSwitch(snapshot, api, refresh) {
  const entry = snapshot.entries.find((e) => e.key === SWITCH);
  const on = entry.value === true;
  const canChange = api.hasRole("admin");
  const reason = el("textarea", { id: "switch-reason", name: "reason", rows: "2", required: true, maxlength: "2000", placeholder: "Why, e.g. SUP-1234 Hide My Email user needs to connect Google", disabled: !canChange });
  const duration = el("select", { id: "switch-duration", name: "for", disabled: !canChange },
    DURATIONS.map(([value, label]) => el("option", { value, text: label, selected: value === (on ? "" : ON_DEFAULT) })));
  // ON is the dangerous action (red, confirmed); OFF is the safe one.
  const submit = el("button", { type: "submit", class: on ? "primary" : "danger", id: "switch-submit", disabled: !canChange, text: on ? "Turn the switch OFF" : "Turn the switch ON…" });
  const confirmSlot = el("div", { id: "switch-confirm" });
  const result = el("div", { id: "switch-result", "aria-live": "polite" });
  const form = el("form", { class: "stack", "aria-label": "Change the linkSocial switch" },
    el("label", { for: "switch-reason", text: "Reason (kept in the history and the audit log)" }), reason,
    el("label", { for: "switch-duration", text: "For how long" }), duration,
    submit, confirmSlot, result,
    canChange ? null : el("p", { class: "muted", text: "Changing the policy needs the admin role." }));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!reason.value.trim()) { clear(result).append(errorBanner(new Error("A reason is required."))); reason.focus(); return; }
    clear(result);
    if (on) { change(); return; }
    const span = duration.value ? duration.selectedOptions[0].text.toLowerCase() : "until someone turns it OFF";
    confirmInline(confirmSlot, {
      question: `Turn linking with different emails ON ${duration.value ? `for ${span}` : span}? While it is ON, a signed-in user can link a Google or Apple account whose email is not theirs.`,
      confirmLabel: "Turn it ON", danger: true, returnTo: submit, action: () => { clear(confirmSlot); change(); },
    });
  });
  async function change() {
    submit.disabled = true;
    try {
      const body = { key: SWITCH, value: !on, reason: reason.value, ifVersion: snapshot.version };
      if (duration.value) body.for = duration.value;
      const done = await api.post("/api/policy", body);
      await refresh();
      const notice = document.getElementById("switch-result");
      if (notice) {
        notice.append(el("p", { class: "banner ok", role: "status" },
          `Changed ${done.key} from ${JSON.stringify(done.from)} to ${JSON.stringify(done.to)} (version ${done.version})`, done.revertsAt ? ["; reverts ", time(done.revertsAt)] : null, "."));
      }
    } catch (error) {
      clear(result).append(errorBanner(error));
      submit.disabled = false;
    }
  }
  return card("The linkSocial switch",
    el("p", { class: "switch-state" }, el("span", { class: `pill ${on ? "on" : "off"}`, id: "switch-state", text: on ? "ON" : "OFF" }),
      " ", el("code", { text: SWITCH })),
    el("p", { class: "muted", text: entry.summary }),
    el("p", { class: "muted", id: "switch-reach" },
      "The runtime applies it to ", (snapshot.linkSocialAppliesTo ?? []).map((r, i) => el("span", {}, i ? ", " : "", el("code", { text: r }))),
      ": the app's id-token link and a web link by redirect, which Better Auth 1.7.1 decides at the callback. A runtime that applies it to /link-social only leaves web users with ",
      el("code", { text: "?error=email_does_not_match" }), " whatever the switch says."),
    facts([["Set by", entry.setBy ?? "(default)"], ["Set at", time(entry.setAt)], ["Reason", entry.reason ?? "—"],
      ["Reverts", entry.revertsAt ? el("span", {}, time(entry.revertsAt), " to ", json(entry.revertsTo)) : "—"], ["Policy version", String(snapshot.version)]]),
    snapshot.risks.length ? el("ul", { class: "risks" }, snapshot.risks.map((r) => el("li", { class: r.severity, text: `${r.severity.toUpperCase()}: ${r.message}` }))) : null,
    form);
}

function renderKeys(snapshot, api, refresh) {
  const canChange = api.hasRole("admin");
  const key = el("select", { id: "key-name", name: "key", disabled: !canChange }, snapshot.entries.map((e) => el("option", { value: e.key, text: e.key })));
  const value = el("input", { id: "key-value", name: "value", placeholder: "true, false, or google,apple", disabled: !canChange, spellcheck: "false" });
  const reason = el("input", { id: "key-reason", name: "reason", required: true, maxlength: "2000", disabled: !canChange });
  const duration = el("select", { id: "key-duration", disabled: !canChange }, DURATIONS.map(([v, label]) => el("option", { value: v, text: label })));
  const risk = el("input", { type: "checkbox", id: "key-risk", disabled: !canChange });
  const result = el("div", { "aria-live": "polite" });
  const form = el("form", { class: "filters", "aria-label": "Change a policy key" },
    field("Key", key), field("New value", value), field("Reason", reason), field("For how long", duration),
    el("div", { class: "field checkbox" }, risk, el("label", { for: "key-risk", text: "I accept the takeover risk (autoLink only)" })),
    el("div", { class: "actions" }, el("button", { type: "submit", class: "secondary", disabled: !canChange, text: "Change key" })), result);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const body = { key: key.value, value: value.value.trim(), reason: reason.value, ifVersion: snapshot.version, acceptTakeoverRisk: risk.checked };
      if (duration.value) body.for = duration.value;
      await api.post("/api/policy", body);
      await refresh();
    } catch (error) {
      clear(result).append(errorBanner(error));
    }
  });
  return card("Every key",
    table(["Key", "Value", "Set by", "Set at", "Reverts", "Reason"], snapshot.entries.map((e) => [
      el("span", {}, el("code", { text: e.key }), el("br"), el("small", { class: "muted", text: e.summary })),
      e.isDefault ? el("span", {}, json(e.value), " ", el("small", { class: "muted", text: "(default)" })) : json(e.value),
      e.setBy ?? "—", time(e.setAt), e.revertsAt ? el("span", {}, time(e.revertsAt), " → ", json(e.revertsTo)) : "—", e.reason ?? "—",
    ]), { caption: "Policy keys" }),
    canChange ? el("details", {}, el("summary", { text: "Change another key" }), form) : null);
}

function renderHistory(history) {
  return card("History",
    el("div", { id: "policy-history" },
      table(["Version", "When", "Key", "Change", "Actor", "Reason"], history.map((h) => [
        String(h.version), time(h.effectiveAt), el("code", { text: h.key }),
        el("span", {}, json(h.from), " → ", json(h.to), h.kind === "revert" ? el("small", { class: "muted", text: h.pending ? " (revert, due)" : " (revert)" }) : null,
          h.revertsAt ? el("small", { class: "muted" }, " until ", time(h.revertsAt)) : null),
        h.actor, h.reason,
      ]), { caption: "Policy history", empty: "No changes yet: every key holds its default." })));
}

function renderSimulator(api) {
  const canRun = api.hasRole("support");
  const flow = el("select", { id: "sim-flow", name: "flow", disabled: !canRun },
    el("option", { value: "signin", text: "Sign-in (implicit linking)" }),
    el("option", { value: "link", text: "linkSocial by a signed-in user" }));
  const via = el("select", { id: "sim-via", name: "via", disabled: !canRun },
    el("option", { value: "id-token", text: "id token (the app)" }),
    el("option", { value: "redirect", text: "redirect to the provider and back (the web)" }));
  const user = el("input", { id: "sim-user", name: "user", placeholder: "Better Auth user id", disabled: !canRun, spellcheck: "false" });
  const userField = field("Signed-in user", user);
  userField.hidden = true;
  flow.addEventListener("change", () => { userField.hidden = flow.value !== "link"; });
  const provider = el("select", { id: "sim-provider", name: "provider", disabled: !canRun }, PROVIDERS.map((p) => el("option", { value: p, text: p })));
  const email = el("input", { id: "sim-email", name: "email", type: "email", placeholder: "ana@gmail.com", disabled: !canRun, spellcheck: "false" });
  const noEmail = el("input", { id: "sim-no-email", type: "checkbox", disabled: !canRun });
  noEmail.addEventListener("change", () => { email.disabled = noEmail.checked || !canRun; });
  const options = PROVIDER_OPTIONS.map(([name, label]) => {
    const box = el("input", { type: "checkbox", id: `sim-opt-${name}`, value: name, disabled: !canRun });
    return { box, row: el("div", { class: "field checkbox" }, box, el("label", { for: box.id, text: label })) };
  });
  const requestSignUp = el("input", { type: "checkbox", id: "sim-request-sign-up", disabled: !canRun });
  const verified = el("input", { id: "sim-verified", type: "checkbox", checked: true, disabled: !canRun });
  const account = el("input", { id: "sim-account", name: "accountId", placeholder: "provider sub (optional)", disabled: !canRun, spellcheck: "false" });
  const hypothetical = el("select", { id: "sim-switch", disabled: !canRun },
    el("option", { value: "", text: "as stored" }), el("option", { value: "true", text: "ON (hypothetical)" }), el("option", { value: "false", text: "OFF (hypothetical)" }));
  const result = el("div", { id: "sim-result", "aria-live": "polite" });
  const form = el("form", { class: "stack", "aria-label": "Simulate a link attempt" },
    field("Call", flow), field("How the client reaches Better Auth", via), userField, field("Provider", provider),
    field("Email the provider reports", email),
    el("div", { class: "field checkbox" }, noEmail, el("label", { for: "sim-no-email", text: "The provider reports no email (a returning Apple user)" })),
    el("div", { class: "field checkbox" }, verified, el("label", { for: "sim-verified", text: "The provider says the email is verified" })),
    field("Provider account id", account), field("The linkSocial switch", hypothetical),
    el("details", {}, el("summary", { text: "The app's provider options" }), options.map((o) => o.row),
      el("div", { class: "field checkbox" }, requestSignUp, el("label", { for: "sim-request-sign-up", text: "The client sends requestSignUp" }))),
    el("button", { type: "submit", class: "primary", id: "sim-run", disabled: !canRun, text: "Simulate" }),
    canRun ? null : el("p", { class: "muted", text: "The simulator needs the support role." }), result);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear(result).append(el("p", { class: "muted", text: "Simulating…" }));
    try {
      const body = { flow: flow.value, via: via.value, provider: provider.value, emailVerified: verified.checked,
        providerOptions: options.filter((o) => o.box.checked).map((o) => o.box.value), requestSignUp: requestSignUp.checked };
      if (!noEmail.checked) body.email = email.value.trim();
      if (flow.value === "link") body.user = user.value.trim();
      if (account.value.trim()) body.accountId = account.value.trim();
      if (hypothetical.value) body.with = { [SWITCH]: hypothetical.value === "true" };
      clear(result).append(renderDecision(await api.post("/api/policy/simulate", body)));
    } catch (error) {
      clear(result).append(errorBanner(error));
    }
  });
  return card("Link simulator", el("p", { class: "muted", text: "What Better Auth 1.7.1 would answer, against this store and the policy, with the source line that decides." }), form);
}

function headlineOf(d) {
  if (d.outcome === "undetermined") return `undetermined: depends on ${d.dependsOn[0] ?? "an input outside the store"}`;
  if (d.via === "redirect") return d.errorCode ? `redirect ?error=${d.errorCode} (HTTP 302)` : `${d.outcome} (HTTP 302 to ${d.redirectTo ?? "callbackURL"})`;
  return d.errorCode ? `error ${d.errorCode} (HTTP ${d.httpStatus})` : `${d.outcome} (HTTP ${d.httpStatus})`;
}

function renderDecision(d) {
  const refused = d.errorCode || d.outcome === "undetermined";
  return el("div", { class: `decision ${refused ? "refused" : "allowed"}` },
    el("p", { class: "headline", id: "sim-headline", text: headlineOf(d) }),
    d.errorMessage ? el("p", { text: d.errorMessage }) : null,
    facts([["Rule", el("code", { text: d.rule })], ["Why", d.explanation], ["Source", el("code", { id: "sim-source", text: `better-auth@1.7.1 ${d.source}` })],
      ["Flow", `${d.via}${d.redirectTo ? `, redirects to ${d.redirectTo}` : ""}`], ["Lookup", d.accountLookup],
      ["Policy", `version ${d.policyVersion}${d.hypothetical.length ? ` with ${d.hypothetical.join(", ")}` : ""}`]]),
    el("ol", { class: "checks", "aria-label": "Checks in Better Auth's order" }, d.checks.map((c) =>
      el("li", { class: c.decisive ? "decisive" : "" }, el("code", { text: c.rule }), `: ${c.question} — ${c.answer}`))),
    (d.dependsOn ?? []).length ? el("div", { id: "sim-depends" }, el("p", { class: "muted", text: "Depends on (outside the store and the policy; taken as stated):" }),
      el("ul", {}, d.dependsOn.map((x) => el("li", { text: x })))) : null,
    d.hideMyEmail ? el("p", { class: "banner info", text: `Hide My Email: with the switch ${d.hideMyEmail.switchFlippedTo ? "ON" : "OFF"} → ${d.hideMyEmail.outcomeWithSwitchFlipped}. ${d.hideMyEmail.advice}` }) : null,
    (d.notes ?? []).map((n) => el("p", { class: "muted", text: n })));
}

function field(label, control) {
  return el("div", { class: "field" }, el("label", { for: control.id, text: label }), control);
}
