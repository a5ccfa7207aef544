"""The Admins card of the Account security page: an admin sees every console admin (role, source, factors, last
login), disables one (their sessions end; confirmed first), enables them again and removes a throwaway admin; their own
row offers nothing; a viewer has no card. With `admins` requiring approval, a disable is sent for approval instead."""
import json
import secrets

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from test_console import WIDE, errors_shown, go, viewport, wait
from test_pages import shoot, signed_in_as


def row(browser, name):
    """The admin's row, or None while the page redraws."""
    try:
        return next((r for r in browser.find_elements(By.CSS_SELECTOR, "#admins-table tbody tr")
                     if r.find_element(By.CSS_SELECTOR, ".admin-name").text == name), None)
    except StaleElementReferenceException:
        return None


def row_text(browser, name):
    found = row(browser, name)
    try:
        return found.text if found else ""
    except StaleElementReferenceException:
        return ""


def act(browser, name, verb):
    browser.find_element(By.CSS_SELECTOR, f'#admins-table button[data-admin="{name}"][data-verb="{verb}"]').click()
    wait(browser).until(EC.element_to_be_clickable((By.CSS_SELECTOR, '#admins-table [data-confirm="yes"]'))).click()


def admin_state(console, name):
    return next((a for a in json.loads(console.run("admins", "list", "--json").stdout) if a["username"] == name), None)


def test_disable_enable_and_remove_an_admin(browser, console):
    name = "temp-" + secrets.token_hex(3)
    console.run("admins", "add", name, "--role", "support", "--password-file", str(console.directory / "admin.pw"))
    signed_in_as(browser, console, "admin")
    viewport(browser, WIDE)
    go(browser, console, "security")
    own = row(browser, "admin")
    assert own.find_elements(By.CSS_SELECTOR, "button") == [] and "you" in own.text
    assert "support" in row_text(browser, name) and "ENABLED" in row_text(browser, name)

    act(browser, name, "disable")
    wait(browser).until(lambda b: "DISABLED" in row_text(b, name))
    assert admin_state(console, name)["disabled"] is True
    shoot(browser, "73-admins-card", (1440, 900))
    shoot(browser, "73-admins-card", (390, 844))
    viewport(browser, WIDE)
    act(browser, name, "enable")
    wait(browser).until(lambda b: "ENABLED" in row_text(b, name))

    # With approvals required for admins, a disable waits for a second admin.
    console.run("approvals", "require", "admins")
    try:
        act(browser, name, "disable")
        pending = wait(browser).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#admins-table .approval-pending")))
        assert "Sent for approval" in pending.text, pending.text
        assert admin_state(console, name)["disabled"] is False
    finally:
        console.run("approvals", "require", "none")
        # Nothing left waiting for later tests' counts.
        for request in json.loads(console.run("approvals", "list", "--json").stdout):
            console.run("approvals", "deny", str(request["id"]), "--reason", "browser test: done")

    go(browser, console, "security")
    act(browser, name, "remove")
    wait(browser).until(lambda b: b.find_elements(By.ID, "admins-table") and row(b, "admin") and row(b, name) is None)
    assert admin_state(console, name) is None
    assert errors_shown(browser) == []

    signed_in_as(browser, console, "vera")
    go(browser, console, "security")
    assert browser.find_elements(By.ID, "admins-table") == []
    signed_in_as(browser, console, "admin")
