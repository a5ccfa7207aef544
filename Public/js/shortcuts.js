// Keyboard shortcuts: "/" focuses the page's search field (an input marked data-search), or opens the Users page's
// search from any other page. Never while the admin is typing in a field, and never with a modifier key.
const TYPING = new Set(["INPUT", "TEXTAREA", "SELECT"]);

function typing(target) {
  return target instanceof Element && (TYPING.has(target.tagName) || target.isContentEditable);
}

function focusSearch() {
  const field = document.querySelector("#view [data-search]");
  if (!field) return false;
  field.focus();
  field.select?.();
  return true;
}

document.addEventListener("keydown", (event) => {
  if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
  if (document.querySelector("dialog[open]") || document.getElementById("username")) return;
  event.preventDefault();
  if (focusSearch()) return;
  location.hash = "#/users";
  // The Users page renders asynchronously: focus its field once it is there (a few seconds at most).
  const started = Date.now();
  const poll = setInterval(() => { if (focusSearch() || Date.now() - started > 5000) clearInterval(poll); }, 50);
});
