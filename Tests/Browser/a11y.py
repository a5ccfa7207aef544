"""Measurements the browser tests share: text contrast (WCAG 2 relative luminance) and target sizes, computed in the
page from the rendered styles, with nothing loaded from outside."""

# Every visible element with text of its own whose contrast against the background it sits on is under WCAG AA (4.5:1,
# 3:1 for large text). Disabled controls are exempt, as WCAG says; SVG text is drawn with fill, checked elsewhere.
CONTRAST_SCRIPT = """
const parse = (c) => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
  const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number); return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 }; };
const over = (top, base) => ({ r: top.r * top.a + base.r * (1 - top.a), g: top.g * top.a + base.g * (1 - top.a), b: top.b * top.a + base.b * (1 - top.a), a: 1 });
const lum = ({ r, g, b }) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
const background = (node) => { const layers = [];
  for (let n = node; n; n = n.parentElement) { const c = parse(getComputedStyle(n).backgroundColor); if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; } }
  let base = { r: 255, g: 255, b: 255, a: 1 }; for (const l of layers.reverse()) base = over(l, base); return base; };
const failures = [];
for (const node of document.querySelectorAll("body *")) {
  if (node.closest("svg, option, .visually-hidden, .skip, [hidden], :disabled")) continue;
  const own = [...node.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
  if (!own) continue;
  const rect = node.getBoundingClientRect();
  if (rect.width === 0 || rect.height === 0) continue;
  const style = getComputedStyle(node);
  if (style.visibility === "hidden") continue;
  const bg = background(node);
  const fg = over(parse(style.color), bg);
  const [a, b] = [lum(fg), lum(bg)];
  const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  const size = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
  const needed = size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5;
  if (ratio < needed) failures.push(`${node.tagName.toLowerCase()}.${node.className} "${node.textContent.trim().slice(0, 40)}" ${ratio.toFixed(2)} < ${needed}`);
}
return failures;
"""

# Visible controls whose box is under 24 × 24 CSS pixels (WCAG 2.2, 2.5.8 Target Size (Minimum)). Links inside a
# sentence are exempt; the navigation's links are not.
TARGETS_SCRIPT = """
const small = [];
for (const node of document.querySelectorAll("button, input, select, textarea, summary, nav a, a.user-link")) {
  const rect = node.getBoundingClientRect();
  if (rect.width === 0 || rect.height === 0 || node.closest("[hidden], .visually-hidden") || getComputedStyle(node).visibility === "hidden") continue;
  if (node.tagName === "A" && !node.closest("nav") && getComputedStyle(node).display === "inline") continue;
  if (rect.width < 24 || rect.height < 24) small.push(`${node.tagName.toLowerCase()}#${node.id}.${node.className}[${node.type ?? ""}] ${rect.width.toFixed(1)}×${rect.height.toFixed(1)}`);
}
return small;
"""


def contrast_failures(browser):
    return browser.execute_script(CONTRAST_SCRIPT)


def small_targets(browser):
    return browser.execute_script(TARGETS_SCRIPT)


def color_scheme(browser, scheme):
    """Emulates the system's light or dark setting (None: back to the machine's)."""
    features = [{"name": "prefers-color-scheme", "value": scheme}] if scheme else []
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": features})


# Text nodes that read "null" or "undefined": a value the page appended without checking it.
STRAY_SCRIPT = """
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const stray = [];
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  if (["null", "undefined", "[object Object]"].includes(n.textContent.trim())) stray.push(n.parentElement.tagName + ": " + n.textContent.trim());
}
return stray;
"""


def stray_values(browser):
    return browser.execute_script(STRAY_SCRIPT)


# An axe-style check of a page's structure, computed in the page: the language, one main landmark and one h1, a named
# navigation, every visible control and link named, each id once, tables with column headers, named images, and no
# content outside a landmark (the skip link and the noscript notice aside).
STRUCTURE_SCRIPT = r"""
const problems = [];
const visible = (n) => { const r = n.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(n).visibility !== "hidden"; };
const text = (n) => (n.textContent || "").trim();
const named = (n) => {
  if ((n.getAttribute("aria-label") || "").trim()) return true;
  const by = n.getAttribute("aria-labelledby");
  if (by && by.split(/\s+/).every((id) => document.getElementById(id)) && by.split(/\s+/).some((id) => text(document.getElementById(id)))) return true;
  if (n.id && [...document.querySelectorAll("label")].some((l) => l.htmlFor === n.id && text(l))) return true;
  if (n.closest("label") && text(n.closest("label"))) return true;
  if (n.getAttribute("title")) return true;
  return false;
};
if (!document.documentElement.lang) problems.push("html has no lang");
if (document.querySelectorAll("main").length !== 1) problems.push(`${document.querySelectorAll("main").length} main landmarks`);
const h1s = [...document.querySelectorAll("#view h1")].filter(visible);
if (h1s.length !== 1) problems.push(`${h1s.length} visible h1`);
for (const nav of document.querySelectorAll("nav")) if (!named(nav)) problems.push("a nav without a name");
for (const aside of document.querySelectorAll("aside:not([hidden])")) if (!named(aside)) problems.push("an aside without a name");
for (const n of document.querySelectorAll("input:not([type=hidden]), select, textarea")) {
  if (visible(n) && !named(n)) problems.push(`control without a name: ${n.tagName.toLowerCase()}#${n.id}[${n.type}]`);
}
for (const n of document.querySelectorAll("button")) if (visible(n) && !text(n) && !named(n)) problems.push(`button without a name: #${n.id}.${n.className}`);
for (const n of document.querySelectorAll("a")) {
  if (!visible(n)) continue;
  if (!text(n) && !named(n)) problems.push(`link without a name: ${n.getAttribute("href")}`);
  if (!n.getAttribute("href")) problems.push(`link without an href: ${text(n)}`);
}
const ids = {};
for (const n of document.querySelectorAll("[id]")) ids[n.id] = (ids[n.id] || 0) + 1;
for (const [id, count] of Object.entries(ids)) if (count > 1) problems.push(`id "${id}" used ${count} times`);
for (const table of document.querySelectorAll("#view table")) if (!table.querySelector("th")) problems.push("a table without headers");
for (const n of document.querySelectorAll("svg[role=img], img")) if (!named(n) && !n.getAttribute("alt")) problems.push("an image without a name");
const landmarks = "header, nav, main, aside, footer, [role=region], [role=dialog], dialog";
for (const n of document.body.children) {
  if (["SCRIPT", "NOSCRIPT", "DIALOG"].includes(n.tagName) || n.classList.contains("skip") || n.hidden) continue;
  if (!n.matches(landmarks)) problems.push(`content outside a landmark: ${n.tagName.toLowerCase()}#${n.id}`);
}
return problems;
"""


def structure_problems(browser):
    return browser.execute_script(STRUCTURE_SCRIPT)
