"""Single sign-on in Chromium (issue 45): the login page's "Sign in with <provider>" link, the provider's own form
(Tests/Fixtures/oidc_provider.py, Authlib's provider side), and back to the console signed in with the role the
person's groups give; someone in none of the groups gets the page that says why; with password login off the form
offers only the provider. At 1440 and 390 px, screenshots in .build/screenshots/.
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from conftest import BIN, ROOT, SCREENSHOTS
from test_console import WIDE, ready, signed_in_name, tokens, viewport, wait

SECRET = "browser-sso-client-secret-9"
SIZES = ((1440, 900), (390, 844))


class Provider:
    """Tests/Fixtures/oidc_provider.py on a free loopback port."""

    def __init__(self, directory):
        self.out = pathlib.Path(directory) / "provider.out"
        with open(self.out, "w") as sink:
            self.process = subprocess.Popen([sys.executable, str(ROOT / "Tests/Fixtures/oidc_provider.py"), "--port", "0"],
                                            stdout=sink, stderr=subprocess.STDOUT, env=dict(os.environ, OIDC_CLIENT_SECRET=SECRET))
        self.issuer = None
        for _ in range(400):
            line = next((l for l in self.out.read_text().splitlines() if l.startswith("PORT ")), None)
            if line:
                self.issuer = f"http://127.0.0.1:{line.split()[1]}"
                break
            assert self.process.poll() is None, self.out.read_text()
            time.sleep(0.05)
        assert self.issuer, self.out.read_text()

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


class Served:
    """`gatehouse serve` over a fresh store with single sign-on set to the provider."""

    def __init__(self, directory, provider, password_login="on"):
        self.directory = pathlib.Path(directory)
        self.store = str(self.directory / f"sso-{password_login}.sqlite")
        self.env = dict(os.environ, GATEHOUSE_KEY_DIR=str(self.directory / "keys"))
        self.run("init")
        secret = self.directory / "sso.secret"
        secret.write_text(SECRET + "\n")
        self.run("sso", "set", "--issuer", provider.issuer, "--client-id", "gatehouse", "--client-secret-file", str(secret),
                 "--admin-group", "ops-admins", "--support-group", "ops-support", "--viewer-group", "staff",
                 "--password-login", password_login)
        out = self.directory / f"serve-{password_login}.out"
        with open(out, "w") as sink:
            self.process = subprocess.Popen([BIN, "serve", "--store", self.store, "--listen", "127.0.0.1:0", "-q"],
                                            stdout=sink, stderr=subprocess.STDOUT, env=self.env)
        self.url = None
        for _ in range(400):
            self.url = next((w for w in out.read_text().split() if w.startswith("http://127.0.0.1:")), None)
            if self.url:
                break
            time.sleep(0.05)
        assert self.url, out.read_text()

    def run(self, *args):
        result = subprocess.run([BIN, *args, "--store", self.store], capture_output=True, text=True, timeout=120, env=self.env)
        assert result.returncode == 0, result.stdout + result.stderr
        assert SECRET not in result.stdout + result.stderr
        return result

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def provider():
    with tempfile.TemporaryDirectory(prefix="gatehouse-oidc-") as directory:
        running = Provider(directory)
        try:
            yield running, directory
        finally:
            running.stop()


def fresh(browser, url):
    """The console's login page, signed out."""
    browser.get(url)
    browser.execute_script("sessionStorage.clear()")
    browser.get(url)


def through_provider(browser, user):
    """Clicks the console's sign-in link and signs in on the provider's form as `user`."""
    link = wait(browser).until(EC.element_to_be_clickable((By.ID, "sso-signin")))
    link.click()
    field = wait(browser).until(EC.visibility_of_element_located((By.ID, "idp-username")))
    field.send_keys(user)
    browser.find_element(By.ID, "idp-password").send_keys(user + "-password")
    return field


def no_sideways_scroll(browser, width):
    assert browser.execute_script("return document.documentElement.scrollWidth") <= width, "no sideways scroll"


def test_sign_in_through_the_provider_at_both_widths(browser, provider):
    running, directory = provider
    served = Served(directory, running)
    try:
        for width, height in SIZES:
            viewport(browser, (width, height))
            fresh(browser, served.url)
            link = wait(browser).until(EC.visibility_of_element_located((By.ID, "sso-signin")))
            assert link.text == "Sign in with 127.0.0.1"
            assert browser.find_element(By.ID, "username").is_displayed(), "password login stays on"
            no_sideways_scroll(browser, width)
            browser.save_screenshot(str(SCREENSHOTS / f"sso-login-{width}x{height}.png"))
            through_provider(browser, "alice")
            browser.save_screenshot(str(SCREENSHOTS / f"sso-provider-form-{width}x{height}.png"))
            browser.find_element(By.ID, "idp-submit").click()
            ready(browser, "overview")
            assert "#sso=" not in browser.current_url, "the ticket leaves the address bar"
            assert tokens(browser)["username"] == "alice@example.com"
            assert tokens(browser)["role"] == "admin"
            wait(browser).until(lambda b: signed_in_name(b) == "alice@example.com (admin)")
            no_sideways_scroll(browser, width)
            browser.save_screenshot(str(SCREENSHOTS / f"sso-signed-in-{width}x{height}.png"))
            # Account security asks an SSO admin for no password: their recent sign-in stands in for it.
            browser.get(served.url + "#/security")
            page = ready(browser, "security")
            assert not browser.find_elements(By.ID, "totp-password")
            assert "signed in with single sign-on" in page.text
            assert "your single sign-on alone signs you in" in page.text
            browser.save_screenshot(str(SCREENSHOTS / f"sso-security-{width}x{height}.png"))
            # Someone in none of the groups: the page says why, and nobody is made.
            fresh(browser, served.url)
            through_provider(browser, "mallory")
            browser.find_element(By.ID, "idp-submit").click()
            message = wait(browser).until(EC.visibility_of_element_located((By.ID, "sso-refusal-message")))
            assert "none of the groups" in message.text
            assert browser.find_element(By.ID, "sso-refusal-code").text == "no_matching_group"
            no_sideways_scroll(browser, width)
            browser.save_screenshot(str(SCREENSHOTS / f"sso-refused-{width}x{height}.png"))
        listed = json.loads(served.run("admins", "list", "--json").stdout)
        assert [a["username"] for a in listed if a["source"] == "sso"] == ["alice@example.com"]
    finally:
        served.stop()
        viewport(browser, WIDE)


def test_with_password_login_off_the_form_offers_only_the_provider(browser, provider):
    running, directory = provider
    served = Served(directory, running, password_login="off")
    try:
        for width, height in SIZES:
            viewport(browser, (width, height))
            fresh(browser, served.url)
            wait(browser).until(EC.visibility_of_element_located((By.ID, "sso-signin")))
            assert not browser.find_element(By.ID, "username").is_displayed()
            assert not browser.find_element(By.ID, "password").is_displayed()
            no_sideways_scroll(browser, width)
            browser.save_screenshot(str(SCREENSHOTS / f"sso-only-{width}x{height}.png"))
        through_provider(browser, "sam")
        browser.find_element(By.ID, "idp-submit").click()
        ready(browser, "overview")
        assert tokens(browser)["role"] == "support"
        # The API refuses a password too, not only the form.
        request = urllib.request.Request(served.url + "api/auth/login", method="POST", headers={"Content-Type": "application/json"},
                                         data=json.dumps({"username": "admin", "password": "whatever-password"}).encode())
        try:
            urllib.request.urlopen(request, timeout=10)
            assert False, "a password login was accepted"
        except urllib.error.HTTPError as error:
            assert error.code == 403
            assert json.load(error)["error"]["code"] == "password_login_disabled"
    finally:
        served.stop()
        viewport(browser, WIDE)
