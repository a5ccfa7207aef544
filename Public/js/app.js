// The console's shell: the login view, the navigation, and hash routes (#/overview, #/policy?x=y).
// Each page is a module in pages/ exporting render(container, api); see pages/README.md.
import { api, hasRole, logout, onEnrolmentRequired, onSignedOut, onStepUpRequired, request, session, SignedOut } from "./api.js";
import { clear, el, errorBanner } from "./dom.js";
import { factorForm } from "./factor.js";
import { pages, defaultRoute } from "./pages/registry.js";
import * as loginPage from "./pages/login.js";
import { hideSwitchBanner, refreshSwitchBanner } from "./switch-banner.js";
import { hideApprovalsBadge, refreshApprovalsBadge } from "./approvals-badge.js";
import "./menu.js";
import "./shortcuts.js";

const view = document.getElementById("view");
const nav = document.getElementById("nav");
const navList = document.getElementById("nav-list");
const who = document.getElementById("who");
const whoName = document.getElementById("who-name");
let cleanup = null;
let renderCount = 0;
let signedOutReason = null;

/** The current hash route: {route, params}. */
function currentRoute() {
  const hash = location.hash.replace(/^#\/?/, "");
  const [route, search = ""] = hash.split("?");
  return { route: route || defaultRoute, params: new URLSearchParams(search) };
}

function renderChrome() {
  const current = session();
  nav.hidden = who.hidden = current === null;
  clear(navList);
  if (!current) return;
  whoName.textContent = `${current.username} (${current.role})`;
  const { route } = currentRoute();
  for (const page of pages.filter((p) => hasRole(p.role) && p.nav !== false)) {
    navList.append(el("li", {}, el("a", { href: `#/${page.route}`, "aria-current": page.route === route ? "page" : false, text: page.title })));
  }
}

async function show() {
  const token = ++renderCount;
  if (typeof cleanup === "function") { try { cleanup(); } catch { /* a page's cleanup must not block navigation */ } }
  cleanup = null;
  renderChrome();
  clear(view);
  if (session()) { refreshSwitchBanner(); refreshApprovalsBadge(); } else { hideSwitchBanner(); hideApprovalsBadge(); }
  if (!session()) {
    document.title = "Log in · Gatehouse";
    loginPage.render(view, { message: signedOutReason, onLoggedIn: () => { signedOutReason = null; show(); } });
    return;
  }
  const { route, params } = currentRoute();
  const page = pages.find((p) => p.route === route && hasRole(p.role));
  if (!page) {
    view.append(el("section", { class: "card" }, el("h1", { text: "Not found" }), el("p", {}, "No page ", el("code", { text: `#/${route}` }), ". ", el("a", { href: `#/${defaultRoute}`, text: "Go to the overview" }))));
    return;
  }
  document.title = `${page.title} · Gatehouse`;
  const container = el("div", { class: "page", "data-page": page.route });
  view.append(container);
  try {
    const module = await import(page.module);
    if (token !== renderCount) return;
    cleanup = await module.render(container, { ...api, params, navigate: (hash) => { location.hash = hash; } });
  } catch (error) {
    if (error instanceof SignedOut || token !== renderCount) return;
    container.append(errorBanner(error));
  }
  // Tests (and impatient scripts) wait for this marker rather than for a fixed time.
  container.setAttribute("data-ready", "true");
}

onSignedOut((reason) => {
  signedOutReason = reason === "logged_out" ? "You have logged out." : new SignedOut(reason).message;
  show();
});

// A write that needs a fresh second factor (403 step_up_required): asked for in a dialog, then the write goes again.
onStepUpRequired(() => new Promise((resolve) => {
  let answered = false;
  const dialog = el("dialog", { class: "step-up", id: "step-up", "aria-labelledby": "step-up-title" });
  const finish = (done) => { answered = true; dialog.close(); dialog.remove(); resolve(done); };
  const cancel = el("button", { type: "button", class: "secondary", id: "step-up-cancel", text: "Cancel" });
  cancel.addEventListener("click", () => finish(false));
  dialog.addEventListener("close", () => { if (!answered) { answered = true; dialog.remove(); resolve(false); } });
  document.body.append(dialog);
  (async () => {
    try {
      const options = await request("POST", "/api/auth/step-up/options", {});
      const prompt = factorForm({
        idPrefix: "step-up", methods: options.methods, webauthn: options.webauthn, submitLabel: "Confirm",
        intro: "This change cannot be taken back lightly: confirm it is you with your second factor.",
        submit: async (answer) => { await request("POST", "/api/auth/step-up", answer); finish(true); },
      });
      dialog.append(el("h2", { id: "step-up-title", text: "Confirm it is you" }), prompt, el("div", { class: "actions" }, cancel));
      dialog.showModal();
      prompt.focusFirst();
    } catch (error) {
      dialog.append(el("h2", { id: "step-up-title", text: "Confirm it is you" }), errorBanner(error), el("div", { class: "actions" }, cancel));
      dialog.showModal();
    }
  })();
}));

// The store requires a second factor this admin has not enrolled: only Account security answers until they do.
onEnrolmentRequired(() => {
  if (currentRoute().route !== "security") location.hash = "#/security?required=1";
});

document.getElementById("logout").addEventListener("click", () => logout());
window.addEventListener("hashchange", () => { show(); view.focus({ preventScroll: true }); });
show();
