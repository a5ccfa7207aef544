// Account security: the signed-in admin's second factors. Enrol an authenticator app (TOTP, shown as a QR code and as
// text) or a passkey; rename and remove factors; new recovery codes. Every secret the API hands over once (the TOTP
// secret, recovery codes) lives only in this page's DOM until the admin leaves it or hides it. An admin also sees every
// console admin, to disable, enable or remove them (the Admins card).
import { card, clear, confirmInline, copyButton, el, errorBanner, facts, field, table, time } from "../dom.js";
import { qrSvg } from "../qr.js";
import { createPasskey, passkeyAddress, passkeyFailure, passkeysAvailable } from "../webauthn.js";
import { adminsCard } from "./admins-card.js";

const KIND = { totp: "Authenticator app", webauthn: "Passkey" };

export async function render(container, api) {
  const overview = await api.get("/api/auth/mfa");
  const session = api.session();
  const sso = (await api.get("/api/auth/me")).source === "sso";
  const confirmed = overview.factors.filter((f) => f.confirmed);
  const reload = () => api.navigate(`#/security?r=${Date.now()}`);

  container.append(el("h1", { text: "Account security" }));
  if (api.params.get("required") === "1" || (overview.required && confirmed.length === 0)) {
    container.append(el("p", { class: "banner warning", role: "status", id: "security-required",
      text: "This console requires a second factor: add an authenticator app or a passkey below to use the other pages." }));
  }
  container.append(card("Second factors",
    facts([
      ["Admin", session?.username ?? "—"],
      ["Second factor", confirmed.length === 0 ? `none yet: your ${sso ? "single sign-on" : "password"} alone signs you in` : `${confirmed.length} enrolled; asked at login and before irreversible changes`],
      ["Required for every admin", overview.required ? "yes" : "no (an operator sets it: gatehouse admins mfa require on)"],
      ["Recovery codes left", String(overview.recoveryCodesLeft)],
    ]),
    factorTable(confirmed, api, reload)));

  const codesSlot = el("div", { id: "recovery-codes-slot" });
  container.append(card("Add an authenticator app", totpEnrolment(api, codesSlot)));
  container.append(card("Add a passkey", passkeyEnrolment(api, codesSlot, reload)));
  if (confirmed.length > 0) container.append(card("Recovery codes", recoveryCodes(api, codesSlot)));
  container.append(codesSlot);
  if (api.hasRole("admin")) container.append(await adminsCard(api, reload));
  // An SSO admin has no password here: a sign-in through the provider in the last few minutes stands in for it.
  if (sso) {
    for (const input of container.querySelectorAll("#totp-password, #passkey-password")) {
      input.required = false;
      input.closest(".field").replaceWith(el("p", { class: "muted small", text: "You signed in with single sign-on: no password is asked if that sign-in is recent." }));
    }
  }
}

/** The enrolled factors, each with Rename and Remove. */
function factorTable(factors, api, reload) {
  return table(["Name", "Kind", "Added", "Last used", ""], factors.map((factor) => {
    const slot = el("div", { class: "row-actions" });
    const rename = el("button", { type: "button", class: "secondary small-button", "data-factor": factor.id, text: "Rename" });
    const remove = el("button", { type: "button", class: "danger small-button", "data-factor": factor.id, text: "Remove" });
    rename.addEventListener("click", () => {
      const input = el("input", { id: `rename-${factor.id}`, value: factor.name, maxlength: "64" });
      const save = el("button", { type: "submit", class: "primary small-button", text: "Save" });
      const form = el("form", { class: "actions wrap" }, el("label", { for: input.id, class: "visually-hidden", text: "New name" }), input, save);
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        try { await api.post(`/api/auth/mfa/factors/${encodeURIComponent(factor.id)}/rename`, { name: input.value }); reload(); } catch (error) { slot.append(errorBanner(error)); }
      });
      clear(slot).append(form);
      input.focus();
    });
    remove.addEventListener("click", () => confirmInline(slot, {
      question: `Remove ${KIND[factor.kind] ?? factor.kind} "${factor.name}"? It will no longer sign you in.`,
      confirmLabel: "Remove", danger: true, returnTo: remove,
      action: async () => {
        try { await api.post(`/api/auth/mfa/factors/${encodeURIComponent(factor.id)}/remove`, {}); reload(); } catch (error) { clear(slot).append(errorBanner(error)); }
      },
    }));
    return [factor.name, KIND[factor.kind] ?? factor.kind, time(factor.confirmedAt ?? factor.createdAt), time(factor.lastUsedAt),
      el("div", {}, el("div", { class: "actions" }, rename, remove), slot)];
  }), { caption: "Your second factors", empty: "No second factor yet." });
}

/** The password the API asks again before a factor is added (a stolen session alone cannot add one). */
function passwordField(id) {
  return el("input", { id, type: "password", autocomplete: "current-password", required: true });
}

/** Enrolling an authenticator app: password → QR code and secret → a code from the app → recovery codes. */
function totpEnrolment(api, codesSlot) {
  const slot = el("div", { class: "enrol", id: "totp-enrol" });
  const password = passwordField("totp-password");
  const name = el("input", { id: "totp-name", value: "Authenticator app", maxlength: "64" });
  const start = el("button", { type: "submit", class: "primary", id: "totp-start", text: "Show the QR code" });
  const form = el("form", { class: "enrol" },
    el("p", { class: "muted", text: "Any app that reads time-based codes works (1Password, Google Authenticator, Authy, …)." }),
    field("Name", name), field("Your password", password), start);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    start.disabled = true;
    try {
      const enrolment = await api.post("/api/auth/mfa/totp", { password: password.value, name: name.value });
      password.value = "";
      clear(slot).append(totpConfirm(api, enrolment, codesSlot));
      slot.querySelector("#totp-code")?.focus();
    } catch (error) {
      form.append(errorBanner(error));
    } finally {
      start.disabled = false;
    }
  });
  slot.append(form);
  return slot;
}

function totpConfirm(api, enrolment, codesSlot) {
  const code = el("input", { id: "totp-code", inputmode: "numeric", autocomplete: "one-time-code", maxlength: "7", required: true });
  const confirm = el("button", { type: "submit", class: "primary", id: "totp-confirm", text: "Confirm" });
  const form = el("form", { class: "enrol" }, field("The 6-digit code your app now shows", code), confirm);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    confirm.disabled = true;
    try {
      const answer = await api.post("/api/auth/mfa/totp/confirm", { code: code.value.replace(/\s+/g, "") });
      showRecoveryCodes(codesSlot, answer.recoveryCodes, "Your authenticator app is set up.");
    } catch (error) {
      form.append(errorBanner(error));
      code.value = "";
      code.focus();
    } finally {
      confirm.disabled = false;
    }
  });
  return el("div", { class: "enrol" },
    el("p", { text: "Scan this code with your app, or type the secret into it:" }),
    qrSvg(enrolment.otpauthUri, { label: "QR code of the authenticator app's secret" }),
    el("p", {}, "Secret: ", el("span", { class: "secret", id: "totp-secret", text: enrolment.secret }), " ", copyButton(() => enrolment.secret, { label: "Copy the secret" })),
    form);
}

/** Enrolling a passkey: password → the browser makes the key → it is registered under a name. */
function passkeyEnrolment(api, codesSlot, reload) {
  const slot = el("div", { class: "enrol", id: "passkey-enrol" });
  if (!passkeysAvailable()) {
    slot.append(el("p", { class: "muted", text: "This browser cannot make a passkey here: open the console over https, or on http://localhost." }));
    return slot;
  }
  const byName = passkeyAddress();
  if (byName) {
    slot.append(el("p", { class: "muted", id: "passkey-by-name" }, "Browsers refuse passkeys on an address like this one: ",
      el("a", { href: byName, text: "open this page on localhost" }), " (you log in once more there)."));
    return slot;
  }
  const name = el("input", { id: "passkey-name", value: "Passkey", maxlength: "64" });
  const password = passwordField("passkey-password");
  const add = el("button", { type: "submit", class: "primary", id: "passkey-add", text: "Add a passkey" });
  const status = el("div", { role: "status" });
  const form = el("form", { class: "enrol" },
    el("p", { class: "muted", text: "A passkey lives on this device or a security key; the browser asks you to confirm with it." }),
    field("Name", name), field("Your password", password), add, status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    add.disabled = true;
    clear(status);
    try {
      const options = await api.post("/api/auth/webauthn/register/options", { password: password.value });
      password.value = "";
      let credential;
      try { credential = await createPasskey(options); } catch (error) { throw new Error(passkeyFailure(error)); }
      const answer = await api.post("/api/auth/webauthn/register", { credential, name: name.value });
      if (answer.recoveryCodes?.length) showRecoveryCodes(codesSlot, answer.recoveryCodes, "Your passkey is added.");
      else reload();
    } catch (error) {
      status.append(errorBanner(error));
    } finally {
      add.disabled = false;
    }
  });
  slot.append(form);
  return slot;
}

/** New recovery codes (the old ones stop working). */
function recoveryCodes(api, codesSlot) {
  const slot = el("div");
  const button = el("button", { type: "button", class: "secondary", id: "recovery-new", text: "Make new recovery codes" });
  button.addEventListener("click", () => confirmInline(slot, {
    question: "Make 10 new recovery codes? The ones you have stop working.", confirmLabel: "Make new codes", returnTo: button,
    action: async () => {
      try { showRecoveryCodes(codesSlot, (await api.post("/api/auth/mfa/recovery-codes", {})).recoveryCodes, "New recovery codes."); clear(slot); }
      catch (error) { clear(slot).append(errorBanner(error)); }
    },
  }));
  return el("div", {}, el("p", { class: "muted", text: "Each recovery code signs you in once when your factors are lost." }), button, slot);
}

/** Recovery codes, shown this once, with Copy and a Done that forgets them (and reloads the page). */
function showRecoveryCodes(slot, codes, headline) {
  const done = el("button", { type: "button", class: "primary", id: "recovery-done", text: "I have saved them" });
  done.addEventListener("click", () => { clear(slot); location.hash = `#/security?r=${Date.now()}`; });
  clear(slot).append(el("section", { class: "card", id: "recovery-codes", "aria-labelledby": "recovery-codes-title" },
    el("h2", { id: "recovery-codes-title", text: "Recovery codes" }),
    el("p", { class: "banner ok", role: "status", text: `${headline} Save these recovery codes now: they are shown only once, and each works once.` }),
    el("ol", { class: "recovery-codes" }, codes.map((code) => el("li", {}, el("code", { text: code })))),
    el("div", { class: "actions wrap" }, copyButton(() => codes.join("\n"), { label: "Copy the codes" }), done)));
  slot.scrollIntoView?.({ block: "start" });
  done.focus();
}
