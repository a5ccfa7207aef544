"""User search on the Users page a page at a time: an email part (`privaterelay`), "Next page" and back to the first,
a sort and a filter, all kept in the hash; at 1440 px and 390 px, with screenshots of each step."""
import json
import urllib.parse

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from test_console import errors_shown, ready, viewport, wait
from test_pages import shoot, signed_in_as

SIZES = ((1440, 900), (390, 844))


def hash_params(browser):
    fragment = browser.execute_script("return location.hash")
    return dict(urllib.parse.parse_qsl(fragment.split("?", 1)[1])) if "?" in fragment else {}


def result_emails(browser):
    table = wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#user-results table")))
    return [row.find_elements(By.TAG_NAME, "td")[1].text for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")]


def wait_for_results(browser, before=None):
    """The results after a navigation: a new table (not `before`), no error shown."""
    if before is not None:
        wait(browser).until(EC.staleness_of(before))
    ready(browser, "users")
    return wait(browser).until(EC.presence_of_element_located((By.ID, "user-results")))


def test_search_pages_sorts_and_filters_relay_users(browser, console):
    signed_in_as(browser, console, "admin")
    relay = json.loads(console.run("users", "search", "privaterelay", "--by", "email", "--limit", "1000", "--json").stdout)["users"]
    assert len(relay) > 10, "the demo store has relay users to page through"
    for size in SIZES:
        width = size[0]
        viewport(browser, size)
        browser.get(f"{console.url}#/users")
        browser.refresh()
        ready(browser, "users")
        assert "Email (any part)" in browser.find_element(By.ID, "user-by").text
        Select(browser.find_element(By.ID, "user-by")).select_by_value("email")
        Select(browser.find_element(By.ID, "user-limit")).select_by_value("20")
        query = browser.find_element(By.ID, "user-q")
        query.clear()
        query.send_keys("privaterelay")
        browser.find_element(By.ID, "user-search").click()
        results = wait_for_results(browser)
        wait(browser).until(lambda b: hash_params(b).get("q") == "privaterelay")
        first = result_emails(browser)
        assert len(first) == 20 and all("privaterelay" in e for e in first), first
        assert first == sorted(first), "email order by default"
        assert errors_shown(browser) == []
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width, "no sideways scroll"
        shoot(browser, "56-user-search-first-page", size)

        # Next page: a cursor in the hash, twenty more relay users, none of the first page's.
        next_button = browser.find_element(By.ID, "user-next-page")
        assert next_button.size["height"] >= 24 and next_button.size["width"] >= 24, next_button.size
        next_button.click()
        wait_for_results(browser, results)
        wait(browser).until(lambda b: "cursor" in hash_params(b))
        second = result_emails(browser)
        assert second and not set(second) & set(first), (first, second)
        assert all("privaterelay" in e for e in second)
        assert second[0] > first[-1], "the second page starts after the first"
        browser.execute_script("document.getElementById('user-results').scrollIntoView()")
        shoot(browser, "57-user-search-next-page", size)

        # Back to the first page.
        results = browser.find_element(By.ID, "user-results")
        browser.find_element(By.ID, "user-first-page").click()
        wait_for_results(browser, results)
        wait(browser).until(lambda b: "cursor" not in hash_params(b))
        assert result_emails(browser) == first

        # Sort newest first and keep only Apple users: the choices go into the hash, the page starts over. On a phone
        # they fold behind "Sort and filters" until one is set.
        results = browser.find_element(By.ID, "user-results")
        toggle = browser.find_element(By.ID, "user-more-filters")
        assert toggle.is_displayed() == (width < 641), width
        if toggle.is_displayed():
            assert not browser.find_element(By.ID, "user-sort").is_displayed(), "folded on a phone"
            assert toggle.size["height"] >= 24
            toggle.click()
            assert toggle.get_attribute("aria-expanded") == "true"
        Select(browser.find_element(By.ID, "user-sort")).select_by_value("created")
        Select(browser.find_element(By.ID, "user-provider")).select_by_value("apple")
        Select(browser.find_element(By.ID, "user-flag")).select_by_value("relay")
        browser.find_element(By.ID, "user-search").click()
        wait_for_results(browser, results)
        wait(browser).until(lambda b: hash_params(b).get("sort") == "created")
        params = hash_params(browser)
        assert params.get("provider") == "apple" and params.get("flag") == "relay" and "cursor" not in params, params
        rows = browser.find_elements(By.CSS_SELECTOR, "#user-results tbody tr")
        assert rows
        for row in rows:
            cells = row.find_elements(By.TAG_NAME, "td")
            assert "privaterelay" in cells[1].text and "apple" in cells[2].text, cells[1].text
        created = [t.get_attribute("datetime") for t in browser.find_elements(By.CSS_SELECTOR, "#user-results tbody td:nth-child(4) time")]
        assert created == sorted(created, reverse=True), "newest first"
        assert "newest first" in browser.find_element(By.ID, "user-count").text
        assert errors_shown(browser) == []
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width, "no sideways scroll"
        shoot(browser, "58-user-search-sorted-filtered", size)

        # A reload keeps the whole search (it lives in the hash).
        browser.refresh()
        ready(browser, "users")
        assert Select(browser.find_element(By.ID, "user-sort")).first_selected_option.get_attribute("value") == "created"
        assert Select(browser.find_element(By.ID, "user-flag")).first_selected_option.get_attribute("value") == "relay"
