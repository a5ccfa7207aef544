// The second-factor prompt, shared by the login's second step and the step-up before an irreversible write: a
// passkey button when the admin has one, a code from the authenticator app, or a recovery code.
import { el } from "./dom.js";
import { passkeyFailure, passkeysAvailable, usePasskey } from "./webauthn.js";

/**
 * A form asking for one of `methods` ("webauthn", "totp", "recovery"); `webauthn` is the request options a passkey
 * answers. Calls `submit({method, code} | {method, credential})`, which throws an APIError to show.
 */
export function factorForm({ idPrefix, methods, webauthn, submitLabel, submit, intro }) {
  const status = el("p", { id: `${idPrefix}-status`, class: "banner error", role: "alert", hidden: true });
  const show = (message) => { status.textContent = message; status.hidden = false; };
  const working = (button, busy, label) => { button.disabled = busy; button.textContent = busy ? "Checking…" : label; };
  const form = el("div", { class: "factor-form" }, intro ? el("p", { text: intro }) : null, status);

  if (methods.includes("webauthn") && webauthn) {
    const label = "Use a passkey";
    const button = el("button", { type: "button", class: "primary", id: `${idPrefix}-passkey`, text: label });
    button.addEventListener("click", async () => {
      status.hidden = true;
      if (!passkeysAvailable()) { show("This browser cannot use passkeys here: open the console over https or on localhost."); return; }
      working(button, true, label);
      try {
        await submit({ method: "webauthn", credential: await usePasskey(webauthn) });
      } catch (error) {
        show(error?.name && error.name !== "APIError" ? passkeyFailure(error) : refusal(error));
      } finally {
        working(button, false, label);
      }
    });
    form.append(el("div", { class: "actions" }, button));
  }

  const codeForm = (method, labelText, inputProps, buttonLabel) => {
    const input = el("input", { id: `${idPrefix}-${method}`, name: method, required: true, autocomplete: "one-time-code", spellcheck: "false", ...inputProps });
    const button = el("button", { type: "submit", class: methods.includes("webauthn") ? "secondary" : "primary", text: buttonLabel });
    const part = el("form", { class: "factor-code", "aria-label": labelText },
      el("label", { for: input.id, text: labelText }), input, button);
    part.addEventListener("submit", async (event) => {
      event.preventDefault();
      status.hidden = true;
      working(button, true, buttonLabel);
      try {
        await submit({ method, code: input.value.replace(/\s+/g, "") });
      } catch (error) {
        show(refusal(error));
        input.value = "";
        input.focus();
      } finally {
        working(button, false, buttonLabel);
      }
    });
    return { part, input };
  };

  let first = form.querySelector("button");
  if (methods.includes("totp")) {
    const totp = codeForm("totp", "Code from your authenticator app", { inputmode: "numeric", pattern: "[0-9 ]{6,7}", maxlength: "7" }, submitLabel);
    form.append(totp.part);
    first = first ?? totp.input;
  }
  if (methods.includes("recovery")) {
    const recovery = codeForm("recovery", "A recovery code", { maxlength: "32" }, submitLabel);
    const details = el("details", { class: "recovery" }, el("summary", { text: "Use a recovery code instead" }), recovery.part);
    form.append(details);
  }
  form.focusFirst = () => first?.focus();
  return form;
}

/** The server's refusal of a factor, in the words an admin acts on. */
function refusal(error) {
  switch (error?.code) {
    case "invalid_code": return "That code is not right (or was used already). Try the next one your app shows.";
    case "throttled": return error.message;
    case "mfa_token_expired": case "mfa_token_used": case "invalid_mfa_token": return "This sign-in took too long. Start again with your password.";
    default: return error?.message ? `Could not check it: ${error.message}` : String(error);
  }
}
