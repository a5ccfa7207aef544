"""The provider settings edited in the console (Apple keys page): a refused value shows why and changes nothing, the
saved values show at once, and a viewer has no form. On a console of its own: the shared store's gates and health
depend on these settings."""
import tempfile

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from conftest import Console
from test_console import errors_shown, go, log_out, wait
from test_pages import shoot, signed_in_as


def test_an_admin_edits_the_provider_settings(browser, console):
    if console.engine != "sqlite":
        return  # one console of its own is enough; the routes' engines are covered by the Swift tests
    with tempfile.TemporaryDirectory(prefix="gatehouse-providers-") as directory:
        own = Console(directory, f"{directory}/providers.sqlite")
        own.start()
        browser.get(own.url)
        signed_in_as(browser, own, "admin")
        try:
            go(browser, own, "apple")
            wait(browser).until(EC.element_to_be_clickable((By.ID, "providers-edit"))).click()
            team = wait(browser).until(EC.presence_of_element_located((By.ID, "provider-team-id")))
            team.send_keys("not-a-team")
            browser.find_element(By.ID, "providers-save").click()
            wait(browser).until(lambda b: errors_shown(b))
            assert "Team ID" in errors_shown(browser)[0]
            team.clear()
            team.send_keys("TEAM123456")
            browser.find_element(By.ID, "provider-bundle-id").send_keys("com.example.app")
            browser.find_element(By.ID, "provider-google-web").send_keys("1234-web.apps.googleusercontent.com")
            shoot(browser, "provider-settings-form", (1440, 900))
            browser.find_element(By.ID, "providers-save").click()
            wait(browser).until(lambda b: "TEAM123456" in b.find_element(By.ID, "view").text and not b.find_elements(By.ID, "provider-team-id"))
            text = browser.find_element(By.ID, "view").text
            assert "com.example.app" in text and "1234-web.apps.googleusercontent.com" in text
            assert errors_shown(browser) == []
            shoot(browser, "provider-settings", (390, 844))
            width = browser.execute_script("return document.documentElement.scrollWidth")
            assert width <= 391, f"the page scrolls sideways at 390 px: {width}"
            audit = own.run("audit", "list", "--action", "providers.set").stdout
            assert "console:admin" in audit, audit
        finally:
            log_out(browser)
        signed_in_as(browser, own, "vera")
        try:
            go(browser, own, "apple")
            assert not browser.find_elements(By.ID, "providers-edit"), "a viewer has no form"
        finally:
            log_out(browser)
            own.stop()
