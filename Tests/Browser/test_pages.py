"""The console's job pages in a real browser: Users, Duplicates, Apple keys, Health, and the Overview's
health and key cards. Runs after test_console.py against the same seeded store, as one admin's session.
Screenshots of every page, at 1280×800 and narrow (viewport and full length), go to .build/screenshots/.
"""
import base64
import pathlib
import shutil
import subprocess
import tempfile

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from conftest import BIN, PASSWORD, SCREENSHOTS
from test_console import NARROW, WIDE, errors_shown, go, log_in, log_out, ready, signed_in_name, tokens, viewport, wait

KEY_ID = "ABCDEFGHIJ"
TEAM_ID = "TEAM123456"
SERVICES_ID = "com.example.web"


def shoot(browser, name, size=WIDE):
    """The viewport at `size`, and the whole page at that width."""
    width, height = size
    viewport(browser, size)
    browser.execute_script("window.scrollTo(0, 0)")
    browser.save_screenshot(str(SCREENSHOTS / f"{name}-{width}x{height}.png"))
    full = browser.execute_script("return document.documentElement.scrollHeight")
    viewport(browser, (width, min(max(full, height), 6000)))
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
    (SCREENSHOTS / f"{name}-{width}-full.png").write_bytes(base64.b64decode(shot["data"]))
    viewport(browser, size)


def signed_in_as(browser, console, username):
    """Logs in as `username` unless that admin is already signed in."""
    # Each engine's console has its own origin: the browser may still be on the previous one's, signed in there.
    if not browser.current_url.startswith(console.url):
        browser.get(console.url)
    current = tokens(browser)
    if current and current.get("username") == username:
        return
    browser.get(console.url)
    if current:
        log_out(browser)
    log_in(browser, username, PASSWORD)
    wait(browser).until(lambda b: username in signed_in_name(b))


def click_confirm(browser):
    wait(browser).until(EC.element_to_be_clickable((By.CSS_SELECTOR, '[data-confirm="yes"]'))).click()


def test_search_a_user_and_open_linked_accounts(browser, console):
    signed_in_as(browser, console, "admin")
    viewport(browser, WIDE)
    go(browser, console, "users")
    field = browser.find_element(By.ID, "user-q")
    field.send_keys("liam")
    browser.find_element(By.ID, "user-search").click()
    wait(browser).until(EC.presence_of_element_located((By.ID, "user-count")))
    ready(browser, "users")
    assert "user" in browser.find_element(By.ID, "user-count").text
    links = browser.find_elements(By.CSS_SELECTOR, "#user-results a.user-link")
    assert links, "the search found users named Liam"
    assert errors_shown(browser) == []
    shoot(browser, "10-users-search")
    shoot(browser, "10-users-search", NARROW)
    viewport(browser, WIDE)
    name = links[0].text
    links[0].click()
    detail = wait(browser).until(EC.presence_of_element_located((By.ID, "user-detail")))
    ready(browser, "users")
    accounts = browser.find_element(By.ID, "user-accounts").text
    assert any(provider in accounts for provider in ("apple", "google", "credential")), accounts
    assert "present" in accounts or "none" in accounts, "token presence, never values"
    assert name in detail.text
    assert errors_shown(browser) == []
    shoot(browser, "11-user-detail")
    shoot(browser, "11-user-detail", NARROW)


def test_hostile_search_is_answered_not_crashed(browser, console):
    viewport(browser, WIDE)
    browser.get(f"{console.url}#/users?q=%25_%25")
    ready(browser, "users")
    assert "No user matches" in browser.find_element(By.ID, "user-results").text
    browser.get(f"{console.url}#/users?q={'a' * 600}")
    ready(browser, "users")
    assert any("bytes long" in text for text in errors_shown(browser)), errors_shown(browser)


def test_the_integrity_check(browser, console):
    viewport(browser, WIDE)
    go(browser, console, "users")
    browser.find_element(By.ID, "integrity-run").click()
    wait(browser).until(EC.text_to_be_present_in_element((By.ID, "integrity-result"), "UNPROVISIONED"))
    assert errors_shown(browser) == []


def test_duplicates_list_pairs_linking_both_users(browser, console):
    viewport(browser, WIDE)
    go(browser, console, "duplicates")
    summary = wait(browser).until(EC.presence_of_element_located((By.ID, "dup-summary"))).text
    assert "pairs scoring at least 0.70" in summary or "pair scoring at least 0.70" in summary, summary
    rows = browser.find_elements(By.CSS_SELECTOR, "#dup-results tbody tr")
    assert rows, "the seeded split identities are found"
    first = rows[0]
    links = first.find_elements(By.CSS_SELECTOR, "a.user-link")
    assert len(links) == 2, "each pair links to both users"
    assert "same name" in first.text
    assert errors_shown(browser) == []
    shoot(browser, "12-duplicates")
    shoot(browser, "12-duplicates", NARROW)
    viewport(browser, WIDE)
    links[1].click()
    wait(browser).until(EC.presence_of_element_located((By.ID, "user-detail")))
    assert errors_shown(browser) == []


def test_import_activate_and_mint_a_secret_shown_once(browser, console, request):
    console.run("providers", "set", "apple", "--team-id", TEAM_ID, "--services-id", SERVICES_ID)
    directory = pathlib.Path(tempfile.mkdtemp(prefix="gatehouse-key-"))
    request.addfinalizer(lambda: shutil.rmtree(directory, ignore_errors=True))  # a private key: never left behind
    key_file = directory / f"AuthKey_{KEY_ID}.p8"
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(key_file)],
                   check=True, capture_output=True)
    assert key_file.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    viewport(browser, WIDE)
    go(browser, console, "apple")
    assert "ring is empty" in browser.find_element(By.ID, "key-ring").text
    browser.find_element(By.ID, "import-file").send_keys(str(key_file))
    browser.find_element(By.ID, "import-submit").click()
    wait(browser).until(EC.text_to_be_present_in_element((By.ID, "import-result"), f"Imported {KEY_ID}"))
    assert "STAGED" in browser.find_element(By.ID, "key-ring").text

    browser.find_element(By.ID, f"key-activate-{KEY_ID}").click()
    click_confirm(browser)
    wait(browser).until(EC.text_to_be_present_in_element((By.ID, "key-outcome-message"), f"{KEY_ID} is now active"))
    assert "ACTIVE" in browser.find_element(By.ID, "key-ring").text

    browser.find_element(By.ID, f"key-selftest-{KEY_ID}").click()
    click_confirm(browser)
    wait(browser).until(EC.text_to_be_present_in_element((By.ID, "key-outcome-message"), "passed"))

    browser.find_element(By.ID, "mint-submit").click()
    output = wait(browser).until(EC.presence_of_element_located((By.ID, "mint-token")))
    token = output.get_attribute("value")
    assert token.startswith("eyJ") and token.count(".") == 2
    assert "Shown once" in browser.find_element(By.ID, "mint-result").text
    assert errors_shown(browser) == []
    shoot(browser, "13-apple-keys")
    shoot(browser, "13-apple-keys", NARROW)
    viewport(browser, WIDE)

    # Inspect the secret just minted: acceptable, and signed by the active key.
    browser.find_element(By.ID, "inspect-token").send_keys(token)
    browser.find_element(By.ID, "inspect-submit").click()
    verdict = wait(browser).until(EC.visibility_of_element_located((By.ID, "inspect-verdict")))
    assert "banner ok" in verdict.get_attribute("class"), verdict.text
    assert KEY_ID in browser.find_element(By.ID, "inspect-result").text

    # Shown once: nowhere to be found after leaving the page, nor in storage, nor in the server's log.
    browser.find_element(By.ID, "mint-hide").click()
    assert browser.find_elements(By.ID, "mint-token") == []
    go(browser, console, "overview")
    go(browser, console, "apple")
    assert browser.find_elements(By.ID, "mint-token") == []
    assert token not in browser.page_source
    storage = browser.execute_script("return JSON.stringify([Object.entries(sessionStorage), Object.entries(localStorage)])")
    assert token not in storage
    assert token not in console.log()
    signature = token.rsplit(".", 1)[1]
    audit = console.run("audit", "list", "--action", "apple.*", "--json").stdout
    assert signature not in audit and "apple.secret.mint" in audit and "apple.key.activate" in audit


def test_health_history_is_charted(browser, console):
    for _ in range(3):
        result = subprocess.run([BIN, "health", "--record", "--store", console.store], capture_output=True, text=True, timeout=60,
                                env=console.env)
        assert result.returncode in (0, 1, 2), result.stdout + result.stderr
    viewport(browser, WIDE)
    go(browser, console, "health")
    # The key activated above is charted by its age (test_health_charts.py covers the charts).
    key_age = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, '.deadline-card[data-check="apple.key_age"]')))
    assert key_age.find_element(By.CSS_SELECTOR, "svg.chart").get_attribute("role") == "img"
    assert "0 days old" in key_age.find_element(By.TAG_NAME, "figcaption").text
    rows = browser.find_elements(By.CSS_SELECTOR, "#health-history tbody tr")
    assert len(rows) == 3, "the recorded runs, as a table"
    assert "store.integrity" in browser.find_element(By.ID, "health-current").get_attribute("textContent")
    assert errors_shown(browser) == []
    shoot(browser, "14-health")
    shoot(browser, "14-health", NARROW)


def test_overview_shows_health_and_the_active_key(browser, console):
    viewport(browser, WIDE)
    go(browser, console, "overview")
    assert "latest recorded run" in browser.find_element(By.ID, "overview-health").text
    key = browser.find_element(By.ID, "overview-apple-key").text
    assert KEY_ID in key and "active for" in key
    assert errors_shown(browser) == []
    shoot(browser, "15-overview-jobs")
    shoot(browser, "15-overview-jobs", NARROW)


def test_a_viewer_reads_but_cannot_change_keys_or_see_duplicates(browser, console):
    signed_in_as(browser, console, "vera")
    nav = browser.find_element(By.ID, "nav-list").text
    assert "Users" in nav and "Apple keys" in nav and "Duplicates" not in nav
    go(browser, console, "apple")
    assert not browser.find_element(By.ID, "import-submit").is_enabled()
    assert not browser.find_element(By.ID, "mint-submit").is_enabled()
    assert browser.find_elements(By.ID, f"key-activate-{KEY_ID}") == []
    assert browser.find_elements(By.ID, "export-submit") == []
    assert browser.find_element(By.ID, "inspect-submit").is_enabled()
    shoot(browser, "16-apple-viewer")
    status = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        fetch('/api/users/duplicates', {headers: {Authorization: 'Bearer ' + arguments[0]}}).then(r => done(r.status));
    """, tokens(browser)["accessToken"])
    assert status in (403, 401), "the server refuses a viewer, not only the navigation"
