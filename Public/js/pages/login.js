// The login view. There is no sign-up or first-login setup: admins come from `gatehouse init` and
// `gatehouse admins`.
import { login } from "../api.js";
import { el } from "../dom.js";

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
    el("p", { class: "muted small", text: "Admins are created on the server by an operator." }));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    status.hidden = true;
    submit.disabled = true;
    submit.textContent = "Logging in…";
    try {
      await login(username.value.trim(), password.value);
      password.value = "";
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
