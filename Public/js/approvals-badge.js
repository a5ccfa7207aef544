// The header's link to the Approvals page with the number of requests waiting for a second admin (support staff and
// admins; viewers cannot act on them). The shell refreshes it on every page, and at once when a write was held for
// approval or an approval was decided (`onApprovalsChanged`).
import { hasRole, onApprovalsChanged, request, session } from "./api.js";
import { append, clear, el } from "./dom.js";

const badge = document.getElementById("approvals-badge");

/** Reads the pending requests and redraws the link; never throws (a page shows its own errors). */
export async function refreshApprovalsBadge() {
  if (!badge) return;
  if (!session() || !hasRole("support")) { badge.hidden = true; return; }
  let pending = null;
  try { pending = (await request("GET", "/api/approvals", undefined)).length; } catch { pending = null; }
  badge.hidden = false;
  const label = pending ? `Approvals: ${pending} waiting` : "Approvals: none waiting";
  append(clear(badge), ["Approvals", pending ? el("span", { class: "count", id: "approvals-count", text: String(pending) }) : null]);
  badge.setAttribute("aria-label", label);
  badge.title = label;
  badge.classList.toggle("waiting", Boolean(pending));
}

/** Hides the link (signed out). */
export function hideApprovalsBadge() {
  if (badge) badge.hidden = true;
}

onApprovalsChanged(() => { refreshApprovalsBadge(); });
