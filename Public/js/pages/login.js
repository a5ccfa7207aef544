// The login view. There is no sign-up or first-login setup: admins come from `gatehouse init`, `gatehouse demo seed`
// and `gatehouse admins`; a store with none says which command creates the first.
import { completeLogin, login, setupState } from "../api.js";
import { el } from "../dom.js";
import { factorForm } from "../factor.js";
import { finishSSO, offerSSO, takeTicket } from "../sso.js";

/** Renders the login form; calls onLoggedIn() after a successful login. */
export function render(container, { message, onLoggedIn }) {
  const status = el("p", { id: "login-status", role: "alert", class: "banner error", hidden: true });
  const username = el("input", { id: "username", name: "username", autocomplete: "username", required: true, autocapitalize: "none", spellcheck: "false" });
  const password = el("input", { id: "password", name: "password", type: "password", autocomplete: "current-password", required: true });
  const submit = el("button", { type: "submit", class: "primary", text: "Log in" });
  const form = el("form", { class: "login-form", "aria-labelledby": "login-title" },
    el("h1", { id: "login-title", text: "Log in to Gatehouse" }),
    message ? el("p", { class: "banner info", role: "status", text: message }) : null,
    status,
    el("label", { for: "username", text: "Username" }), username,
    el("label", { for: "password", text: "Password" }), password,
    submit,
    el("p", { id: "login-admins-note", class: "muted small", text: "Admins are created on the server by an operator." }));
  showSetup(form);
  offerSSO(form);
  const ticket = takeTicket();
  if (ticket) finishSSO(ticket, { form, status, onLoggedIn, secondStep });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    status.hidden = true;
    submit.disabled = true;
    submit.textContent = "Logging in…";
    try {
      const answer = await login(username.value.trim(), password.value);
      password.value = "";
      if (answer?.mfaRequired) {
        secondStep(form, answer, onLoggedIn);
        return;
      }
      onLoggedIn();
    } catch (error) {
      status.textContent = error.code === "throttled" ? error.message
        : error.code === "invalid_credentials" ? "The username or password is wrong." : `Could not log in: ${error.message}`;
      status.hidden = false;
      password.value = "";
      password.focus();
    } finally {
      submit.disabled = false;
      submit.textContent = "Log in";
    }
  });
  container.append(el("div", { class: "login-wrap" }, form));
  username.focus();
}

/** The login's second step: the password was right; a factor the admin enrolled finishes it. */
function secondStep(form, challenge, onLoggedIn) {
  const prompt = factorForm({
    idPrefix: "login-mfa",
    methods: challenge.methods,
    webauthn: challenge.webauthn,
    submitLabel: "Verify",
    intro: "Your password is right. Now confirm it is you with your second factor.",
    submit: async (answer) => {
      await completeLogin(challenge.mfaToken, answer);
      onLoggedIn();
    },
  });
  const again = el("button", { type: "button", class: "link", id: "login-restart", text: "Start again with another account" });
  again.addEventListener("click", () => location.reload());
  const step = el("div", { class: "login-form", id: "login-second-step", role: "group", "aria-labelledby": "login-mfa-title" },
    el("h1", { id: "login-mfa-title", text: "Second factor" }), prompt, again);
  form.replaceWith(step);
  prompt.focusFirst();
}

/** On a store with no admin, replaces the note under the form with the command that creates the first one. */
async function showSetup(form) {
  const setup = await setupState();
  if (!setup || setup.hasAdmins || !setup.command) return;
  const note = form.querySelector("#login-admins-note");
  const box = el("div", { id: "login-setup", class: "banner info", role: "status" },
    el("p", { text: "This store has no admin yet, so nobody can log in. On the server, run:" }),
    el("pre", {}, el("code", { text: setup.command })),
    el("p", { class: "small", text: "It prints the new admin's password once; then log in here as admin." }));
  note.replaceWith(box);
}
