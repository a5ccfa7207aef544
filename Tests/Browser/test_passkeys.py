"""Passkeys in the console (issue 44), with Chromium's virtual authenticator on the other side (CTAP2, internal
transport, user verification on): enrol a passkey on Account security, log out, log in with password then passkey,
and confirm an irreversible change in the step-up dialog with it. The console is opened as http://localhost:PORT: a
browser refuses WebAuthn on an IP-address origin. Screenshots at 1440 and 390 px go to .build/screenshots/.
"""
import tempfile
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import VirtualAuthenticatorOptions
from selenium.webdriver.support import expected_conditions as EC

from conftest import PASSWORD
from test_console import WIDE, log_in, log_out, ready, viewport, wait
from test_mfa import serve, shoot_both


def authenticator(browser):
    options = VirtualAuthenticatorOptions(protocol=VirtualAuthenticatorOptions.Protocol.CTAP2,
                                          transport=VirtualAuthenticatorOptions.Transport.INTERNAL,
                                          has_resident_key=True, has_user_verification=True, is_user_verified=True)
    browser.add_virtual_authenticator(options)


def test_enrol_a_passkey_log_in_with_it_and_step_up_with_it(browser):
    with tempfile.TemporaryDirectory(prefix="gatehouse-browser-") as directory:
        server, address = serve(directory)
        url = address.replace("http://127.0.0.1:", "http://localhost:")
        authenticator(browser)
        try:
            browser.get(url)
            browser.execute_script("sessionStorage.clear()")
            browser.get(f"{url}#/security")
            log_in(browser, "admin", PASSWORD)
            ready(browser, "security")
            browser.find_element(By.ID, "passkey-name").clear()
            browser.find_element(By.ID, "passkey-name").send_keys("Laptop")
            browser.find_element(By.ID, "passkey-password").send_keys(PASSWORD)
            browser.find_element(By.ID, "passkey-add").click()
            codes = wait(browser).until(EC.visibility_of_element_located((By.ID, "recovery-codes"))).find_elements(By.CSS_SELECTOR, "li code")
            assert len(codes) == 10
            browser.find_element(By.ID, "recovery-done").click()
            ready(browser, "security")
            table = browser.find_element(By.CSS_SELECTOR, '[data-page="security"] [aria-label="Your second factors"] table').text
            assert "Laptop" in table and "Passkey" in table
            assert len(browser.get_credentials()) == 1
            shoot_both(browser, "security-passkey")

            log_out(browser)
            log_in(browser, "admin", PASSWORD)
            passkey = wait(browser).until(EC.element_to_be_clickable((By.ID, "login-mfa-passkey")))
            shoot_both(browser, "login-passkey")
            passkey.click()
            ready(browser, "security")
            assert browser.execute_script("return sessionStorage.getItem('gatehouse.tokens')") is not None
            first_count = browser.get_credentials()[0].sign_count

            time.sleep(2.5)
            browser.find_element(By.ID, "recovery-new").click()
            wait(browser).until(EC.element_to_be_clickable((By.CSS_SELECTOR, '[data-page="security"] [data-confirm="yes"]'))).click()
            wait(browser).until(EC.element_to_be_clickable((By.ID, "step-up-passkey"))).click()
            fresh = wait(browser).until(EC.visibility_of_element_located((By.ID, "recovery-codes"))).find_elements(By.CSS_SELECTOR, "li code")
            assert len(fresh) == 10
            assert browser.get_credentials()[0].sign_count > first_count, "each use counts up"
        finally:
            browser.remove_all_credentials()
            browser.remove_virtual_authenticator()
            server.terminate()
            server.wait(timeout=10)
            viewport(browser, WIDE)
