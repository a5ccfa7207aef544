// Security events: one inbox of Apple's server-to-server notifications and Google's Cross-Account Protection events,
// newest first — when, provider, event, user, what Gatehouse did — with filters by provider, event and date, and, for
// an admin, the undo of what a Google event changed (flags and tokens; ended sessions cannot come back). Events arrive
// through their own receivers on the host, never through the console.
import { card, clear, el, errorBanner, field, table, time } from "../dom.js";

// Apple's server-to-server notification types, then Google's Cross-Account Protection event types.
const EVENT_TYPES = ["consent-revoked", "account-delete", "email-disabled", "email-enabled",
  "sessions-revoked", "tokens-revoked", "token-revoked", "account-disabled", "account-enabled",
  "account-credential-change-required", "verification"];

export async function render(container, api) {
  const params = Object.fromEntries(api.params);
  const canUndo = api.hasRole("admin");
  const provider = el("select", { id: "events-provider", name: "provider" },
    [["", "Both"], ["apple", "Apple"], ["google", "Google"]].map(([value, label]) => el("option", { value, text: label, selected: (params.provider ?? "") === value })));
  const since = el("input", { id: "events-since", name: "since", type: "date", value: params.since ?? "" });
  const kind = el("input", { id: "events-type", name: "type", value: params.type ?? "", placeholder: "e.g. sessions-revoked", autocomplete: "off", spellcheck: "false", list: "events-types" });
  // The types each provider sends, offered as the field is typed in (any other text is still a filter).
  const types = el("datalist", { id: "events-types" }, EVENT_TYPES.map((type) => el("option", { value: type })));
  const apply = el("button", { type: "submit", class: "primary", id: "events-filter", text: "Filter" });
  const form = el("form", { class: "filters", role: "search", "aria-label": "Filter the events" },
    field("Provider", provider), field("Event type", kind), field("Received since", since), el("div", { class: "field" }, el("span", { text: " " }), apply), types);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const query = new URLSearchParams(Object.entries({ provider: provider.value, type: kind.value.trim(), since: since.value }).filter(([, v]) => v));
    api.navigate(`#/security-events${query.toString() ? `?${query}` : ""}`);
  });
  const slot = el("div", { "aria-live": "polite" });
  const [entries, refusals] = await Promise.all([
    api.get("/api/security/events", { provider: params.provider, event: params.type, since: params.since, limit: "500" }),
    api.get("/api/security/refusals", { provider: params.provider }),
  ]);
  const refused = refusals.reduce((sum, r) => sum + r.count, 0);
  container.append(el("h1", { text: "Security events" }),
    el("p", { class: "muted", id: "events-count", text: `${entries.length} event${entries.length === 1 ? "" : "s"}, newest first, from Apple and Google. Refused tokens are not events: they are counted below the events, per reason and source.` }),
    card("Filters", form), slot);
  // Refused tokens last: a flood of forged ones must not push the events down.
  const refusedCard = () => card(`Refused tokens (${refused})`, table(["Provider", "Reason", "From", "Count", "Last", "The last one"], refusals.map((r) => [
    r.provider === "google" ? "Google" : "Apple", r.reason, r.source, String(r.count), time(r.lastSeen), r.detail,
  ]), { caption: "Refused tokens, the latest first" }));
  if (entries.length === 0 && !params.provider && !params.since && !params.type) {
    container.append(card("No event yet",
      el("p", { text: "Apple and Google push security events to receivers that run on the host, behind your TLS proxy:" }),
      el("pre", { class: "command", text: "gatehouse apple notifications serve --listen 127.0.0.1:8788 --path /apple/notifications\ngatehouse google risc serve --listen 127.0.0.1:8789 --path /google/risc\ngatehouse google risc stream update --url https://YOUR-HOST/google/risc\ngatehouse google risc stream enable\ngatehouse google risc stream verify" }),
      el("p", { class: "muted", text: "The runbooks ops/runbooks/apple-notifications.md and ops/runbooks/google-risc.md walk the registration at Apple and Google." })));
    if (refusals.length) container.append(refusedCard());
    return;
  }
  container.append(card("Events", table(["Received", "Provider", "Event", "User", "What Gatehouse did", "Undo"], entries.map((e) => [
    time(e.receivedAt), e.provider === "google" ? "Google" : "Apple", e.event,
    e.userId ? el("a", { href: `#/users?id=${encodeURIComponent(e.userId)}`, class: "user-link", title: e.userId, text: e.userEmail ?? e.userId }) : "—",
    e.action,
    undoCell(api, e, canUndo, slot),
  ]), { caption: "Security events", empty: "No event matches the filters." })));
  if (refusals.length) container.append(refusedCard());
}

function undoCell(api, entry, canUndo, slot) {
  if (entry.undoneAt) return el("span", { class: "muted", text: "undone" });
  if (!entry.undoable) return entry.sessionsEnded > 0 ? el("span", { class: "muted small", text: "sessions cannot come back" }) : "—";
  if (!canUndo) return el("span", { class: "muted small", text: "an admin can undo" });
  const button = el("button", { type: "button", class: "secondary", "data-undo": `${entry.provider}:${entry.id}`, text: "Undo…" });
  button.addEventListener("click", () => {
    const reason = el("input", { id: "undo-reason", name: "reason", required: true, maxlength: "500", placeholder: "why, e.g. SUP-77: confirmed with the user" });
    const confirm = el("button", { type: "submit", class: "danger", "data-confirm": "yes", text: `Undo ${entry.provider}:${entry.id}` });
    const cancel = el("button", { type: "button", class: "secondary", text: "Cancel" });
    const form = el("form", { class: "confirm stack", "aria-label": "Undo the event" },
      el("p", { text: `Give back what ${entry.event} changed for ${entry.userEmail ?? entry.userId ?? "this account"} (its flags and the tokens it cleared)${entry.sessionsEnded ? `; the ${entry.sessionsEnded} session(s) it ended cannot come back` : ""}.` }),
      field("Reason", reason), el("div", { class: "actions" }, confirm, cancel));
    cancel.addEventListener("click", () => { clear(slot); button.focus(); });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      confirm.disabled = true;
      try {
        const result = await api.post(`/api/security/events/google/${entry.id}/undo`, { reason: reason.value });
        clear(slot).append(el("div", { class: "banner ok", role: "status", text: `${entry.provider}:${entry.id} undone: ${result.restored} given back.` }));
        api.navigate(`#/security-events?t=${Date.now()}`);
      } catch (error) {
        confirm.disabled = false;
        clear(slot).append(errorBanner(error), form);
      }
    });
    clear(slot).append(form);
    reason.focus();
  });
  return button;
}
