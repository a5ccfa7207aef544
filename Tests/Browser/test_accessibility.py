"""An axe-style check of every page, written into the tests (nothing loaded from outside): structure (language,
landmarks, one h1, named controls, links and images, unique ids, table headers), text contrast, target sizes and stray
values, at 1440 px and 390 px, in the light and the dark scheme."""
import json

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from a11y import color_scheme, contrast_failures, small_targets, stray_values, structure_problems
from test_console import log_out, ready, viewport, wait
from test_pages import signed_in_as

PAGES = ["overview", "users", "duplicates", "merges", "deletions", "apple", "apple-events", "apple-transfer", "security-events", "policy", "gates", "health", "audit", "security", "approvals"]


def test_every_page_passes_the_checks(browser, console):
    signed_in_as(browser, console, "admin")
    found = json.loads(console.run("users", "search", "a", "--by", "email", "--limit", "5", "--json").stdout)["users"]
    # A merge being planned (its radio buttons), from the Duplicates page's first pair.
    browser.get(f"{console.url}#/duplicates")
    ready(browser, "duplicates")
    plan = browser.find_element(By.CSS_SELECTOR, "#dup-results tbody tr a.plan-merge").get_attribute("href").split("#/", 1)[1]
    routes = PAGES + [f"users?id={found[0]['id']}", "users?q=a", plan]
    # A probe: a nameless input is caught.
    browser.get(f"{console.url}#/overview")
    ready(browser, "overview")
    browser.execute_script("const i = document.createElement('input'); i.id = 'probe'; document.querySelector('[data-page]').append(i)")
    assert any("#probe" in p for p in structure_problems(browser)), structure_problems(browser)
    browser.execute_script("document.getElementById('probe').remove()")
    problems = {}
    try:
        for scheme in ("light", "dark"):
            color_scheme(browser, scheme)
            for size in ((1440, 900), (390, 844)):
                viewport(browser, size)
                for route in routes:
                    browser.get(f"{console.url}#/{route}")
                    ready(browser, route.split("?")[0])
                    if route == plan:
                        wait(browser).until(EC.presence_of_element_located((By.ID, "merge-plan-id")))
                    browser.execute_script("document.querySelectorAll('#view details').forEach((d) => d.open = true)")
                    found_here = structure_problems(browser) + contrast_failures(browser) + small_targets(browser) + stray_values(browser)
                    if found_here:
                        problems[f"{scheme} {size[0]} #{route}"] = found_here
    finally:
        color_scheme(browser, None)
        viewport(browser, (1440, 900))
    assert problems == {}, json.dumps(problems, indent=1)


def test_the_login_page_passes_the_checks(browser, console):
    signed_in_as(browser, console, "admin")
    log_out(browser)
    try:
        for size in ((1440, 900), (390, 844)):
            viewport(browser, size)
            wait(browser).until(EC.visibility_of_element_located((By.ID, "username")))
            found = structure_problems(browser) + contrast_failures(browser) + small_targets(browser) + stray_values(browser)
            assert found == [], f"{size}: {found}"
    finally:
        viewport(browser, (1440, 900))
        signed_in_as(browser, console, "admin")
