"""One time format across the console: every time is relative ("5 min ago", "in 30 d") with the absolute UTC time on
hover, the sync tables' included, and no raw ISO time is left in the pages' text; and the user page's accounts table
fits (no column off-screen) at 1280 px and wider."""
import json
import re

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from test_console import errors_shown, ready, viewport, wait
from test_pages import shoot, signed_in_as

PAGES = ["overview", "users", "duplicates", "merges", "deletions", "apple", "apple-events", "policy", "gates", "health", "audit", "security"]
RELATIVE = re.compile(r"^(just now|in \d+ (min|h|d|mo|y)|\d+ (min|h|d|mo|y) ago)$")
ABSOLUTE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$")

# Text outside <time> that reads as a date and time, except raw data the page shows as such (audit details, code).
RAW_TIMES = r"""
const found = [];
const walker = document.createTreeWalker(document.getElementById("view"), NodeFilter.SHOW_TEXT);
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  if (n.parentElement.closest("time, .details, code, pre, svg, textarea, input, option")) continue;
  const m = n.textContent.match(/\d{4}-\d\d-\d\d[T ]\d\d:\d\d/);
  if (m) found.push(n.parentElement.tagName + ": " + n.textContent.trim().slice(0, 80));
}
return found;
"""


def user_with_sync_rows(console):
    """A seeded user whose page has sync rows with times (a workspace or a subscription), and an account with scopes."""
    found = json.loads(console.run("users", "search", "a", "--by", "email", "--limit", "60", "--json").stdout)["users"]
    for user in found:
        shown = json.loads(console.run("users", "show", user["id"], "--json").stdout)
        if shown["sync"]["workspaces"] and any(a.get("scope") for a in shown["accounts"]):
            return user
    raise AssertionError("no seeded user with a workspace and scopes")


def check_times(browser, where):
    times = browser.find_elements(By.CSS_SELECTOR, "#view time")
    for node in times:
        text, title = node.text, node.get_attribute("title")
        if not node.is_displayed():
            continue
        assert RELATIVE.match(text), f"{where}: {text!r}"
        assert ABSOLUTE.match(title), f"{where}: title {title!r}"
        assert node.get_attribute("datetime").endswith("Z")
    raw = browser.execute_script(RAW_TIMES)
    assert raw == [], f"{where}: {raw}"
    return len(times)


def test_every_time_is_relative_with_the_absolute_time_on_hover(browser, console):
    signed_in_as(browser, console, "admin")
    viewport(browser, (1440, 900))
    user = user_with_sync_rows(console)
    counted = 0
    for route in PAGES + [f"users?id={user['id']}"]:
        browser.get(f"{console.url}#/{route}")
        ready(browser, route.split("?")[0])
        counted += check_times(browser, route)
    assert counted > 20, counted
    # The sync tables: the workspace's creation is a <time>, not raw ISO text.
    sync = browser.find_element(By.XPATH, "//section[.//h2[text()='Sync server']]")
    assert sync.find_elements(By.CSS_SELECTOR, "table time"), sync.text
    shoot(browser, "53-user-times", (1440, 900))


def test_the_accounts_table_fits_from_1280_px(browser, console):
    signed_in_as(browser, console, "admin")
    user = user_with_sync_rows(console)
    for width in (1280, 1440, 1920):
        viewport(browser, (width, 900))
        browser.get(f"{console.url}#/users?id={user['id']}")
        ready(browser, "users")
        wrap = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#user-accounts .table-wrap")))
        overflow = browser.execute_script("return arguments[0].scrollWidth - arguments[0].clientWidth", wrap)
        assert overflow <= 0, f"{width} px: the accounts table is {overflow} px wider than its card"
        tokens = browser.find_elements(By.CSS_SELECTOR, "#user-accounts th")[-1]
        right = browser.execute_script("return arguments[0].getBoundingClientRect().right", tokens)
        assert tokens.text == "TOKENS" and right <= width, (tokens.text, right, width)
        assert errors_shown(browser) == []
        shoot(browser, "54-user-accounts", (width, 900))
