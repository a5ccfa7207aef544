"""A user's timeline on the user page: the user's creation, linked accounts, sessions, merges naming them, deletions
and audit entries, newest first, at 1440 px and 390 px."""
import json

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from test_console import errors_shown, ready, viewport, wait
from test_pages import shoot, signed_in_as


def test_the_user_page_has_a_timeline_newest_first(browser, console):
    signed_in_as(browser, console, "admin")
    merges = json.loads(console.run("merge", "list", "--json").stdout)
    if merges:
        user_id = merges[0]["target"]
    else:
        found = json.loads(console.run("users", "search", "a", "--by", "email", "--limit", "5", "--json").stdout)["users"]
        user_id = found[0]["id"]
    for size in ((1440, 900), (390, 844)):
        viewport(browser, size)
        browser.get(f"{console.url}#/users?id={user_id}")
        browser.refresh()
        ready(browser, "users")
        timeline = wait(browser).until(EC.presence_of_element_located((By.ID, "user-timeline")))
        items = timeline.find_elements(By.TAG_NAME, "li")
        kinds = [i.get_attribute("data-kind") for i in items]
        assert "user" in kinds and "account" in kinds, kinds
        stamps = [i.find_element(By.TAG_NAME, "time").get_attribute("datetime") for i in items]
        assert stamps == sorted(stamps, reverse=True), "newest first"
        assert "User created" in timeline.text
        if merges:
            assert f"Merge {merges[0]['id']}" in timeline.text, timeline.text
        assert errors_shown(browser) == []
        browser.execute_script("document.getElementById('user-timeline').scrollIntoView()")
        shoot(browser, "55-user-timeline", size)
