"""The Apple events page: notifications as recorded, read-only, rendered as text (a hostile value stays text)."""
import json
import subprocess
import sys
import time
import urllib.request

from selenium.webdriver.common.by import By

from conftest import ROOT
from test_console import errors_shown, go, log_out, wait
from test_pages import signed_in_as

HOSTILE = '<img src=x id=pwned onerror="document.title=1">'


def start_apple_server():
    process = subprocess.Popen([sys.executable, str(ROOT / "Tests/Fixtures/apple_server.py"), "--port", "0"],
                               stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    assert line.startswith("PORT "), line
    return process, int(line.split()[1])


def sign(port, claims):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/test/sign", data=json.dumps({"claims": claims}).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)["token"]


def test_apple_events_lists_notifications_as_text(browser, console, tmp_path):
    process, port = start_apple_server()
    try:
        console.run("providers", "set", "apple", "--services-id", "com.example.web", "--bundle-id", "com.example.app")
        now = int(time.time())
        events = json.dumps({"type": "consent-revoked", "sub": "000111.nobody", "event_time": now * 1000})
        for jti, aud in (("ok-1", "com.example.web"), ("bad-1", HOSTILE)):
            token = sign(port, {"iss": "https://appleid.apple.com", "aud": aud, "iat": now, "exp": now + 300, "jti": jti, "events": events})
            body = tmp_path / f"{jti}.json"
            body.write_text(json.dumps({"payload": token}))
            result = subprocess.run([console_bin(), "apple", "notifications", "ingest", str(body), "--store", console.store],
                                    capture_output=True, text=True, timeout=60,
                                    env=dict(console.env, GATEHOUSE_APPLE_BASE_URL=f"http://127.0.0.1:{port}"))
            assert result.returncode == (0 if jti == "ok-1" else 1), result.stdout + result.stderr
    finally:
        process.terminate()
        process.wait()

    browser.get(console.url)  # this console's origin first: signed_in_as reads the tokens of the page it is on
    signed_in_as(browser, console, "vera")
    try:
        page = go(browser, console, "apple-events")
        assert errors_shown(browser) == []
        text = page.text
        assert "unknown sub" in text and "000111.nobody" in text, text
        assert "refused" in text and HOSTILE in text, "the hostile aud is shown as text"
        assert browser.find_elements(By.ID, "pwned") == [], "no element made from a notification's value"
        assert not page.find_elements(By.CSS_SELECTOR, "button:not(.copy-button), form, input"), "read-only (Copy buttons aside)"
    finally:
        # The browser is shared by every test of the engine: leave it signed out, as the login tests expect it.
        log_out(browser)


def console_bin():
    from conftest import BIN
    return BIN
