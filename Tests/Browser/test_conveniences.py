"""The console's conveniences in a real browser: dark mode from the system setting (every text readable in both), the
mobile navigation folded behind a Menu button, touch targets of 24 px at least, "/" to search, Copy buttons, and empty
states that say how to get data. At 1440 px and 390 px; screenshots in .build/screenshots/."""
import json

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC

from a11y import color_scheme, contrast_failures, small_targets, stray_values
from test_console import errors_shown, go, ready, viewport, wait
from test_pages import shoot, signed_in_as

DESKTOP = (1440, 900)
PHONE = (390, 844)
PAGES = ["overview", "users", "duplicates", "merges", "deletions", "apple", "apple-events", "policy", "gates", "health", "audit", "security"]


def a_user(console):
    found = json.loads(console.run("users", "search", "a", "--by", "email", "--limit", "20", "--json").stdout)
    return next(u for u in found["users"] if u["email"])


def open_all_details(browser):
    browser.execute_script("document.querySelectorAll('#view details').forEach((d) => d.open = true)")


def body_background(browser):
    return browser.execute_script("return getComputedStyle(document.body).backgroundColor")


def test_dark_mode_follows_the_system_setting_and_every_text_is_readable(browser, console):
    signed_in_as(browser, console, "admin")
    user = a_user(console)
    routes = PAGES + [f"users?id={user['id']}"]
    # The measurement itself: grey #999 on white (2.85:1) is caught.
    go(browser, console, "overview")
    browser.execute_script("const p = document.createElement('p'); p.id = 'probe'; p.textContent = 'probe'; p.style.cssText = 'color:#999;background:#fff';"
                           "document.querySelector('[data-page]').append(p)")
    assert any('"probe" 2.85' in f for f in contrast_failures(browser)), contrast_failures(browser)
    browser.execute_script("document.getElementById('probe').remove()")
    try:
        for scheme in ("light", "dark"):
            color_scheme(browser, scheme)
            for size in (DESKTOP, PHONE):
                viewport(browser, size)
                for route in routes:
                    browser.get(f"{console.url}#/{route}")
                    ready(browser, route.split("?")[0])
                    open_all_details(browser)
                    failures = contrast_failures(browser)
                    assert failures == [], f"{scheme} {size} #{route}: {failures}"
                    assert stray_values(browser) == [], f"#{route}: {stray_values(browser)}"
            viewport(browser, DESKTOP)
            go(browser, console, "overview")
            if scheme == "light":
                light = body_background(browser)
            else:
                assert body_background(browser) != light, "dark mode changes the page's background"
            shoot(browser, f"47-overview-{scheme}", DESKTOP)
            shoot(browser, f"47-overview-{scheme}", PHONE)
            go(browser, console, "policy")
            shoot(browser, f"47-policy-{scheme}", DESKTOP)
    finally:
        color_scheme(browser, None)
        viewport(browser, DESKTOP)


def test_the_mobile_navigation_folds_behind_a_menu_button(browser, console):
    signed_in_as(browser, console, "admin")
    viewport(browser, PHONE)
    go(browser, console, "overview")
    bar = browser.find_element(By.CSS_SELECTOR, "header.bar")
    toggle = browser.find_element(By.ID, "nav-toggle")
    assert toggle.tag_name == "button" and toggle.get_attribute("aria-expanded") == "false"
    assert bar.size["height"] <= 56, bar.size
    assert not browser.find_element(By.ID, "nav").is_displayed()
    shoot(browser, "48-menu-closed", PHONE)
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    link = browser.find_element(By.CSS_SELECTOR, 'nav a[href="#/health"]')
    assert link.is_displayed() and browser.find_element(By.ID, "logout").is_displayed()
    viewport(browser, PHONE)
    shoot(browser, "48-menu-open", PHONE)
    link.click()
    ready(browser, "health")
    assert toggle.get_attribute("aria-expanded") == "false", "choosing a page folds the menu"
    assert not browser.find_element(By.ID, "nav").is_displayed()
    toggle.click()
    ActionChains(browser).send_keys(Keys.ESCAPE).perform()
    assert toggle.get_attribute("aria-expanded") == "false" and browser.switch_to.active_element == toggle
    # A wide window shows the navigation and no Menu button.
    viewport(browser, DESKTOP)
    assert browser.find_element(By.ID, "nav").is_displayed() and not toggle.is_displayed()


def test_touch_targets_are_24_px_at_least(browser, console):
    signed_in_as(browser, console, "admin")
    user = a_user(console)
    # The Merges page with its radio buttons: a pair from the Duplicates page.
    go(browser, console, "duplicates")
    plan = browser.find_element(By.CSS_SELECTOR, "#dup-results tbody tr a.plan-merge").get_attribute("href").split("#/", 1)[1]
    for size in (DESKTOP, PHONE):
        viewport(browser, size)
        for route in PAGES + [f"users?id={user['id']}", plan]:
            browser.get(f"{console.url}#/{route}")
            ready(browser, route.split("?")[0])
            if route == plan:
                wait(browser).until(EC.presence_of_element_located((By.ID, "merge-plan-id")))
            open_all_details(browser)
            assert small_targets(browser) == [], f"{size} #{route}: {small_targets(browser)}"
    viewport(browser, DESKTOP)
    browser.get(f"{console.url}#/{plan}")
    wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, "fieldset.choices input[type=radio]")))
    radio = browser.find_element(By.CSS_SELECTOR, "fieldset.choices input[type=radio]")
    assert radio.size["width"] >= 24 and radio.size["height"] >= 24, radio.size
    shoot(browser, "49-merge-radios", DESKTOP)


def test_slash_focuses_the_search_unless_typing(browser, console):
    signed_in_as(browser, console, "admin")
    viewport(browser, DESKTOP)
    go(browser, console, "overview")
    ActionChains(browser).send_keys("/").perform()
    wait(browser).until(lambda b: b.switch_to.active_element.get_attribute("id") == "user-q")
    assert browser.current_url.endswith("#/users")
    field = browser.switch_to.active_element
    assert field.get_attribute("value") == "", "the / is not typed into the field"
    field.send_keys("a/b")
    assert field.get_attribute("value") == "a/b", "typing / in a field types it"
    # In another page's field, / is just a character.
    go(browser, console, "policy")
    reason = browser.find_element(By.ID, "switch-reason")
    reason.send_keys("SUP/1")
    assert reason.get_attribute("value") == "SUP/1" and browser.current_url.endswith("#/policy")
    # On the Users page itself, / goes to its field.
    go(browser, console, "users")
    browser.find_element(By.ID, "user-search").send_keys("")
    ActionChains(browser).send_keys("/").perform()
    assert browser.switch_to.active_element.get_attribute("id") == "user-q"


def test_copy_buttons_copy_the_whole_value(browser, console):
    signed_in_as(browser, console, "admin")
    viewport(browser, DESKTOP)
    user = a_user(console)
    browser.execute_cdp_cmd("Browser.grantPermissions", {"origin": console.url.rstrip("/"),
                                                        "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    browser.get(f"{console.url}#/users?id={user['id']}")
    ready(browser, "users")
    buttons = browser.find_elements(By.CSS_SELECTOR, "#user-detail button.copy-button")
    labels = [b.get_attribute("aria-label") for b in buttons]
    assert "Copy user id" in labels and "Copy sync sub" in labels, labels
    assert any(label.endswith("account id") for label in labels), labels
    button = buttons[labels.index("Copy user id")]
    button.click()
    wait(browser).until(lambda b: button.text == "Copied")
    copied = browser.execute_async_script("const done = arguments[0]; navigator.clipboard.readText().then(done, (e) => done('refused: ' + e))")
    assert copied == user["id"], copied
    shoot(browser, "50-copy-buttons", DESKTOP)
    # The key ring's fingerprints and the Merges page's plan ids have them too.
    go(browser, console, "apple")
    if browser.find_elements(By.CSS_SELECTOR, "#view table"):
        assert browser.find_elements(By.CSS_SELECTOR, 'button[aria-label="Copy fingerprint"]')


# A stand-in for the API answering no data, for the empty states (the shared store has notifications and runs by now).
EMPTY_ANSWERS = """
const real = window.fetch;
window.fetch = (input, init) => {
  const url = String(input);
  if (url.startsWith('/api/apple/notifications') || url.startsWith('/api/health/history'))
    return real(input, init).then((r) => r.ok ? new Response('[]', { status: 200, headers: { 'Content-Type': 'application/json' } }) : r);
  return real(input, init);
};
"""


def test_empty_states_say_how_to_get_data(browser, console):
    signed_in_as(browser, console, "admin")
    script = browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": EMPTY_ANSWERS})["identifier"]
    browser.refresh()  # a new document, so the stand-in is in place (the session stays in sessionStorage)
    try:
        for size in (DESKTOP, PHONE):
            viewport(browser, size)
            browser.get(f"{console.url}#/apple-events")
            ready(browser, "apple-events")
            steps = browser.find_element(By.ID, "apple-events-setup").text
            assert "gatehouse apple notifications serve" in steps, steps
            assert "ops/runbooks/apple-notifications.md" in browser.find_element(By.CSS_SELECTOR, '[data-page="apple-events"]').text
            assert browser.execute_script("return document.documentElement.scrollWidth") <= size[0], "nothing wider than the window"
            shoot(browser, "51-apple-events-empty", size)
            browser.get(f"{console.url}#/health")
            ready(browser, "health")
            empty = wait(browser).until(EC.visibility_of_element_located((By.ID, "health-history-empty"))).text
            assert "systemctl enable --now gatehouse-health.timer" in empty and "gatehouse health --record" in empty, empty
            browser.execute_script("document.getElementById('health-history-empty').scrollIntoView()")
            shoot(browser, "51-health-empty", size)
            browser.get(f"{console.url}#/overview")
            ready(browser, "overview")
            assert "gatehouse-health.timer" in browser.find_element(By.ID, "overview-health").text
            assert errors_shown(browser) == []
    finally:
        browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script})
        browser.refresh()
        viewport(browser, DESKTOP)
