// Apple keys: the .p8 key ring (import by file upload, activate, roll back, revoke, self-test, each
// confirmed), a test client secret minted and shown once, the inspection of a deployed secret, the
// provider configuration with its warnings, and the re-authenticated export for the runtime.
// Every rule (states, lifetimes, what a key must be) is the server's; the page shows its answers.
import { age, append, card, clear, confirmInline, copyable, copyButton, el, errorBanner, facts, field, findings, pill, table, time } from "../dom.js";

const MAX_UPLOAD = 1024 * 1024;
const LIFETIMES = [["5m", "5 minutes"], ["1h", "1 hour"], ["1d", "1 day"], ["30d", "30 days"], ["180d", "180 days"]];

export async function render(container, api) {
  const ringCard = el("div");
  const providersCard = el("div");
  append(container, [el("h1", { text: "Apple keys" }), ringCard,
    el("div", { class: "grid two" }, importCard(api, refresh), mintCard(api)),
    el("div", { class: "grid two" }, inspectCard(api), providersCard),
    api.hasRole("admin") ? exportCard(api) : null]);

  async function refresh() {
    const [ring, providers] = await Promise.all([api.get("/api/apple/keys"), api.get("/api/providers")]);
    clear(ringCard).append(renderRing(ring, api, refresh));
    clear(providersCard).append(renderProviders(providers, api, refresh));
  }
  await refresh();
}

function renderRing(ring, api, refresh) {
  const canChange = api.hasRole("admin");
  const outcome = el("div", { id: "key-outcome", "aria-live": "polite" });
  const rollback = el("button", { type: "button", class: "secondary", id: "key-rollback", disabled: !canChange, text: "Roll back to the previous key" });
  rollback.addEventListener("click", () => confirmInline(outcome, {
    question: "Make the most recently retired key active again? The active key becomes retired.",
    confirmLabel: "Roll back", returnTo: rollback,
    action: () => change(outcome, () => api.post("/api/apple/keys/rollback"), refresh),
  }));

  const rows = ring.keys.map((key) => [
    copyable(key.keyID, "key id"), key.teamID, pill(key.state),
    copyable(key.fingerprint, "fingerprint", { shown: `${key.fingerprint.slice(0, 16)}…` }),
    el("span", {}, time(key.importedAt), el("br"), el("small", { class: "muted", text: `${age(key.importedAt, ring.now)} ago` })),
    key.activatedAt ? el("span", {}, time(key.activatedAt), el("br"), el("small", { class: "muted", text: key.state === "active" ? `active for ${age(key.activatedAt, ring.now)}` : "" })) : "—",
    key.revokedAt ? el("span", {}, "revoked ", time(key.revokedAt)) : key.retiredAt ? el("span", {}, "retired ", time(key.retiredAt)) : "—",
    keyActions(key, ring, api, outcome, refresh),
  ]);
  return card("Key ring",
    el("p", { class: "muted", text: "A key goes staged → active → retired; revoked is final. Apple allows two live keys per primary App ID." }),
    findings(ring.warnings, { id: "ring-warnings" }),
    el("div", { id: "key-ring" }, table(["Key ID", "Team ID", "State", "Fingerprint", "Imported", "Activated", "Retired / revoked", "Actions"], rows,
      { caption: "Apple keys", empty: "The key ring is empty: import the AuthKey_<KEYID>.p8 Apple issued." })),
    canChange ? el("div", { class: "actions" }, rollback) : el("p", { class: "muted", text: "Changing the ring needs the admin role." }),
    outcome);
}

function keyActions(key, ring, api, outcome, refresh) {
  if (!api.hasRole("admin")) return "—";
  const id = key.keyID;
  const buttons = [];
  const button = (verb, label, cls = "secondary") => {
    const node = el("button", { type: "button", class: `${cls} small-button`, id: `key-${verb}-${id}`, "aria-label": `${label} ${id}`, text: label });
    buttons.push(node);
    return node;
  };
  const selftest = button("selftest", "Self-test");
  selftest.addEventListener("click", () => confirmInline(outcome, {
    question: `Self-test ${id}? It opens the sealed key, mints a client secret and verifies it.`, confirmLabel: `Self-test ${id}`, returnTo: selftest,
    action: () => change(outcome, async () => {
      const report = await api.post(`/api/apple/keys/${encodeURIComponent(id)}/selftest`);
      return { message: `Self-test of ${report.selfTest.keyID}: ${report.passed ? "passed" : "FAILED"}.`, ok: report.passed, findings: report.selfTest.checks };
    }, null),
  }));
  if (key.state === "staged" || key.state === "retired") {
    const activate = button("activate", "Activate", "primary");
    const current = ring.active ? ` ${ring.active.keyID} becomes retired.` : "";
    activate.addEventListener("click", () => confirmInline(outcome, {
      question: `Activate ${id}? Client secrets will be minted with it.${current}`, confirmLabel: `Activate ${id}`, returnTo: activate,
      action: () => change(outcome, () => api.post(`/api/apple/keys/${encodeURIComponent(id)}/activate`), refresh),
    }));
  }
  if (key.state !== "revoked") {
    const revoke = button("revoke", "Revoke", "danger");
    revoke.addEventListener("click", () => confirmInline(outcome, {
      question: key.state === "active"
        ? `${id} is the ACTIVE key: revoking it stops Sign in with Apple until another key is activated. Only do this if it leaked or Apple already revoked it. This is final.`
        : `Record that ${id} was revoked in Apple's portal? This is final: it can never be activated again.`,
      confirmLabel: `Revoke ${id}`, danger: true, returnTo: revoke,
      action: () => change(outcome, () => api.post(`/api/apple/keys/${encodeURIComponent(id)}/revoke`, key.state === "active" ? { force: true } : undefined), refresh),
    }));
  }
  return el("div", { class: "actions wrap" }, buttons);
}

/** Runs a ring change, shows its outcome (message, findings, warnings) and refreshes the ring. */
async function change(outcome, call, refresh) {
  clear(outcome).append(el("p", { class: "muted", text: "Working…" }));
  try {
    const result = await call();
    const message = result.message ?? (result.changed === false
      ? `${result.key.keyID} is already ${result.key.state}; nothing changed.`
      : `${result.key.keyID} is now ${result.key.state}${result.retired ? `; ${result.retired} is now retired` : ""}.`);
    if (refresh) await refresh();
    const slot = document.getElementById("key-outcome") ?? outcome;
    clear(slot).append(el("p", { class: `banner ${result.ok === false ? "error" : "ok"}`, role: "status", id: "key-outcome-message", text: message }),
      findings(result.findings ?? []), findings(result.warnings ?? []));
  } catch (error) {
    const slot = document.getElementById("key-outcome") ?? outcome;
    clear(slot).append(errorBanner(error));
  }
}

function importCard(api, refresh) {
  const canImport = api.hasRole("admin");
  const file = el("input", { type: "file", id: "import-file", accept: ".p8,.pem,application/x-pem-file", disabled: !canImport });
  const keyId = el("input", { id: "import-key-id", placeholder: "from AuthKey_<KEYID>.p8", maxlength: "10", spellcheck: "false", autocapitalize: "characters", disabled: !canImport });
  const teamId = el("input", { id: "import-team-id", placeholder: "from the provider configuration", maxlength: "10", spellcheck: "false", autocapitalize: "characters", disabled: !canImport });
  const submit = el("button", { type: "submit", class: "primary", id: "import-submit", disabled: !canImport, text: "Import as staged" });
  const result = el("div", { id: "import-result", "aria-live": "polite" });
  const form = el("form", { class: "stack", "aria-label": "Import a .p8 key" },
    field("Key file (.p8)", file), field("Key ID (optional)", keyId), field("Team ID (optional)", teamId), submit, result,
    canImport ? null : el("p", { class: "muted", text: "Importing a key needs the admin role." }));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const chosen = file.files?.[0];
    if (!chosen) { clear(result).append(errorBanner(new Error("Choose the AuthKey_<KEYID>.p8 file Apple issued."))); file.focus(); return; }
    if (chosen.size > MAX_UPLOAD) { clear(result).append(errorBanner(new Error(`${chosen.name} is over 1 MiB; an Apple .p8 key is about 250 bytes.`))); return; }
    submit.disabled = true;
    clear(result).append(el("p", { class: "muted", text: "Importing…" }));
    try {
      const pem = await readText(chosen);
      const body = { pem, fileName: chosen.name };
      if (keyId.value.trim()) body.keyId = keyId.value.trim();
      if (teamId.value.trim()) body.teamId = teamId.value.trim();
      const imported = await api.post("/api/apple/keys", body);
      form.reset();
      await refresh();
      clear(result).append(el("p", { class: "banner ok", role: "status", text: `Imported ${imported.key.keyID} (team ${imported.key.teamID}) as staged. Next: activate it.` }),
        findings(imported.warnings));
    } catch (error) {
      clear(result).append(errorBanner(error));
    } finally {
      submit.disabled = false;
    }
  });
  return card("Import a key", el("p", { class: "muted", text: "The key is sealed at rest under the master key; it never comes back through this page." }), form);
}

function readText(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(new Error(`${file.name} could not be read.`));
    reader.readAsText(file);
  });
}

function mintCard(api) {
  const canMint = api.hasRole("admin");
  const clientId = el("input", { id: "mint-client-id", placeholder: "the configured Services ID", spellcheck: "false", disabled: !canMint });
  const ttl = el("select", { id: "mint-ttl", disabled: !canMint }, LIFETIMES.map(([value, label]) => el("option", { value, selected: value === "1h", text: label })));
  const submit = el("button", { type: "submit", class: "primary", id: "mint-submit", disabled: !canMint, text: "Mint a test secret" });
  const result = el("div", { id: "mint-result", "aria-live": "polite" });
  const form = el("form", { class: "stack", "aria-label": "Mint a test client secret" },
    field("Client ID (sub)", clientId), field("Lifetime", ttl), submit, result,
    canMint ? null : el("p", { class: "muted", text: "Minting needs the admin role." }));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    submit.disabled = true;
    clear(result).append(el("p", { class: "muted", text: "Minting…" }));
    try {
      const body = { ttl: ttl.value };
      if (clientId.value.trim()) body.clientId = clientId.value.trim();
      const minted = await api.post("/api/apple/secret/mint", body);
      clear(result).append(shownOnce(minted, result));
    } catch (error) {
      clear(result).append(errorBanner(error));
    } finally {
      submit.disabled = false;
    }
  });
  return card("Mint a test client secret",
    el("p", { class: "muted", text: "Signed with the active key. The secret is shown here once: it is not stored, logged or audited (only its SHA-256)." }), form);
}

/** The minted secret, in this one view only; "Hide" forgets it. */
function shownOnce(minted, slot) {
  let token = minted.token;
  const output = el("textarea", { id: "mint-token", class: "secret", rows: "4", readOnly: true, spellcheck: "false", "aria-label": "The minted client secret", value: token });
  const hide = el("button", { type: "button", class: "secondary", id: "mint-hide", text: "Hide it" });
  hide.addEventListener("click", () => {
    token = "";
    clear(slot).append(el("p", { class: "muted", role: "status", text: "The secret is gone from this page; mint another if you need one." }));
  });
  return el("div", { class: "shown-once" },
    el("p", { class: "banner info", role: "status", text: "Shown once: copy it now. Leaving this page forgets it." }),
    output, el("div", { class: "actions" }, copyButton(() => token, { id: "mint-copy", label: "Copy the secret" }), hide),
    facts([["Key", minted.keyID], ["Team", minted.teamID], ["Client ID", minted.clientID], ["Issued", time(minted.issuedAt)],
      ["Expires", time(minted.expiresAt)], ["SHA-256", copyable(minted.fingerprint, "fingerprint")]]));
}

function inspectCard(api) {
  const token = el("textarea", { id: "inspect-token", rows: "4", spellcheck: "false", placeholder: "eyJhbGciOiJFUzI1NiIsImtpZCI6…", required: true });
  const submit = el("button", { type: "submit", class: "primary", id: "inspect-submit", text: "Inspect" });
  const result = el("div", { id: "inspect-result", "aria-live": "polite" });
  const form = el("form", { class: "stack", "aria-label": "Inspect a client secret" }, field("Client secret (JWT)", token), submit, result);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clear(result).append(el("p", { class: "muted", text: "Inspecting…" }));
    try {
      const { inspection, acceptable } = await api.post("/api/apple/secret/inspect", { token: token.value.trim() });
      const claims = inspection.claims;
      append(clear(result), [
        el("p", { class: `banner ${acceptable ? "ok" : "error"}`, id: "inspect-verdict", text: inspection.verdict }),
        claims ? facts([["kid", claims.keyID ?? "—"], ["iss", claims.issuer ?? "—"], ["sub", claims.subject ?? "—"], ["alg", claims.algorithm],
          ["aud", (claims.audience ?? []).join(", ") || "—"],
          ["Expires", claims.expiresAt ? time(new Date(claims.expiresAt * 1000).toISOString()) : "—"],
          ["Signature", `${claims.signatureLength} bytes${inspection.signatureChecked ? ", checked against the ring" : ""}`]]) : null,
        findings(inspection.findings)]);
    } catch (error) {
      clear(result).append(errorBanner(error));
    }
  });
  return card("Inspect a deployed secret", el("p", { class: "muted", text: "Decodes the secret and names every fault that makes Apple answer invalid_client. It is not stored." }), form);
}

function renderProviders(report, api, refresh) {
  const apple = report.apple;
  const google = report.google;
  const list = (items) => (items && items.length ? items.join(", ") : "—");
  const canChange = api.hasRole("admin");
  const slot = el("div", { "aria-live": "polite" });
  const edit = el("button", { type: "button", class: "secondary", id: "providers-edit", text: "Edit the provider settings" });
  edit.addEventListener("click", () => { clear(slot).append(providersForm(report, api, refresh, slot, edit)); });
  return card("Provider configuration",
    el("h3", { text: "Apple" }),
    facts([["Team ID", apple.settings.teamID ?? "—"], ["Services ID (clientId)", apple.settings.servicesID ?? "—"],
      ["Bundle ID (appBundleIdentifier)", apple.settings.bundleID ?? "—"], ["Audience", list(apple.settings.audience)],
      ["Better Auth accepts aud", `${list(apple.acceptedAudiences)} (from ${apple.audienceSource})`]]),
    findings(apple.findings, { id: "apple-findings" }),
    apple.recommendedConfig ? el("p", {}, "Accepts both native and desktop tokens: ", el("code", { text: apple.recommendedConfig })) : null,
    el("h3", { text: "Google" }),
    facts([...Object.entries(google.settings.clientIDs ?? {}).map(([platform, id]) => [platform, id]),
      ["Better Auth accepts aud", list(google.acceptedAudiences)]]),
    findings(google.findings, { id: "google-findings" }),
    canChange ? el("div", { class: "actions" }, edit) : el("p", { class: "muted small", text: "Changing them needs the admin role (or `gatehouse providers set` on the server)." }),
    slot);
}

/** The provider settings as a form: what changes is validated as `providers set` validates it, and audited. */
function providersForm(report, api, refresh, slot, returnTo) {
  const apple = report.apple.settings;
  const google = report.google.settings.clientIDs ?? {};
  const input = (id, value, placeholder) => el("input", { id, name: id, value: value ?? "", placeholder, autocomplete: "off", spellcheck: "false", maxlength: "255" });
  const team = input("provider-team-id", apple.teamID, "10 upper-case letters or digits");
  const services = input("provider-services-id", apple.servicesID, "com.example.app.web");
  const bundle = input("provider-bundle-id", apple.bundleID, "com.example.app");
  const audience = input("provider-audience", (apple.audience ?? []).join(", "), "empty: Better Auth's default");
  const platforms = ["ios", "desktop", "web"].map((platform) => [platform, input(`provider-google-${platform}`, google[platform], `${platform} client id`)]);
  const save = el("button", { type: "submit", class: "primary", id: "providers-save", text: "Save" });
  const cancel = el("button", { type: "button", class: "secondary", text: "Cancel" });
  const status = el("div", { "aria-live": "polite" });
  const form = el("form", { class: "stack", "aria-label": "Edit the provider settings" },
    el("h3", { text: "Apple" }),
    field("Team ID", team), field("Services ID", services, "the web flow's client id; empty clears it"),
    field("Bundle ID", bundle, "the native app's client id; empty clears it"), field("Audience", audience, "client ids separated by commas; empty clears the list"),
    el("h3", { text: "Google client ids" }),
    ...platforms.map(([platform, control]) => field(platform, control, "empty removes this platform's id")),
    status, el("div", { class: "actions" }, save, cancel));
  cancel.addEventListener("click", () => { clear(slot); returnTo.focus(); });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    save.disabled = true;
    clear(status);
    try {
      const appleChange = {};
      if (team.value.trim() !== (apple.teamID ?? "")) appleChange.teamId = team.value.trim();
      if (services.value.trim() !== (apple.servicesID ?? "")) appleChange.servicesId = services.value.trim();
      if (bundle.value.trim() !== (apple.bundleID ?? "")) appleChange.bundleId = bundle.value.trim();
      const ids = audience.value.split(",").map((v) => v.trim()).filter(Boolean);
      if (ids.join(",") !== (apple.audience ?? []).join(",")) appleChange.audience = ids;
      const googleChange = {};
      for (const [platform, control] of platforms) {
        if (control.value.trim() !== (google[platform] ?? "")) googleChange[platform] = control.value.trim();
      }
      if (Object.keys(appleChange).length) await api.put("/api/providers/apple", appleChange);
      if (Object.keys(googleChange).length) await api.put("/api/providers/google", { clientIds: googleChange });
      await refresh();
      document.getElementById("providers-edit")?.focus();
    } catch (error) {
      save.disabled = false;
      clear(status).append(errorBanner(error));
    }
  });
  queueMicrotask(() => team.focus());
  return form;
}

function exportCard(api) {
  const password = el("input", { id: "export-password", type: "password", autocomplete: "current-password", required: true });
  const format = el("select", { id: "export-format" }, [["env", "env (NAME='value' lines)"], ["json", "JSON"]].map(([value, label]) => el("option", { value, text: label })));
  const submit = el("button", { type: "submit", class: "danger", id: "export-submit", text: "Reveal the inputs" });
  const result = el("div", { id: "export-result", "aria-live": "polite" });
  const form = el("form", { class: "filters", "aria-label": "Export the Apple inputs" },
    field("Your password again", password), field("Format", format), el("div", { class: "actions" }, submit));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    submit.disabled = true;
    try {
      const exported = await api.post("/api/apple/export", { password: password.value, format: format.value });
      password.value = "";
      let text = exported.text;
      const hide = el("button", { type: "button", class: "secondary", text: "Hide it" });
      hide.addEventListener("click", () => { text = ""; clear(result); });
      clear(result).append(el("p", { class: "banner info", role: "status", text: `The inputs for ${exported.keyID}, private key included. This reveal is in the audit log.` }),
        el("textarea", { class: "secret", rows: "8", readOnly: true, spellcheck: "false", "aria-label": "The exported inputs", value: text }),
        el("div", { class: "actions" }, copyButton(() => text, { label: "Copy" }), hide));
    } catch (error) {
      clear(result).append(errorBanner(error));
    } finally {
      submit.disabled = false;
    }
  });
  return card("Export for the runtime",
    el("p", { class: "muted", text: "APPLE_TEAM_ID, APPLE_KEY_ID, APPLE_CLIENT_ID and APPLE_PRIVATE_KEY of the active key, for a runtime that mints per request. Needs your password again; every reveal is audited." }),
    form, result);
}
