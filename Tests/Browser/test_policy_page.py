"""The Policy page's simulator in a real browser: both flows, a missing email, provider options, the deciding source
line, and where the linkSocial switch reaches. Runs against the same seeded store as the other browser tests."""
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from test_console import WIDE, errors_shown, go, viewport, wait
from test_pages import shoot, signed_in_as


def simulate(browser):
    before = browser.find_elements(By.ID, "sim-headline")
    browser.find_element(By.ID, "sim-run").click()
    if before:
        wait(browser).until(EC.staleness_of(before[0]))
    wait(browser).until(EC.visibility_of_element_located((By.ID, "sim-source")))
    return browser.find_element(By.ID, "sim-headline").text


def test_the_policy_page_says_where_the_switch_reaches(browser, console):
    signed_in_as(browser, console, "admin")
    viewport(browser, WIDE)
    go(browser, console, "policy")
    reach = wait(browser).until(EC.visibility_of_element_located((By.ID, "switch-reach"))).text
    assert "POST /link-social" in reach and "GET /callback/:providerId" in reach, reach
    assert "?error=email_does_not_match" in reach


def test_the_simulator_follows_both_flows(browser, console):
    signed_in_as(browser, console, "admin")
    viewport(browser, WIDE)
    go(browser, console, "policy")
    # A returning Apple user whose token carries no email, on the web: refused before any lookup.
    Select(browser.find_element(By.ID, "sim-via")).select_by_value("redirect")
    Select(browser.find_element(By.ID, "sim-provider")).select_by_value("apple")
    browser.find_element(By.ID, "sim-no-email").click()
    assert not browser.find_element(By.ID, "sim-email").is_enabled()
    headline = simulate(browser)
    assert headline == "redirect ?error=email_not_found (HTTP 302)", headline
    assert "api/routes/callback.ts:356" in browser.find_element(By.ID, "sim-source").text
    # GitHub declares no id-token config: the app's id-token sign-in is refused with 404.
    Select(browser.find_element(By.ID, "sim-via")).select_by_value("id-token")
    Select(browser.find_element(By.ID, "sim-provider")).select_by_value("github")
    browser.find_element(By.ID, "sim-no-email").click()
    browser.find_element(By.ID, "sim-email").clear()
    browser.find_element(By.ID, "sim-email").send_keys("someone.new@example.com")
    headline = simulate(browser)
    assert headline.startswith("error ID_TOKEN_NOT_SUPPORTED"), headline
    assert "(HTTP 404)" in headline
    # A provider option: requireEmailVerification refuses a session to a new user with an unverified email.
    Select(browser.find_element(By.ID, "sim-provider")).select_by_value("google")
    browser.find_element(By.ID, "sim-verified").click()
    browser.execute_script("document.querySelectorAll('form details').forEach((d) => d.open = true)")
    browser.find_element(By.ID, "sim-opt-requireEmailVerification").click()
    headline = simulate(browser)
    assert headline.startswith("error EMAIL_NOT_VERIFIED") and "(HTTP 403)" in headline, headline
    assert browser.find_element(By.ID, "sim-depends").text
    assert errors_shown(browser) == []
    browser.execute_script("document.getElementById('sim-result').scrollIntoView()")
    shoot(browser, "05-simulator-flows")
