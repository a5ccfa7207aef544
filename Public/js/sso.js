// Single sign-on on the login view (issue 45): a "Sign in with <provider>" link when `gatehouse sso set` configured
// one, and the end of a sign-in. The provider sends the browser back to /api/auth/sso/callback, which redirects to
// /#sso=TICKET; the ticket (single use, 60 s) is taken out of the address bar and its history entry at once, then
// exchanged for the session like a password login's answer (tokens, or the second step for an admin with a factor).
import { completeSSO } from "./api.js";
import { el } from "./dom.js";

/** What the console offers: {enabled, provider, passwordLogin}, or null when it cannot be asked. */
export async function ssoOffer() {
  try {
    const response = await fetch("/api/auth/sso", { headers: { Accept: "application/json" } });
    return response.ok ? await response.json() : null;
  } catch {
    return null;
  }
}

/** The ticket of `/#sso=TICKET`, removed from the address and the history; null when there is none. */
export function takeTicket() {
  const match = /^#sso=([A-Za-z0-9_-]{1,100})$/.exec(location.hash);
  if (!match) return null;
  history.replaceState(null, "", location.pathname + location.search);
  return match[1];
}

/** Adds the sign-in link to the login form when single sign-on is set; with password login off, the password fields go. */
export async function offerSSO(form) {
  const offer = await ssoOffer();
  if (!offer?.enabled) return;
  const link = el("a", { id: "sso-signin", class: "sso-button", href: "/api/auth/sso/start", text: `Sign in with ${offer.provider}` });
  const block = el("div", { id: "sso-offer", class: "sso-offer" }, link,
    offer.passwordLogin ? el("p", { class: "muted small sso-or", text: "or log in with a password:" }) : null);
  form.querySelector("h1").after(block);
  if (!offer.passwordLogin) {
    for (const node of form.querySelectorAll("label[for=username], #username, label[for=password], #password, button[type=submit]")) {
      node.hidden = true;
      node.required = false;
    }
  }
}

/** Exchanges a ticket: signed in (`onLoggedIn`), the second step (`secondStep`), or the refusal in `status`. */
export async function finishSSO(ticket, { form, status, onLoggedIn, secondStep }) {
  try {
    const answer = await completeSSO(ticket);
    if (answer?.mfaRequired) {
      secondStep(form, answer, onLoggedIn);
      return;
    }
    onLoggedIn();
  } catch (error) {
    status.textContent = `Single sign-on did not finish: ${error.message} Sign in again.`;
    status.hidden = false;
  }
}
