"""The Apple transfer page: the empty state's setup steps, then a transfer 50 days in (10 days left), collected and
exchanged against the local Apple stand-in, with a straggler: the countdown, the stages, the counts, the refused
account and the straggler's "Plan merge" link. The transfer runs on a console of its own, so the shared store's
other pages are not changed."""
import json
import subprocess
import sys
import tempfile
import urllib.request
from datetime import datetime, timedelta, timezone

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from conftest import BIN, ROOT, Console
from test_console import errors_shown, go, log_out, ready, wait
from test_pages import shoot, signed_in_as


def test_the_empty_state_says_how_to_start(browser, console):
    browser.get(console.url)
    signed_in_as(browser, console, "vera")
    try:
        page = go(browser, console, "apple-transfer")
        assert errors_shown(browser) == []
        assert "No transfer recorded" in page.text
        assert "gatehouse apple transfer start --to-team TEAMID" in page.text
        assert "ops/runbooks/apple-transfer.md" in page.text
    finally:
        log_out(browser)


def openssl_key(directory, kid):
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", f"AuthKey_{kid}.p8"],
                   cwd=directory, check=True, capture_output=True, timeout=30)
    return f"{directory}/AuthKey_{kid}.p8"


def test_a_transfer_shows_its_countdown_stages_failures_and_stragglers(browser, console):
    if console.engine != "sqlite":
        return  # one console of its own is enough; the API's engines are covered by the Swift tests
    with tempfile.TemporaryDirectory(prefix="gatehouse-transfer-") as directory:
        own = Console(directory, f"{directory}/transfer.sqlite")
        own.start()
        send, receive = openssl_key(directory, "SENDKEY001"), openssl_key(directory, "RECVKEY001")
        apple = subprocess.Popen([sys.executable, str(ROOT / "Tests/Fixtures/apple_server.py"), "--port", "0", "--keys-dir", directory],
                                 stdout=subprocess.PIPE, text=True)
        try:
            port = int(apple.stdout.readline().split()[1])
            base = f"http://127.0.0.1:{port}"
            own.env["GATEHOUSE_APPLE_BASE_URL"] = base
            own.run("providers", "set", "apple", "--team-id", "SENDTEAM01", "--bundle-id", "com.example.app")
            own.run("apple", "key", "import", send, "--team-id", "SENDTEAM01")
            own.run("apple", "key", "activate", "SENDKEY001")
            own.run("apple", "key", "import", receive, "--team-id", "RECVTEAM01")
            fifty_days_ago = (datetime.now(timezone.utc) - timedelta(days=50)).strftime("%Y-%m-%dT%H:%M:%SZ")
            own.run("apple", "transfer", "start", "--to-team", "RECVTEAM01", "--transferred-at", fifty_days_ago)
            # One person revoked the app at Apple; another signed in during the window (Better Auth made a new user).
            rows = subprocess.run(["sqlite3", own.store, "SELECT accountId, userId FROM account WHERE providerId = 'apple' "
                                   f"AND createdAt < '{fifty_days_ago}' ORDER BY id LIMIT 2"],
                                  capture_output=True, text=True, check=True).stdout.split()
            (revoked, _), (straggling, old_user) = (r.split("|") for r in rows)
            post(f"{base}/test/config", {"revoked": [revoked]})
            own.run("apple", "transfer", "collect")
            own.run("apple", "transfer", "exchange")
            with urllib.request.urlopen(f"{base}/test/identity?sub={straggling}&from=SENDTEAM01&to=RECVTEAM01", timeout=10) as answer:
                identity = json.load(answer)
            now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
            subprocess.run(["sqlite3", own.store,
                            f"INSERT INTO user (id, name, email, emailVerified, createdAt, updatedAt) VALUES ('straggler1', 'New', '{identity['email']}', 1, '{now}', '{now}');"
                            f"INSERT INTO account (id, issuer, accountId, providerId, userId, createdAt, updatedAt) VALUES ('stragacc1', 'https://appleid.apple.com', '{identity['sub']}', 'apple', 'straggler1', '{now}', '{now}');"],
                           check=True, timeout=30)
            own.run("apple", "transfer", "plan")
        finally:
            apple.terminate()
            apple.wait()

        browser.get(own.url)
        signed_in_as(browser, own, "vera")
        try:
            page = go(browser, own, "apple-transfer")
            assert errors_shown(browser) == []
            countdown = browser.find_element(By.ID, "transfer-countdown")
            assert "9 days left" in countdown.text or "10 days left" in countdown.text, countdown.text
            assert "status-warning" in countdown.get_attribute("class")
            assert " d." not in countdown.text and "Z." in countdown.text, f"the deadline as a date, not a second count of days: {countdown.text}"
            current = browser.find_element(By.CSS_SELECTOR, "#transfer-stages li[aria-current=step]")
            assert current.text.startswith("Apply"), current.text
            assert "SENDTEAM01 → RECVTEAM01" in page.text
            assert "invalid_request" in page.text, "the refused account is listed"
            counts = browser.find_element(By.XPATH, "//table[caption[normalize-space()='Transfer counts']]")
            accounts, collected, exchanged, applied, failed = (int(td.text) for td in counts.find_elements(By.CSS_SELECTOR, "tbody td"))
            assert (failed, collected, exchanged, applied) == (1, accounts - 1, accounts - 1, 0), (accounts, collected, exchanged, applied, failed)
            link = browser.find_element(By.CSS_SELECTOR, "a.plan-merge")
            assert f"#/merges?from=straggler1&into={old_user}&sameProvider=source" in link.get_attribute("href"), link.get_attribute("href")
            assert not page.find_elements(By.CSS_SELECTOR, "button:not(#logout), input"), "read-only"
            shoot(browser, "apple-transfer", (1440, 900))
            shoot(browser, "apple-transfer", (390, 844))
            width = browser.execute_script("return document.documentElement.scrollWidth")
            assert width <= 391, f"the page scrolls sideways at 390 px: {width}"
            # The link plans the straggler's merge (for an admin with the support role) with the decision the plan
            # names: U2's Apple account is kept.
            href = browser.find_element(By.CSS_SELECTOR, "a.plan-merge").get_attribute("href")
            signed_in_as(browser, own, "admin")
            browser.get(href)
            ready(browser, "merges")
            chosen = wait(browser).until(EC.presence_of_element_located((By.ID, "merge-sameProvider-source")))
            assert chosen.is_selected(), "the link's decision is taken"
            assert errors_shown(browser) == []
        finally:
            log_out(browser)
            own.stop()


def post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.read()
