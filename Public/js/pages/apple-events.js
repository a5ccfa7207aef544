// Apple events: the server-to-server notifications Apple sent (email-disabled, email-enabled,
// consent-revoked, account-delete), newest first, with what each did, and the refused ones counted per reason and
// source (how many, since when; the time shown is the last one's). Read-only:
// notifications arrive through `gatehouse apple notifications serve` or `ingest`, never through the console.
import { append, card, copyable, el, table, time } from "../dom.js";

export async function render(container, api) {
  const entries = await api.get("/api/apple/notifications", { limit: "200" });
  // A refused notification is counted per reason and source (count, first and last time), not kept one by one.
  const refused = entries.filter((e) => e.outcome === "refused").reduce((n, e) => n + (e.count ?? 1), 0);
  append(container, [
    el("h1", { text: "Apple events" }),
    el("p", { class: "muted", id: "apple-events-count",
      text: `${entries.length} notification${entries.length === 1 ? "" : "s"}, newest first${refused ? `; ${refused} refused` : ""}. No token is kept.` }),
    entries.length === 0 ? setupCard() : null,
    card("Server-to-server notifications", table(["#", "Received", "Outcome", "Type", "Apple sub", "User", "What it did / why refused"], entries.map((e) => [
      e.count ? `×${e.count}` : String(e.id), time(e.receivedAt),
      el("span", { class: `outcome ${e.outcome}`, text: e.outcome.replaceAll("_", " ") }),
      e.type ?? "—", copyable(e.sub, "Apple sub"),
      e.userID ? el("a", { href: `#/users?q=${encodeURIComponent(e.userID)}`, text: e.userID }) : "—",
      e.count ? el("span", {}, `${e.refusal} from ${e.source} since `, time(e.firstSeen), `; last: ${e.reason}`) : (e.reason ?? e.action ?? "—"),
    ]), { caption: "Apple notifications", empty: "No notification from Apple has been recorded." }))]);
}

/** With nothing recorded: how notifications get here (the runbook's steps, the listener's command). */
function setupCard() {
  return card("How to receive Apple's notifications",
    el("ol", { id: "apple-events-setup", class: "steps" },
      el("li", {}, "Run the listener on the server, behind your TLS proxy: ",
        el("pre", {}, el("code", { text: "gatehouse apple notifications serve --store STORE --listen 127.0.0.1:8788" }))),
      el("li", {}, "Route your HTTPS endpoint (TLS 1.2 or newer) to it, for example ", el("code", { text: "https://auth.example.com/apple/notifications" }), "."),
      el("li", { text: "In Apple's developer portal, set that URL as the Services ID's server-to-server notification endpoint." }),
      el("li", {}, "Another transport that stores Apple's bodies can hand each one to ", el("code", { text: "gatehouse apple notifications ingest" }), ".")),
    el("p", { class: "muted" }, "The runbook: ", el("code", { text: "ops/runbooks/apple-notifications.md" }), "."));
}
