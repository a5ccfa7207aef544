"""The Security events page: the empty state's setup steps; Apple's and Google's events in one list with filters; the
user's page it links to, showing the Google flag; an admin undoing what a Google event changed, with a reason. The
events are made on a console of its own (a Google client id changes the shared store's health)."""
import json
import subprocess
import sys
import tempfile
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from conftest import ROOT, Console
from test_console import errors_shown, go, log_out, ready, wait
from test_pages import shoot, signed_in_as


def test_the_empty_state_says_how_to_receive_events(browser, console):
    if console.engine != "sqlite":
        return  # the shared store has Apple's events of other tests: a console of its own, once
    with tempfile.TemporaryDirectory(prefix="gatehouse-no-events-") as directory:
        own = Console(directory, f"{directory}/empty.sqlite")
        own.start()
        browser.get(own.url)
        signed_in_as(browser, own, "vera")
        try:
            page = go(browser, own, "security-events")
            assert errors_shown(browser) == []
            assert "No event yet" in page.text
            assert "gatehouse google risc serve" in page.text and "ops/runbooks/google-risc.md" in page.text
        finally:
            log_out(browser)
            own.stop()


def sign(port, fields):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/test/sign", data=json.dumps(fields).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)["token"]


def test_events_are_listed_filtered_and_undone(browser, console):
    if console.engine != "sqlite":
        return  # one console of its own is enough; the API's engines are covered by the Swift tests
    with tempfile.TemporaryDirectory(prefix="gatehouse-events-") as directory:
        own = Console(directory, f"{directory}/events.sqlite")
        own.start()
        google = subprocess.Popen([sys.executable, str(ROOT / "Tests/Fixtures/google_server.py"), "--port", "0"], stdout=subprocess.PIPE, text=True)
        try:
            port = int(google.stdout.readline().split()[1])
            own.env["GATEHOUSE_GOOGLE_ACCOUNTS_BASE_URL"] = f"http://127.0.0.1:{port}"
            own.run("providers", "set", "google", "--client-id", "web=web-client.apps.googleusercontent.com")
            sub = subprocess.run(["sqlite3", own.store, "SELECT accountId FROM account WHERE providerId = 'google' ORDER BY id LIMIT 1"],
                                 capture_output=True, text=True, check=True).stdout.strip()
            for event, extra in (("sessions-revoked", {}), ("account-disabled", {}), ("account-credential-change-required", {})):
                token = sign(port, {"event": event, "sub": sub, **extra})
                result = subprocess.run([own_bin(), "google", "risc", "ingest", "-", "--store", own.store], input=token, capture_output=True,
                                        text=True, timeout=60, env=own.env)
                assert result.returncode == 0, result.stdout + result.stderr
            refused = subprocess.run([own_bin(), "google", "risc", "ingest", "-", "--store", own.store], input="not-a-token", capture_output=True,
                                     text=True, timeout=60, env=own.env)
            assert refused.returncode == 1, refused.stdout + refused.stderr
        finally:
            google.terminate()
            google.wait()

        browser.get(own.url)
        signed_in_as(browser, own, "admin")
        try:
            page = go(browser, own, "security-events")
            assert errors_shown(browser) == []
            assert "3 events" in browser.find_element(By.ID, "events-count").text
            assert "sessions cannot come back" in page.text
            assert "Refused tokens (1)" in page.text and "not_a_token" in page.text, "the refused token is counted apart, not an event"
            assert page.text.index("Refused tokens (1)") > page.text.index("account-credential-change-required"), "refusals come after the events"
            shoot(browser, "security-events", (1440, 900))
            shoot(browser, "security-events", (390, 844))
            width = browser.execute_script("return document.documentElement.scrollWidth")
            assert width <= 391, f"the page scrolls sideways at 390 px: {width}"

            # The filter by event type.
            browser.get(f"{own.url}#/security-events?type=account-disabled")
            ready(browser, "security-events")
            assert "1 event," in browser.find_element(By.ID, "events-count").text

            # The user is a link to the user's page, which shows the flag the event set.
            browser.find_element(By.CSS_SELECTOR, "a.user-link").click()
            page = ready(browser, "users")
            assert "Google account disabled" in page.text, page.text

            # Undo the account-disabled event: the flag goes, with the reason in the audit log.
            page = go(browser, own, "security-events")
            undo = [b for b in browser.find_elements(By.CSS_SELECTOR, "button[data-undo]")]
            assert len(undo) == 2, "the flags of account-disabled and credential-change-required can be given back"
            # The latest first: an earlier event's flags are not given back over a later one's (the page says so).
            for event in ("google:2", "google:3", "google:2"):
                browser.find_element(By.CSS_SELECTOR, f"button[data-undo='{event}']").click()
                wait(browser).until(EC.presence_of_element_located((By.ID, "undo-reason"))).send_keys("SUP-9: confirmed with the user")
                browser.find_element(By.CSS_SELECTOR, '[data-confirm="yes"]').click()
                if event == "google:2" and browser.find_elements(By.CSS_SELECTOR, "button[data-undo='google:3']"):
                    wait(browser).until(lambda b: errors_shown(b))
                    assert "undo the later events first" in errors_shown(browser)[0]
                    browser.find_element(By.CSS_SELECTOR, "form.confirm button.secondary").click()
                    continue
                wait(browser).until(lambda b: not b.find_elements(By.CSS_SELECTOR, f"button[data-undo='{event}']"))
            assert browser.find_element(By.ID, "view").text.count("undone") == 2
            flags = subprocess.run([own_bin(), "users", "show", "--json", own_user(own, sub), "--store", own.store], capture_output=True, text=True,
                                   timeout=60, env=own.env).stdout
            assert "google_account_disabled" not in flags
        finally:
            log_out(browser)
            own.stop()


def own_bin():
    from conftest import BIN
    return BIN


def own_user(own, sub):
    return subprocess.run(["sqlite3", own.store, f"SELECT userId FROM account WHERE providerId = 'google' AND accountId = '{sub}'"],
                          capture_output=True, text=True, check=True).stdout.strip()
