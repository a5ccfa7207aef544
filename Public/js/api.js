// The console's API client and its token lifecycle (the SDK guide's, in a browser):
//
// - Tokens live in sessionStorage (this tab only; gone when the tab closes).
// - A 401 with x-auth-error: token_expired drives ONE refresh and ONE retry, invisible to the page.
//   Concurrent requests that all hit it share a single in-flight refresh: refresh tokens are
//   single-use, and presenting a consumed one would revoke the whole login (token_reuse).
// - token_reuse, token_revoked and invalid_token are never retried: the tokens are dropped and the
//   shell shows the login view (see onSignedOut).

const STORAGE_KEY = "gatehouse.tokens";
const TERMINAL = new Set(["token_reuse", "token_revoked", "invalid_token"]);

/** A refused request: status, the server's code, message and fix. */
export class APIError extends Error {
  constructor(status, code, message, fix) {
    super(message);
    this.name = "APIError";
    this.status = status;
    this.code = code;
    this.fix = fix;
  }
}

/**
 * A write held for a second admin (202 {approvalId, status: "pending"}): nothing changed yet. Pages show it where they
 * show a refusal; `errorBanner` words it as a request waiting, with a link to it.
 */
export class ApprovalPending extends APIError {
  constructor(answer) {
    super(202, "approval_pending", answer.message ?? `Request ${answer.approvalId} waits for another admin's approval.`,
      "Another admin approves or denies it on the Approvals page; it runs then, as you asked.");
    this.name = "ApprovalPending";
    this.approvalId = answer.approvalId;
    this.expiresAt = answer.expiresAt;
  }
}

const approvalListeners = new Set();

/** Calls `listener()` whenever a request was held for approval or an approval was decided here. */
export function onApprovalsChanged(listener) { approvalListeners.add(listener); }

/** Tells the listeners (the header's count) that the pending approvals changed. */
export function approvalsChanged() { for (const listener of approvalListeners) listener(); }

/** The login has ended (reason: token_reuse, token_revoked, invalid_token, or logged_out). */
export class SignedOut extends Error {
  constructor(reason) {
    super(reason === "token_reuse" ? "Your session was ended because a refresh token was used twice. Log in again."
      : reason === "logged_out" ? "You have logged out."
      : "Your session has ended. Log in again.");
    this.name = "SignedOut";
    this.reason = reason;
  }
}

let inFlightRefresh = null;
const listeners = new Set();

function load() {
  try { return JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? "null"); } catch { return null; }
}

function store(bundle) {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify({
    accessToken: bundle.accessToken, refreshToken: bundle.refreshToken, username: bundle.username, role: bundle.role,
  }));
}

function drop(reason) {
  sessionStorage.removeItem(STORAGE_KEY);
  for (const listener of listeners) listener(reason);
}

/** Calls `listener(reason)` whenever the login ends (terminal 401, logout). */
export function onSignedOut(listener) { listeners.add(listener); }

/** {username, role} of the signed-in admin, or null. */
export function session() {
  const tokens = load();
  return tokens ? { username: tokens.username, role: tokens.role } : null;
}

const ROLE_RANK = { viewer: 0, support: 1, admin: 2 };
/** Whether the signed-in admin's role includes `role`. */
export function hasRole(role) {
  const current = session();
  return current !== null && ROLE_RANK[current.role] >= ROLE_RANK[role];
}

async function readBody(response) {
  const text = await response.text();
  if (!text) return null;
  try { return JSON.parse(text); } catch { return { error: { code: "not_json", message: text.slice(0, 200) } }; }
}

function errorFrom(response, body) {
  const error = body?.error ?? {};
  return new APIError(response.status, error.code ?? `http_${response.status}`, error.message ?? `HTTP ${response.status}`, error.fix);
}

async function postPublic(path, body) {
  const response = await fetch(path, {
    method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" }, body: JSON.stringify(body),
  });
  const parsed = await readBody(response);
  if (!response.ok) throw errorFrom(response, parsed);
  return parsed;
}

/**
 * Exchanges a username and password for tokens: the session, or for an admin with a second factor
 * {mfaRequired, mfaToken, methods, webauthn} to answer with `completeLogin`. Throws APIError (invalid_credentials,
 * throttled).
 */
export async function login(username, password) {
  const body = await postPublic("/api/auth/login", { username, password });
  if (body.mfaRequired) return body;
  store(body);
  return session();
}

/** The login's second step: `answer` is {method, code} or {method, credential}. Throws APIError (invalid_code, …). */
export async function completeLogin(mfaToken, answer) {
  store(await postPublic("/api/auth/login/mfa", { mfaToken, ...answer }));
  return session();
}

/** The end of a single sign-on: the ticket of `/#sso=TICKET` for the session, or the second step as `login` answers. */
export async function completeSSO(ticket) {
  const body = await postPublic("/api/auth/sso/complete", { ticket });
  if (body.mfaRequired) return body;
  store(body);
  return session();
}

let stepUpHandler = null;
let enrolmentHandler = null;

/** `handler()` asks the admin for a factor when a write needs a fresh one (403 step_up_required); resolves true once done. */
export function onStepUpRequired(handler) { stepUpHandler = handler; }

/** `handler(error)` runs when the store requires a second factor the admin has not enrolled (403 mfa_enrollment_required). */
export function onEnrolmentRequired(handler) { enrolmentHandler = handler; }

/** Whether the store has an admin yet; without one, `command` creates the first. Null when it cannot be asked. */
export async function setupState() {
  try {
    const response = await fetch("/api/auth/setup", { headers: { Accept: "application/json" } });
    return response.ok ? await readBody(response) : null;
  } catch {
    return null;
  }
}

/** Ends the login on the server (the whole token family) and here. */
export async function logout() {
  try { await request("POST", "/api/auth/logout"); } catch { /* the tokens are dropped either way */ }
  drop("logged_out");
}

// One refresh for every request that met token_expired at about the same time.
function refreshOnce() {
  if (!inFlightRefresh) {
    inFlightRefresh = (async () => {
      const tokens = load();
      if (!tokens) throw new SignedOut("invalid_token");
      const response = await fetch("/api/auth/refresh", {
        method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ refreshToken: tokens.refreshToken }),
      });
      const body = await readBody(response);
      if (!response.ok) {
        // Any refused refresh means a new login, whatever x-auth-error says.
        const reason = response.headers.get("x-auth-error") ?? "invalid_token";
        drop(reason);
        throw new SignedOut(reason);
      }
      store(body);
    })().finally(() => { inFlightRefresh = null; });
  }
  return inFlightRefresh;
}

function send(method, path, body) {
  const headers = { Accept: "application/json" };
  const tokens = load();
  if (tokens) headers.Authorization = `Bearer ${tokens.accessToken}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  return fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

/**
 * Calls the API and returns the parsed JSON. Throws APIError for a refusal, SignedOut when the login
 * has ended (the shell then shows the login view).
 */
export async function request(method, path, body) {
  const sentWith = load()?.accessToken;
  let response = await send(method, path, body);
  if (response.status === 401 && response.headers.get("x-auth-error") === "token_expired") {
    // Another request may have refreshed already while this one was out: then just retry.
    if (load()?.accessToken === sentWith) await refreshOnce();
    response = await send(method, path, body);
  }
  const reason = response.headers.get("x-auth-error");
  if (response.status === 401 && reason) {
    if (TERMINAL.has(reason) || reason === "token_expired") {
      drop(reason);
      throw new SignedOut(reason);
    }
  }
  const parsed = await readBody(response);
  if (response.status === 202 && parsed?.status === "pending" && parsed.approvalId) {
    approvalsChanged();
    throw new ApprovalPending(parsed);
  }
  if (!response.ok) {
    const error = errorFrom(response, parsed);
    // A write that needs a fresh factor check: the admin is asked inline, then the same request goes once more.
    if (error.code === "step_up_required" && stepUpHandler && !retried.has(path) && await stepUpHandler()) {
      retried.add(path);
      try { return await request(method, path, body); } finally { retried.delete(path); }
    }
    if (error.code === "mfa_enrollment_required" && enrolmentHandler) enrolmentHandler(error);
    throw error;
  }
  return parsed;
}

// The requests being sent again after a step-up: each goes once more at most.
const retried = new Set();

/** A query string from an object, skipping empty values: query({limit: 5}) → "?limit=5". */
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** What every page gets as `api`. */
export const api = {
  get: (path, params = {}) => request("GET", path + query(params)),
  post: (path, body = {}) => request("POST", path, body),
  put: (path, body = {}) => request("PUT", path, body),
  session,
  hasRole,
};
