// The console's pages, in navigation order. Adding a page: write pages/<name>.js (see README.md in
// this folder) and add one line here. `role` is the least role that sees the page in the navigation;
// the API enforces roles on its own, this only hides what would be refused. `nav: false` keeps a page out of the
// navigation (the header links to it).
export const pages = [
  { route: "overview", title: "Overview", module: "./pages/overview.js", role: "viewer" },
  { route: "users", title: "Users", module: "./pages/users.js", role: "viewer" },
  { route: "duplicates", title: "Duplicates", module: "./pages/duplicates.js", role: "support" },
  { route: "merges", title: "Merges", module: "./pages/merges.js", role: "viewer" },
  { route: "deletions", title: "Deletions", module: "./pages/deletions.js", role: "admin" },
  { route: "apple", title: "Apple keys", module: "./pages/apple.js", role: "viewer" },
  { route: "apple-events", title: "Apple events", module: "./pages/apple-events.js", role: "viewer" },
  { route: "apple-transfer", title: "Apple transfer", module: "./pages/apple-transfer.js", role: "viewer" },
  { route: "security-events", title: "Security events", module: "./pages/security-events.js", role: "viewer" },
  { route: "policy", title: "Policy", module: "./pages/policy.js", role: "viewer" },
  { route: "gates", title: "Gates", module: "./pages/gates.js", role: "viewer" },
  { route: "health", title: "Health", module: "./pages/health.js", role: "viewer" },
  { route: "audit", title: "Audit", module: "./pages/audit.js", role: "viewer" },
  { route: "security", title: "Account security", module: "./pages/security.js", role: "viewer" },
  // Reached from the header's Approvals link, which shows how many requests wait.
  { route: "approvals", title: "Approvals", module: "./pages/approvals.js", role: "support", nav: false },
];

export const defaultRoute = "overview";
