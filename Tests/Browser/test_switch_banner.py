"""The linkSocial switch as a dangerous action: turning it ON is the red button, defaults to one hour and asks for a
confirmation (Cancel sends nothing); while it is ON every page shows a banner with the time left and a link to the
switch; turning it OFF is the neutral button and needs no confirmation. Leaves the switch OFF."""
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from test_console import NARROW, WIDE, errors_shown, go, viewport, wait
from test_pages import shoot, signed_in_as

PHONE = (390, 844)


def banner(browser):
    return browser.find_element(By.ID, "switch-banner")


def turn_off(browser):
    """Turns the switch OFF from the Policy page: the primary button, no confirmation."""
    submit = browser.find_element(By.ID, "switch-submit")
    assert "primary" in submit.get_attribute("class").split(), submit.get_attribute("class")
    browser.find_element(By.ID, "switch-reason").send_keys("browser test: done")
    submit.click()
    wait(browser).until(EC.text_to_be_present_in_element((By.ID, "switch-state"), "OFF"))
    wait(browser).until(lambda b: not banner(b).is_displayed())


def test_turning_the_switch_on_is_confirmed_and_every_page_says_so(browser, console):
    signed_in_as(browser, console, "admin")
    viewport(browser, WIDE)
    go(browser, console, "policy")
    if browser.find_element(By.ID, "switch-state").text == "ON":
        turn_off(browser)
    assert not banner(browser).is_displayed()

    submit = browser.find_element(By.ID, "switch-submit")
    assert "danger" in submit.get_attribute("class").split(), "ON is the dangerous action"
    assert Select(browser.find_element(By.ID, "switch-duration")).first_selected_option.get_attribute("value") == "1h"
    browser.find_element(By.ID, "switch-reason").send_keys("SUP-4600 relay user links Google")
    submit.click()
    question = wait(browser).until(EC.visibility_of_element_located((By.ID, "switch-confirm"))).text
    assert "ON for 1 hour?" in question, question
    assert browser.switch_to.active_element.get_attribute("data-confirm") == "yes", "the confirmation takes the focus"
    # Cancel sends nothing.
    browser.find_element(By.CSS_SELECTOR, "#switch-confirm button.secondary").click()
    assert browser.find_element(By.ID, "switch-confirm").text == ""
    assert browser.find_element(By.ID, "switch-state").text == "OFF"

    submit.click()
    wait(browser).until(EC.element_to_be_clickable((By.CSS_SELECTOR, '#switch-confirm [data-confirm="yes"]'))).click()
    wait(browser).until(EC.text_to_be_present_in_element((By.ID, "switch-state"), "ON"))
    wait(browser).until(lambda b: banner(b).is_displayed())
    assert errors_shown(browser) == []

    # Every page: the banner with the time left, and a link to turn it off.
    for route in ("overview", "users", "audit"):
        go(browser, console, route)
        wait(browser).until(lambda b: banner(b).is_displayed())
        text = banner(browser).text
        assert "Linking with different emails is ON" in text, text
        left = browser.find_element(By.ID, "switch-banner-left").text
        assert "turns OFF by itself in 59 min" in left or "in 1 h" in left, left
    shoot(browser, "46-switch-banner", (1440, 900))
    shoot(browser, "46-switch-banner", PHONE)
    viewport(browser, WIDE)

    browser.find_element(By.ID, "switch-banner-off").click()
    wait(browser).until(lambda b: b.execute_script("return document.activeElement && document.activeElement.id") == "switch-submit")
    shoot(browser, "46-switch-on-policy", (1440, 900))
    turn_off(browser)
    assert errors_shown(browser) == []
