// The navigation on a narrow window: folded behind a Menu button (a real button with aria-expanded) so the bar is one
// line tall; it opens and closes on a click, closes on Escape and when a page is chosen. On a wide window the CSS shows
// the navigation whatever the button says.
const bar = document.querySelector("header.bar");
const toggle = document.getElementById("nav-toggle");

function setOpen(open) {
  bar.classList.toggle("open", open);
  toggle.setAttribute("aria-expanded", String(open));
}

if (bar && toggle) {
  toggle.addEventListener("click", () => setOpen(!bar.classList.contains("open")));
  bar.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && bar.classList.contains("open")) { setOpen(false); toggle.focus(); }
  });
  window.addEventListener("hashchange", () => setOpen(false));
}
