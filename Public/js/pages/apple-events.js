// Apple events: the server-to-server notifications Apple sent (email-disabled, email-enabled,
// consent-revoked, account-delete), newest first, with what each did or why it was refused. Read-only:
// notifications arrive through `gatehouse apple notifications serve` or `ingest`, never through the console.
import { card, el, table, time } from "../dom.js";

export async function render(container, api) {
  const entries = await api.get("/api/apple/notifications", { limit: "200" });
  const refused = entries.filter((e) => e.outcome === "refused").length;
  container.append(
    el("h1", { text: "Apple events" }),
    el("p", { class: "muted", id: "apple-events-count",
      text: `${entries.length} notification${entries.length === 1 ? "" : "s"}, newest first${refused ? `; ${refused} refused` : ""}. No token is kept.` }),
    card("Server-to-server notifications", table(["#", "Received", "Outcome", "Type", "Apple sub", "User", "What it did / why refused"], entries.map((e) => [
      String(e.id), time(e.receivedAt), el("span", { class: `outcome ${e.outcome}`, text: e.outcome.replaceAll("_", " ") }),
      e.type ?? "—", e.sub ?? "—",
      e.userID ? el("a", { href: `#/users?q=${encodeURIComponent(e.userID)}`, text: e.userID }) : "—",
      e.reason ?? e.action ?? "—",
    ]), { caption: "Apple notifications", empty: "No notification from Apple has been recorded." })));
}
