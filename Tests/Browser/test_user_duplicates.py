"""The user page's "Likely duplicates" card: each side of a split identity links to the other, with the score, the
reasons and a "Plan merge" link that opens the merge planned (the later user into the earlier one); a user with no
twin says so; a viewer sees the twins without the merge link. At 1440 px and 390 px."""
import json
import urllib.parse

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from a11y import color_scheme, contrast_failures, small_targets, stray_values, structure_problems
from conftest import SCREENSHOTS
from test_console import errors_shown, ready, viewport, wait
from test_pages import shoot, signed_in_as

SIZES = ((1440, 900), (390, 844))


def open_user(browser, console, user_id):
    browser.get(f"{console.url}#/users?id={urllib.parse.quote(user_id)}")
    ready(browser, "users")
    return wait(browser).until(EC.presence_of_element_located((By.ID, "user-duplicates")))


def test_each_side_of_a_split_identity_links_to_the_other(browser, console):
    report = json.loads(console.run("users", "duplicates", "--json").stdout)
    pair = report["candidates"][0]
    earlier, later = pair["earlier"], pair["later"]
    signed_in_as(browser, console, "admin")
    for size in SIZES:
        viewport(browser, size)
        for me, twin in ((later, earlier), (earlier, later)):
            card = open_user(browser, console, me["id"])
            entry = card.find_element(By.CSS_SELECTOR, f'li.twin[data-user="{twin["id"]}"]')
            assert f'{pair["score"]:.2f}' in entry.find_element(By.CSS_SELECTOR, ".score").text
            assert pair["reasons"][0]["detail"] in entry.text
            link = entry.find_element(By.CSS_SELECTOR, "a.user-link")
            assert link.get_attribute("href").endswith(f"#/users?id={urllib.parse.quote(twin['id'])}")
            plan = entry.find_element(By.CSS_SELECTOR, "a.plan-merge")
            assert plan.get_attribute("href").endswith(f"#/merges?from={urllib.parse.quote(later['id'])}&into={urllib.parse.quote(earlier['id'])}")
            assert plan.size["height"] >= 24 and plan.size["width"] >= 24, "a touch target of 24 px"
            assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
            assert errors_shown(browser) == []
        browser.execute_script("arguments[0].scrollIntoView({block: 'start'})", card)
        browser.save_screenshot(str(SCREENSHOTS / f"62-user-duplicates-{size[0]}.png"))
        shoot(browser, "62-user-duplicates-page", size)
    # The accessibility checks of test_accessibility.py over the card, in both schemes.
    problems = {}
    try:
        for scheme in ("light", "dark"):
            color_scheme(browser, scheme)
            for size in SIZES:
                viewport(browser, size)
                card = open_user(browser, console, later["id"])
                found = structure_problems(browser) + contrast_failures(browser) + small_targets(browser) + stray_values(browser)
                if found:
                    problems[f"{scheme} {size[0]}"] = found
                if scheme == "dark":
                    browser.execute_script("arguments[0].scrollIntoView({block: 'start'})", card)
                    browser.save_screenshot(str(SCREENSHOTS / f"62-user-duplicates-dark-{size[0]}.png"))
    finally:
        color_scheme(browser, None)
    assert problems == {}, json.dumps(problems, indent=1)

    # The link opens the other user's page, whose card links back; "Plan merge" opens the merge planned.
    viewport(browser, SIZES[0])
    card = open_user(browser, console, later["id"])
    card.find_element(By.CSS_SELECTOR, f'li.twin[data-user="{earlier["id"]}"] a.user-link').click()
    wait(browser).until(lambda b: urllib.parse.quote(earlier["id"]) in b.current_url)
    card = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, f'#user-duplicates li.twin[data-user="{later["id"]}"]')))
    card.find_element(By.CSS_SELECTOR, "a.plan-merge").click()
    ready(browser, "merges")
    assert browser.find_element(By.ID, "merge-from").get_attribute("value") == later["id"]
    assert browser.find_element(By.ID, "merge-into").get_attribute("value") == earlier["id"]


def test_a_user_with_no_twin_and_a_viewer(browser, console):
    report = json.loads(console.run("users", "duplicates", "--json", "--min-score", "0.3", "--limit", "10000").stdout)
    paired = {c[side]["id"] for c in report["candidates"] for side in ("earlier", "later")}
    users = json.loads(console.run("users", "search", "a", "--limit", "200", "--json").stdout)
    users = users["users"] if isinstance(users, dict) else users
    loner = next(u["id"] for u in users if u["id"] not in paired)
    signed_in_as(browser, console, "admin")
    viewport(browser, SIZES[1])
    card = open_user(browser, console, loner)
    assert "No other user scores 0.70 or more" in card.text
    # A viewer reads the twins; planning a merge is support's.
    pair = json.loads(console.run("users", "duplicates", "--json").stdout)["candidates"][0]
    signed_in_as(browser, console, "vera")
    card = open_user(browser, console, pair["later"]["id"])
    assert card.find_elements(By.CSS_SELECTOR, f'li.twin[data-user="{pair["earlier"]["id"]}"]')
    assert card.find_elements(By.CSS_SELECTOR, "a.plan-merge") == []
    assert errors_shown(browser) == []
    signed_in_as(browser, console, "admin")
