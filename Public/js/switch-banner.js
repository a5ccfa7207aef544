// The banner every page shows while the linkSocial switch is ON: a signed-in user can then link a provider account
// whose email differs from theirs, so the console says so everywhere, with the time left and a way to turn it off.
// The shell refreshes it on every page; the Policy page announces a change with the "gatehouse:policy-changed" event.
import { request } from "./api.js";
import { clear, el, timeLeft } from "./dom.js";

const SWITCH = "linkSocial.allowDifferentEmails";
const banner = document.getElementById("switch-banner");
// {revertsAt, skew}: skew is the server's clock minus this one's, so the time left follows the server's.
let state = null;
let ticker = null;
const OFF_ROUTE = "#/policy?focus=switch";

// Already on that route, the hash would not change: move to the switch's button directly.
function focusSwitch(event) {
  if (location.hash !== OFF_ROUTE) return;
  event.preventDefault();
  document.getElementById("switch-submit")?.focus();
}

/** Reads the switch from the policy API and shows or hides the banner; never throws (the page shows its own errors). */
export async function refreshSwitchBanner() {
  try {
    const snapshot = await request("GET", "/api/policy");
    const entry = snapshot.entries.find((e) => e.key === SWITCH);
    state = entry?.value === true ? { revertsAt: entry.revertsAt ?? null, skew: Date.parse(snapshot.at) - Date.now() || 0 } : null;
  } catch {
    state = null;
  }
  draw();
}

/** Hides the banner (signed out). */
export function hideSwitchBanner() {
  state = null;
  draw();
}

function draw() {
  clearInterval(ticker);
  ticker = null;
  if (!banner) return;
  banner.hidden = state === null;
  if (state === null) { clear(banner); return; }
  const now = Date.now() + state.skew;
  if (state.revertsAt && Date.parse(state.revertsAt) <= now) { refreshSwitchBanner(); return; }
  clear(banner).append(el("p", {},
    el("strong", { text: "Linking with different emails is ON. " }),
    el("span", { id: "switch-banner-left", text: state.revertsAt
      ? `It turns OFF by itself in ${timeLeft(state.revertsAt, now)}. `
      : "It stays ON until someone turns it OFF. " }),
    el("a", { href: OFF_ROUTE, id: "switch-banner-off", text: "Turn it off now", onclick: focusSwitch })));
  ticker = setInterval(draw, 15_000);
}

window.addEventListener("gatehouse:policy-changed", refreshSwitchBanner);
