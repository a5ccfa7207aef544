"""The console in a real browser: headless Chromium driving `gatehouse serve` over a seeded store.

Runs in file order, as one admin's session: log in, overview, flip the linkSocial switch with a reason
and a duration, see it in the history and the audit log, run the simulator, survive an access-token
expiry without a visible error, and log out. Screenshots of every page go to .build/screenshots/.
"""
import json
import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import ACCESS_TTL, PASSWORD, SCREENSHOTS

WIDE = (1280, 800)
NARROW = (420, 800)


def viewport(browser, size):
    width, height = size
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def shoot(browser, name, size=WIDE):
    viewport(browser, size)
    time.sleep(0.2)
    browser.save_screenshot(str(SCREENSHOTS / f"{name}-{size[0]}x{size[1]}.png"))


def wait(browser, seconds=10):
    return WebDriverWait(browser, seconds)


def ready(browser, page):
    """Waits until the shell has rendered `page` completely."""
    return wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, f'[data-page="{page}"][data-ready="true"]')))


def errors_shown(browser):
    return [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".banner.error") if e.is_displayed()]


def go(browser, console, route):
    browser.get(f"{console.url}#/{route}")
    return ready(browser, route)


def tokens(browser):
    return json.loads(browser.execute_script("return sessionStorage.getItem('gatehouse.tokens')") or "null")


def log_out(browser):
    """Clicks Log out, opening the narrow window's menu first when it is folded, and waits until it is done."""
    toggle = browser.find_element(By.ID, "nav-toggle")
    if toggle.is_displayed() and toggle.get_attribute("aria-expanded") == "false":
        toggle.click()
    browser.find_element(By.ID, "logout").click()
    # The page drops its tokens once the server has answered; a reload before then would still be signed in.
    wait(browser).until(lambda b: tokens(b) is None)


def signed_in_name(browser):
    """Who the bar says is signed in, shown or folded behind the menu."""
    return browser.find_element(By.ID, "who-name").get_attribute("textContent")


def log_in(browser, username, password):
    field = wait(browser).until(EC.visibility_of_element_located((By.ID, "username")))
    field.clear()
    field.send_keys(username)
    browser.find_element(By.ID, "password").send_keys(password + Keys.ENTER)


def test_wrong_password_is_refused_without_leaking(browser, console):
    viewport(browser, WIDE)
    browser.get(console.url)
    log_in(browser, "admin", "not-the-password")
    status = wait(browser).until(EC.visibility_of_element_located((By.ID, "login-status")))
    assert "wrong" in status.text
    assert tokens(browser) is None
    shoot(browser, "01-login-error")
    shoot(browser, "01-login-error", NARROW)


def test_login_shows_the_overview(browser, console):
    viewport(browser, WIDE)
    browser.get(console.url)
    log_in(browser, "admin", PASSWORD)
    page = ready(browser, "overview")
    assert "Overview" in page.text
    assert browser.find_element(By.ID, "overview-switch").text == "OFF"
    assert "300" in page.text, "the seeded user count is shown"
    assert "console.login" in page.text, "the login is in the recent audit entries"
    assert browser.find_element(By.ID, "who-name").text == "admin (admin)"
    assert errors_shown(browser) == []
    shoot(browser, "02-overview")
    shoot(browser, "02-overview", NARROW)


def test_flip_the_switch_with_a_reason_and_a_duration(browser, console):
    viewport(browser, WIDE)
    go(browser, console, "policy")
    assert browser.find_element(By.ID, "switch-state").text == "OFF"
    browser.find_element(By.ID, "switch-reason").send_keys("SUP-4242 Hide My Email user connects Google")
    Select(browser.find_element(By.ID, "switch-duration")).select_by_value("2h")
    browser.find_element(By.ID, "switch-submit").click()
    # Turning it ON is confirmed first.
    confirm = wait(browser).until(EC.element_to_be_clickable((By.CSS_SELECTOR, '#switch-confirm [data-confirm="yes"]')))
    assert "for 2 hours" in browser.find_element(By.ID, "switch-confirm").text
    confirm.click()
    wait(browser).until(EC.text_to_be_present_in_element((By.ID, "switch-state"), "ON"))
    wait(browser).until(EC.text_to_be_present_in_element((By.ID, "switch-result"), "version 1"))
    history = browser.find_element(By.ID, "policy-history").text
    assert "SUP-4242 Hide My Email user connects Google" in history
    assert "console:admin" in history
    assert "until" in history, "the timed change shows when it reverts"
    assert errors_shown(browser) == []
    shoot(browser, "03-policy")
    shoot(browser, "03-policy", NARROW)


def test_the_change_is_in_the_audit_log(browser, console):
    viewport(browser, WIDE)
    go(browser, console, "audit")
    action = browser.find_element(By.ID, "audit-action")
    action.send_keys("policy.*")
    browser.find_element(By.ID, "audit-apply").click()
    wait(browser).until(EC.text_to_be_present_in_element((By.ID, "audit-count"), "1 entry"))
    results = browser.find_element(By.ID, "audit-results").text
    assert "policy.set" in results and "console:admin" in results and "SUP-4242" in results
    browser.find_element(By.ID, "audit-verify").click()
    wait(browser).until(EC.text_to_be_present_in_element((By.ID, "audit-verify-result"), "Intact"))
    assert errors_shown(browser) == []
    shoot(browser, "04-audit")
    shoot(browser, "04-audit", NARROW)


def test_the_simulator(browser, console):
    viewport(browser, WIDE)
    go(browser, console, "policy")
    Select(browser.find_element(By.ID, "sim-provider")).select_by_value("google")
    browser.find_element(By.ID, "sim-email").send_keys("someone.new@gmail.com")
    browser.find_element(By.ID, "sim-run").click()
    headline = wait(browser).until(EC.visibility_of_element_located((By.ID, "sim-headline")))
    assert "HTTP" in headline.text
    assert browser.find_elements(By.CSS_SELECTOR, "#sim-result .checks li"), "the checks are listed"
    assert errors_shown(browser) == []
    browser.execute_script("document.getElementById('sim-result').scrollIntoView()")
    shoot(browser, "05-simulator")


def test_an_expired_access_token_is_refreshed_invisibly(browser, console):
    viewport(browser, WIDE)
    go(browser, console, "overview")
    before = tokens(browser)
    log_mark = len(console.log())
    time.sleep(ACCESS_TTL + 1.5)
    # Three requests at once (status, policy, audit) all meet token_expired: one refresh serves them.
    browser.find_element(By.CSS_SELECTOR, 'nav a[href="#/overview"]').click()
    browser.find_element(By.CSS_SELECTOR, 'nav a[href="#/audit"]').click()
    ready(browser, "audit")
    assert errors_shown(browser) == []
    assert browser.find_elements(By.ID, "username") == [], "no login view"
    after = tokens(browser)
    assert after and after["accessToken"] != before["accessToken"] and after["refreshToken"] != before["refreshToken"]
    log = console.log()[log_mark:]
    assert " 401 " in log, log
    assert log.count("POST /api/auth/refresh 200") >= 1, log
    assert "POST /api/auth/refresh 401" not in log, "no refresh token was presented twice"
    after_refresh = log.split("POST /api/auth/refresh 200", 1)[1]
    assert "GET /api/audit 200" in after_refresh, log
    shoot(browser, "06-after-refresh")


def test_a_viewer_sees_reads_but_cannot_change_the_policy(browser, console):
    log_out(browser)
    log_in(browser, "vera", PASSWORD)
    wait(browser).until(EC.text_to_be_present_in_element((By.ID, "who-name"), "vera (viewer)"))
    go(browser, console, "policy")
    assert not browser.find_element(By.ID, "switch-submit").is_enabled()
    assert not browser.find_element(By.ID, "sim-run").is_enabled()
    shoot(browser, "07-policy-viewer")


def test_logout_ends_the_session(browser, console):
    before = tokens(browser)
    log_out(browser)
    wait(browser).until(EC.visibility_of_element_located((By.ID, "username")))
    assert tokens(browser) is None
    assert "logged out" in browser.find_element(By.CSS_SELECTOR, ".login-form").text
    # The server revoked the family: the old access token is refused.
    status = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        fetch('/api/auth/me', {headers: {Authorization: 'Bearer ' + arguments[0]}})
          .then(r => done([r.status, r.headers.get('x-auth-error')]));
    """, before["accessToken"])
    assert status == [401, "token_revoked"]
    shoot(browser, "08-logged-out")
    shoot(browser, "08-logged-out", NARROW)
