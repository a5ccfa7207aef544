"""Deleting a user from the user page in a real browser (admin): plan the deletion with a ticket, see the rows per
table and whether Apple tokens can be revoked, be refused when the typed email is not the user's, apply with
"do not revoke" and a reason (this build has no token revocation); the deleted user's page points to the deletion, the
Deletions page lists it with its undo deadline, and undoing it there with a reason brings the user back, so later runs
find the user again. Runs last of the browser files, on the same seeded store.
"""
import json

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from test_console import errors_shown, go, ready, viewport, wait
from test_pages import shoot, signed_in_as


def a_user(console):
    """A seeded user with an email."""
    found = json.loads(console.run("users", "search", "a", "--by", "email", "--limit", "20", "--json").stdout)
    return next(u for u in found["users"] if u["email"])


def type_into(browser, element_id, text):
    field = browser.find_element(By.ID, element_id)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", field)
    field.clear()
    field.send_keys(text)


def test_delete_a_user_from_the_user_page_and_undo(browser, console):
    user = a_user(console)
    signed_in_as(browser, console, "admin")
    browser.get(f"{console.url}#/users?id={user['id']}")
    ready(browser, "users")
    type_into(browser, "deletion-ticket", "SUP-7100")
    browser.find_element(By.ID, "deletion-plan").click()
    banner = wait(browser).until(EC.visibility_of_element_located((By.ID, "deletion-plan-id"))).text
    assert "dp_" in banner and "row(s)" in banner, banner
    rows = browser.find_element(By.ID, "deletion-plan-result").text
    assert "user" in rows and "account" in rows, rows
    assert "Apple tokens:" in browser.find_element(By.ID, "deletion-apple").text
    shoot(browser, "40-user-deletion-plan")

    # A wrong email is refused on the page; nothing is sent.
    type_into(browser, "deletion-confirm-email", "someone@else.example")
    browser.find_element(By.ID, "deletion-apply").click()
    assert "not this user's" in wait(browser).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#deletion-apply-result .banner"))).text

    type_into(browser, "deletion-confirm-email", user["email"])
    browser.find_element(By.ID, "deletion-no-revoke").click()
    type_into(browser, "deletion-reason", "browser test, SUP-7100")
    browser.find_element(By.ID, "deletion-apply").click()
    applied = wait(browser).until(EC.visibility_of_element_located((By.ID, "deletion-applied"))).text
    assert "applied" in applied and "SUP-7100" in applied and "not restorable" in applied, applied
    assert errors_shown(browser) == []
    shoot(browser, "41-user-deletion-applied")

    deletions = json.loads(console.run("users", "delete", "list", "--json").stdout)
    mine = next(d for d in deletions if d["userID"] == user["id"] and d["status"] == "applied")
    undo_on_the_deletions_page(browser, console, user, mine)


def undo_on_the_deletions_page(browser, console, user, mine):
    # The deleted user's page points to the deletion (reloaded: the browser is on that page already).
    browser.get(f"{console.url}#/users?id={user['id']}")
    browser.refresh()
    ready(browser, "users")
    gone = browser.find_element(By.ID, "user-gone").text
    assert f"deletion {mine['id']}" in gone and "SUP-7100" in gone and "can be undone; the deadline is in 30 d" in gone, gone
    assert errors_shown(browser) == [], "a deleted user is not an error"
    shoot(browser, "42-deleted-user", (1440, 900))

    # The Deletions page lists it, restorable, with its deadline.
    go(browser, console, "deletions")
    row = next(r for r in browser.find_elements(By.CSS_SELECTOR, "#view tbody tr") if r.find_element(By.CSS_SELECTOR, "a.deletion-link").text == str(mine["id"]))
    assert "RESTORABLE" in row.text and "SUP-7100" in row.text and "in 30 d" in row.text, row.text
    shoot(browser, "43-deletions", (1440, 900))
    shoot(browser, "43-deletions", (390, 844))

    # Its page: the purge state and the deadline; an undo needs a reason.
    browser.get(f"{console.url}#/users?id={user['id']}")
    ready(browser, "users")
    browser.find_element(By.ID, "user-gone-deletion").click()
    ready(browser, "deletions")
    detail = browser.find_element(By.ID, "deletion-detail").text
    assert "SUP-7100" in detail and "kept sealed until" in detail and mine["planID"] in detail, detail
    submit = browser.find_element(By.ID, "deletion-undo-submit")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", submit)
    submit.click()
    assert browser.execute_script("return document.getElementById('deletion-undo-reason').validity.valueMissing"), "a reason is required"
    assert browser.find_elements(By.ID, "deletion-undone") == []
    shoot(browser, "44-deletion-detail", (390, 844))
    viewport(browser, (1440, 900))
    browser.find_element(By.ID, "deletion-undo-reason").send_keys("browser test: deleted by mistake")
    browser.find_element(By.ID, "deletion-undo-submit").click()
    undone = wait(browser).until(EC.visibility_of_element_located((By.ID, "deletion-undone"))).text
    assert f"Deletion {mine['id']} undone" in undone and "restored" in undone, undone
    browser.find_element(By.ID, "deletion-undone-user").click()
    ready(browser, "users")
    assert user["id"] in wait(browser).until(EC.presence_of_element_located((By.ID, "user-detail"))).text
    assert errors_shown(browser) == []
    after = json.loads(console.run("users", "delete", "show", str(mine["id"]), "--json").stdout)
    assert after["status"] == "undone" and after["undoReason"] == "browser test: deleted by mistake", after
