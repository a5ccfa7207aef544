"""Deleting a user from the user page in a real browser (admin): plan the deletion with a ticket, see the rows per
table and whether Apple tokens can be revoked, be refused when the typed email is not the user's, apply with
"do not revoke" and a reason (this build has no token revocation), then undo from the CLI so later runs find the
user again. Runs last of the browser files, on the same seeded store.
"""
import json

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from test_console import errors_shown, ready, wait
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
    console.run("users", "delete", "undo", str(mine["id"]), "--reason", "browser test cleanup")
    browser.get(f"{console.url}#/users?id={user['id']}")
    ready(browser, "users")
    assert user["id"] in browser.find_element(By.ID, "user-detail").text
