// Apple events: the server-to-server notifications Apple sent (email-disabled, email-enabled,
// consent-revoked, account-delete), newest first, with what each did, and the refused ones counted per reason and
// source (how many, since when; the time shown is the last one's). Read-only:
// notifications arrive through `gatehouse apple notifications serve` or `ingest`, never through the console.
import { card, el, table, time } from "../dom.js";

export async function render(container, api) {
  const entries = await api.get("/api/apple/notifications", { limit: "200" });
  // A refused notification is counted per reason and source (count, first and last time), not kept one by one.
  const refused = entries.filter((e) => e.outcome === "refused").reduce((n, e) => n + (e.count ?? 1), 0);
  container.append(
    el("h1", { text: "Apple events" }),
    el("p", { class: "muted", id: "apple-events-count",
      text: `${entries.length} notification${entries.length === 1 ? "" : "s"}, newest first${refused ? `; ${refused} refused` : ""}. No token is kept.` }),
    card("Server-to-server notifications", table(["#", "Received", "Outcome", "Type", "Apple sub", "User", "What it did / why refused"], entries.map((e) => [
      e.count ? `×${e.count}` : String(e.id), time(e.receivedAt),
      el("span", { class: `outcome ${e.outcome}`, text: e.outcome.replaceAll("_", " ") }),
      e.type ?? "—", e.sub ?? "—",
      e.userID ? el("a", { href: `#/users?q=${encodeURIComponent(e.userID)}`, text: e.userID }) : "—",
      e.count ? `${e.refusal} from ${e.source} since ${e.firstSeen}; last: ${e.reason}` : (e.reason ?? e.action ?? "—"),
    ]), { caption: "Apple notifications", empty: "No notification from Apple has been recorded." })));
}
