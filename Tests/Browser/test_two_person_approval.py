"""Two-person approval with two admins in two browsers: with `policy.set` requiring approval, admin turns the linkSocial
switch ON on the Policy page and is told it waits for a second admin (nothing changes; the header counts it); admin's
own request offers no Approve; ada, in her own browser, finds it from the header, sees the value now and after, and
approves it; the switch is then ON for both. A second request is denied with a reason. Leaves approvals off and the
switch OFF."""
import json

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from conftest import PASSWORD
from test_console import WIDE, errors_shown, go, log_in, ready, signed_in_name, viewport, wait
from test_pages import shoot, signed_in_as

PHONE = (390, 844)


def ensure_admin(console, name):
    admins = json.loads(console.run("admins", "list", "--json").stdout)
    if not any(a["username"] == name for a in admins):
        console.run("admins", "add", name, "--role", "admin", "--password-file", str(console.directory / "admin.pw"))


def sign_in_other(other, console, name):
    other.get(console.url)
    if name not in signed_in_name(other):
        log_in(other, name, PASSWORD)
        wait(other).until(lambda b: name in signed_in_name(b))


def ask_for_the_switch(browser, reason):
    submit = browser.find_element(By.ID, "switch-submit")
    browser.find_element(By.ID, "switch-reason").send_keys(reason)
    submit.click()
    wait(browser).until(EC.element_to_be_clickable((By.CSS_SELECTOR, '#switch-confirm [data-confirm="yes"]'))).click()
    return wait(browser).until(EC.visibility_of_element_located((By.CSS_SELECTOR, ".approval-pending")))


def test_two_admins_in_two_browsers(browser, second_browser, console):
    other = second_browser
    ensure_admin(console, "ada")
    waiting = len(json.loads(console.run("approvals", "list", "--json").stdout))
    # Earlier tests may leave the switch ON (test_console ends with it ON when run alone).
    console.run("policy", "set", "linkSocial.allowDifferentEmails", "false", "--reason", "browser test: approvals start")
    console.run("approvals", "require", "policy.set")
    try:
        signed_in_as(browser, console, "admin")
        viewport(browser, WIDE)
        go(browser, console, "policy")
        assert browser.find_element(By.ID, "switch-state").text == "OFF"
        pending = ask_for_the_switch(browser, "SUP-4700 relay user links Google")
        assert "Sent for approval" in pending.text and "needs a second admin's approval" in pending.text, pending.text
        assert browser.find_element(By.ID, "switch-state").text == "OFF", "held: nothing changed"
        badge = wait(browser).until(EC.visibility_of_element_located((By.ID, "approvals-count")))
        assert badge.text == str(waiting + 1), (badge.text, waiting)
        assert errors_shown(browser) == []
        shoot(browser, "70-approval-requested", (1440, 900))

        # Their own request: no Approve, a way to withdraw it.
        pending.find_element(By.CSS_SELECTOR, "a.approval-link").click()
        ready(browser, "approvals")
        assert browser.find_elements(By.ID, "approval-approve") == []
        assert "another admin must approve it" in browser.find_element(By.ID, "approval-own").text

        # Ada, in her own browser: from the header to the request, its value now and after, approved.
        sign_in_other(other, console, "ada")
        viewport(other, WIDE)
        link = wait(other).until(EC.visibility_of_element_located((By.ID, "approvals-badge")))
        assert str(waiting + 1) in link.text, link.text
        link.click()
        ready(other, "approvals")
        # The newest request comes first.
        other.find_element(By.CSS_SELECTOR, "#view a.approval-link").click()
        ready(other, "approvals")
        what = other.find_element(By.ID, "approval-what").text
        assert "linkSocial.allowDifferentEmails" in what and "false" in what and "true" in what and "SUP-4700" in what, what
        assert "admin" in other.find_element(By.ID, "approval-requester").text
        shoot(other, "71-approval-review", (1440, 900))
        shoot(other, "71-approval-review", PHONE)
        viewport(other, WIDE)
        approve = other.find_element(By.ID, "approval-approve")
        other.execute_script("arguments[0].scrollIntoView({block: 'center'})", approve)
        approve.click()
        wait(other).until(EC.element_to_be_clickable((By.CSS_SELECTOR, '#approval-approve-confirm [data-confirm="yes"]'))).click()
        done = wait(other).until(EC.visibility_of_element_located((By.ID, "approval-approved"))).text
        assert "approved: it ran as admin asked" in done, done
        assert errors_shown(other) == []

        # The first admin sees the switch ON.
        go(browser, console, "policy")
        wait(browser).until(EC.text_to_be_present_in_element((By.ID, "switch-state"), "ON"))
        audit = console.run("audit", "list", "--action", "policy.*").stdout
        assert "console:admin, approved by console:ada" in audit, audit

        # A second request (turning it OFF), denied by ada with a reason.
        browser.find_element(By.ID, "switch-reason").send_keys("browser test: done")
        browser.find_element(By.ID, "switch-submit").click()
        pending = wait(browser).until(EC.visibility_of_element_located((By.CSS_SELECTOR, ".approval-pending")))
        request_id = pending.find_element(By.CSS_SELECTOR, "a.approval-link").get_attribute("href").rsplit("=", 1)[1]
        other.get(f"{console.url}#/approvals?id={request_id}")
        other.refresh()
        ready(other, "approvals")
        other.find_element(By.ID, "approval-deny-reason").send_keys("keep it on until the ticket closes")
        other.find_element(By.ID, "approval-deny").click()
        denied = wait(other).until(EC.visibility_of_element_located((By.ID, "approval-denied"))).text
        assert "denied: keep it on until the ticket closes" in denied, denied
        go(other, console, "approvals")
        decided = other.find_element(By.ID, "view").text
        assert "DENIED" in decided and "APPROVED" in decided, decided
        shoot(other, "72-approvals", (1440, 900))
        shoot(other, "72-approvals", PHONE)
    finally:
        console.run("approvals", "require", "none")
        console.run("policy", "set", "linkSocial.allowDifferentEmails", "false", "--reason", "browser test: approvals done")
