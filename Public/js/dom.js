// Builds DOM nodes. Text is always set with textContent or text nodes, never parsed as HTML.

const PROPERTIES = new Set(["value", "checked", "disabled", "selected", "hidden", "required", "readOnly", "open"]);

/** el("button", {class: "primary", onclick: f, type: "button"}, "Save") → a <button>. */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "innerHTML" || key === "outerHTML") throw new Error("el(): HTML strings are not allowed");
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (PROPERTIES.has(key)) node[key] = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

/** Appends children: nodes, strings (as text), arrays; skips null/false. */
export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Removes every child. */
export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

/** A section card with a heading. */
export function card(title, ...children) {
  const id = `h-${title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${Math.random().toString(36).slice(2, 7)}`;
  return el("section", { class: "card", "aria-labelledby": id }, el("h2", { id, text: title }), ...children);
}

/** A table in a horizontally scrolling wrapper; rows are arrays of cells (strings or nodes). */
export function table(headers, rows, { caption, empty = "Nothing to show." } = {}) {
  if (rows.length === 0) return el("p", { class: "muted", text: empty });
  return el("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": caption ?? headers.join(", ") },
    el("table", {},
      caption ? el("caption", { class: "visually-hidden", text: caption }) : null,
      el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col", text: h })))),
      // data-label lets a narrow window show each row as a stacked card (see console.css).
      el("tbody", {}, rows.map((cells) => el("tr", {}, cells.map((c, i) => el("td", { "data-label": headers[i] }, c)))))));
}

/** A definition list from [term, value] pairs. */
export function facts(pairs) {
  return el("dl", { class: "facts" }, pairs.flatMap(([term, value]) => [el("dt", { text: term }), el("dd", {}, value)]));
}

/** An error banner (role=alert) for a failed request. */
export function errorBanner(error) {
  if (error?.name === "ApprovalPending") {
    return el("div", { class: "banner info approval-pending", role: "status" },
      el("strong", { text: "Sent for approval: " }), error.message, error.expiresAt ? [" The request expires ", time(error.expiresAt), ". "] : " ",
      el("a", { href: `#/approvals?id=${encodeURIComponent(error.approvalId)}`, class: "approval-link", text: `Open request ${error.approvalId}` }),
      el("div", { class: "fix", text: error.fix }));
  }
  const message = error?.message ?? String(error);
  return el("div", { class: "banner error", role: "alert" },
    el("strong", { text: "Error: " }), message, error?.fix ? el("div", { class: "fix", text: `What to do: ${error.fix}` }) : null);
}

/** A UTC time as text for a sentence: 2026-11-30 04:17:53Z. */
export function timeText(iso) {
  return iso ? String(iso).replace("T", " ").replace(/\.\d+Z$/, "Z") : "—";
}

/** How far `iso` is from `nowMs`, in words: "just now", "5 min ago", "in 3 h", "12 d ago", "4 mo ago", "2 y ago"; null if unreadable. */
export function relativeTime(iso, nowMs = Date.now()) {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return null;
  const seconds = Math.round((at - nowMs) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return "just now";
  const day = 86400;
  const text = abs < 90 * 60 ? `${Math.max(1, Math.round(abs / 60))} min`
    : abs < 36 * 3600 ? `${Math.round(abs / 3600)} h`
      : abs < 60 * day ? `${Math.round(abs / day)} d`
        : abs < 730 * day ? `${Math.round(abs / (30.44 * day))} mo`
          : `${Math.round(abs / (365.25 * day))} y`;
  return seconds < 0 ? `${text} ago` : `in ${text}`;
}

/**
 * The console's one time format: relative ("5 min ago", "in 3 d"), with the absolute UTC time on hover
 * (2026-11-30 04:17:53Z) and in `datetime`. A value that is not a time is shown as given.
 */
export function time(iso) {
  if (!iso) return "—";
  const relative = relativeTime(iso);
  if (relative === null) return el("span", { text: String(iso) });
  const exact = new Date(Date.parse(iso)).toISOString();
  return el("time", { datetime: exact, title: timeText(exact), text: relative });
}

/** Server text that names times (ISO-8601, "…at 2026-12-06T09:49:50.761Z"): each time shown as `time()` shows it. */
export function withTimes(text) {
  const parts = String(text ?? "").split(/(\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?Z)/);
  if (parts.length === 1) return parts[0];
  return el("span", {}, parts.map((part, i) => (i % 2 ? time(part) : part)));
}

/** A value as compact JSON text (true, ["google"]). */
export function json(value) {
  return el("code", { text: JSON.stringify(value) });
}

/** A labelled form control: <div class="field"><label for=id>…</label>control<small>hint</small></div>. */
export function field(label, control, hint) {
  return el("div", { class: "field" }, el("label", { for: control.id, text: label }), control, hint ? el("small", { class: "muted", text: hint }) : null);
}

/** A status pill: ok, warning, critical, unknown (health) or a key state (staged, active, retired, revoked). */
export function pill(value, label = value) {
  return el("span", { class: `pill status-${String(value).replace(/[^a-z_]/g, "")}`, text: String(label).toUpperCase() });
}

/** How long from `fromIso` to `nowIso`, coarse: "45 s", "12 min", "5 h", "17 d". */
export function age(fromIso, nowIso) {
  if (!fromIso) return "—";
  const seconds = Math.max(0, Math.round((Date.parse(nowIso ?? new Date().toISOString()) - Date.parse(fromIso)) / 1000));
  if (seconds < 90) return `${seconds} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 48 * 3600) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} d`;
}

/** How long until `untilIso`, from `nowMs` (default: this machine's clock): "1 h 59 min", "12 min", "40 s"; "0 s" once passed. */
export function timeLeft(untilIso, nowMs = Date.now()) {
  const seconds = Math.max(0, Math.round((Date.parse(untilIso) - nowMs) / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  return `${Math.round(hours / 24)} d`;
}

/** Findings ({severity, message, fix?}) as a list, each marked with its severity; nothing (an empty fragment) when there are none. */
export function findings(list, { id, empty } = {}) {
  if (!list || list.length === 0) return empty ? el("p", { class: "muted", id, text: empty }) : document.createDocumentFragment();
  return el("ul", { class: "findings", id }, list.map((f) => el("li", { class: `finding ${f.severity}` },
    el("strong", { text: `${String(f.severity).toUpperCase()}: ` }), withTimes(f.message),
    f.fix ? el("div", { class: "fix muted small", text: `What to do: ${f.fix}` }) : null)));
}

/** A button that copies `text()` to the clipboard and says so in `status` (an aria-live region). */
export function copyButton(text, { id, label = "Copy" } = {}) {
  const status = el("span", { class: "muted small", role: "status" });
  const button = el("button", { type: "button", class: "secondary", id, text: label });
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text());
      status.textContent = " Copied.";
    } catch {
      status.textContent = " Copying was refused by the browser: select the text and copy it by hand.";
    }
  });
  return el("span", { class: "copy" }, button, status);
}

/**
 * A value an operator pastes elsewhere (a user id, a sub, a fingerprint, a plan id) in <code>, with a small Copy button.
 * `what` names it for the button's label ("Copy user id"); `shown` is a shorter form to display (the whole value is
 * copied and in the tooltip). A missing value is "—".
 */
export function copyable(value, what, { shown, id } = {}) {
  if (value === null || value === undefined || value === "") return "—";
  const text = String(value);
  const status = el("span", { class: "visually-hidden", role: "status" });
  const button = el("button", { type: "button", class: "copy-button", "aria-label": `Copy ${what}`, title: `Copy ${what}`, text: "Copy" });
  let reset = null;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
      status.textContent = `${what} copied.`;
    } catch {
      button.textContent = "Not copied";
      status.textContent = "Copying was refused by the browser: select the text and copy it by hand.";
    }
    clearTimeout(reset);
    reset = setTimeout(() => { button.textContent = "Copy"; status.textContent = ""; }, 2500);
  });
  return el("span", { class: "copyable" }, el("code", { id, title: shown ? text : null, text: shown ?? text }), button, status);
}

/**
 * An inline confirmation: shows `question` with Confirm and Cancel buttons in `slot` and calls
 * `action()` on Confirm. Focus moves to Confirm, and back to `returnTo` on Cancel.
 */
export function confirmInline(slot, { question, confirmLabel, danger = false, returnTo, action }) {
  const confirm = el("button", { type: "button", class: danger ? "danger" : "primary", "data-confirm": "yes", text: confirmLabel });
  const cancel = el("button", { type: "button", class: "secondary", text: "Cancel" });
  const box = el("div", { class: "confirm", role: "group", "aria-label": "Confirm" }, el("p", { text: question }), el("div", { class: "actions" }, confirm, cancel));
  cancel.addEventListener("click", () => { clear(slot); returnTo?.focus(); });
  confirm.addEventListener("click", () => { confirm.disabled = cancel.disabled = true; action(); });
  clear(slot).append(box);
  confirm.focus();
}
