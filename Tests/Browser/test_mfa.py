"""A second factor in the console (issue 44), driven as an admin meets it in Chromium: enrol an authenticator app on
Account security (its QR code decodes to the otpauth URI shown as text; the code comes from pyotp, the other side of
RFC 6238), keep the recovery codes, log out, log in with password then code, and confirm an irreversible change in the
step-up dialog with a recovery code. A store of its own, so the shared console's admin keeps no factor. Screenshots at
1440 and 390 px go to .build/screenshots/.
"""
import pathlib
import subprocess
import tempfile
import time

import pyotp
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from conftest import BIN, PASSWORD, SCREENSHOTS
from test_console import WIDE, log_in, log_out, ready, viewport, wait

SIZES = ((1440, 900), (390, 844))


def shoot_both(browser, name):
    for width, height in SIZES:
        viewport(browser, (width, height))
        time.sleep(0.2)
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width, f"{name}: no sideways scroll at {width} px"
        browser.save_screenshot(str(SCREENSHOTS / f"{name}-{width}x{height}.png"))
    viewport(browser, WIDE)


def serve(directory):
    store = str(pathlib.Path(directory) / "mfa.sqlite")
    password_file = pathlib.Path(directory) / "admin.pw"
    password_file.write_text(PASSWORD + "\n")
    subprocess.run([BIN, "init", "--store", store, "--admin-password-file", str(password_file)], check=True, capture_output=True, timeout=60)
    out = pathlib.Path(directory) / "serve.out"
    with open(out, "w") as sink:
        # A short step-up window, so the test can outlive the login's own factor check.
        server = subprocess.Popen([BIN, "serve", "--store", store, "--listen", "127.0.0.1:0", "--step-up-window", "2s", "-q"],
                                  stdout=sink, stderr=subprocess.STDOUT)
    for _ in range(200):
        url = next((w for w in out.read_text().split() if w.startswith("http://127.0.0.1:")), None)
        if url:
            return server, url
        time.sleep(0.05)
    server.terminate()
    raise AssertionError(out.read_text())


def test_enrol_an_app_log_in_with_it_and_step_up_with_a_recovery_code(browser):
    with tempfile.TemporaryDirectory(prefix="gatehouse-browser-") as directory:
        server, url = serve(directory)
        try:
            browser.get(url)
            browser.execute_script("sessionStorage.clear()")
            browser.get(url)
            log_in(browser, "admin", PASSWORD)
            ready(browser, "overview")

            browser.get(f"{url}#/security")
            ready(browser, "security")
            shoot_both(browser, "security-none")
            # Opened by IP address, where browsers refuse passkeys: the page links to the same page on localhost.
            assert browser.find_element(By.CSS_SELECTOR, "#passkey-by-name a").get_attribute("href").startswith(url.replace("127.0.0.1", "localhost"))
            browser.find_element(By.ID, "totp-password").send_keys(PASSWORD)
            browser.find_element(By.ID, "totp-start").click()
            secret = wait(browser).until(EC.visibility_of_element_located((By.ID, "totp-secret"))).text
            qr = browser.find_element(By.CSS_SELECTOR, "#totp-enrol svg.qr")
            assert qr.get_attribute("role") == "img" and secret not in (qr.get_attribute("aria-label") or "")
            shoot_both(browser, "security-totp-qr")
            totp = pyotp.TOTP(secret)
            browser.find_element(By.ID, "totp-code").send_keys(totp.now())
            browser.find_element(By.ID, "totp-confirm").click()
            codes = [e.text for e in wait(browser).until(EC.visibility_of_element_located((By.ID, "recovery-codes"))).find_elements(By.CSS_SELECTOR, "li code")]
            assert len(codes) == 10 and len(set(codes)) == 10
            shoot_both(browser, "security-recovery-codes")
            browser.find_element(By.ID, "recovery-done").click()
            # The page renders again on the hash change: wait for the new one, whose list has the factor.
            factors = wait(browser).until(EC.presence_of_element_located(
                (By.CSS_SELECTOR, '[data-page="security"][data-ready="true"] [aria-label="Your second factors"] table')))
            assert "Authenticator app" in factors.text
            assert secret not in browser.page_source, "the secret is forgotten once the factor is confirmed"

            # Log out, then in again: the password alone is not enough.
            log_out(browser)
            log_in(browser, "admin", PASSWORD)
            code = wait(browser).until(EC.visibility_of_element_located((By.ID, "login-mfa-totp")))
            assert browser.execute_script("return sessionStorage.getItem('gatehouse.tokens')") is None, "no token before the factor"
            shoot_both(browser, "login-second-factor")
            code.send_keys("000000" if totp.now() != "000000" else "111111")
            browser.find_element(By.CSS_SELECTOR, "#login-second-step form.factor-code button[type=submit]").click()
            refusal = wait(browser).until(EC.visibility_of_element_located((By.ID, "login-mfa-status")))
            assert "not right" in refusal.text
            # The next time step: the enrolment's code was used once and is refused again.
            browser.find_element(By.ID, "login-mfa-totp").send_keys(totp.at(time.time() + 30))
            browser.find_element(By.CSS_SELECTOR, "#login-second-step form.factor-code button[type=submit]").click()
            # Signed in, back on the page the login interrupted.
            ready(browser, "security")
            assert browser.execute_script("return sessionStorage.getItem('gatehouse.tokens')") is not None

            # An irreversible change after the step-up window: the dialog asks, a recovery code answers, the change goes.
            time.sleep(2.5)
            browser.get(f"{url}#/security")
            ready(browser, "security")
            browser.find_element(By.ID, "recovery-new").click()
            wait(browser).until(EC.element_to_be_clickable((By.CSS_SELECTOR, '[data-page="security"] [data-confirm="yes"]'))).click()
            dialog = wait(browser).until(EC.visibility_of_element_located((By.ID, "step-up")))
            shoot_both(browser, "step-up-dialog")
            dialog.find_element(By.CSS_SELECTOR, "details.recovery summary").click()
            browser.find_element(By.ID, "step-up-recovery").send_keys(codes[0])
            browser.find_element(By.CSS_SELECTOR, "#step-up details.recovery button[type=submit]").click()
            fresh = [e.text for e in wait(browser).until(EC.visibility_of_element_located((By.ID, "recovery-codes"))).find_elements(By.CSS_SELECTOR, "li code")]
            assert len(fresh) == 10 and not set(fresh) & set(codes), "new codes, none of the old"
            assert not browser.find_elements(By.ID, "step-up"), "the dialog is gone"
        except Exception:
            browser.save_screenshot(str(SCREENSHOTS / "mfa-failure.png"))
            raise
        finally:
            server.terminate()
            server.wait(timeout=10)
            viewport(browser, WIDE)
