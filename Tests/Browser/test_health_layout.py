"""The Health page's checks now: the problems first, worst first, then the OK checks folded by family (one <details>
per family, closed), at 1440 px and 390 px."""
import json
import subprocess

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from conftest import BIN
from test_console import errors_shown, go, viewport, wait
from test_pages import shoot, signed_in_as

RANK = {"CRITICAL": 0, "WARNING": 1, "UNKNOWN": 2}


def test_problems_come_first_and_ok_checks_fold_by_family(browser, console):
    signed_in_as(browser, console, "admin")
    # Two problems of different severity: the switch ON with no end, and autoLink accepting different emails.
    console.run("policy", "set", "linkSocial.allowDifferentEmails", "true", "--reason", "browser test: a warning")
    console.run("policy", "set", "autoLink.allowDifferentEmails", "true", "--accept-takeover-risk", "--reason", "browser test: a problem")
    try:
        check_the_layout(browser, console)
    finally:
        console.run("policy", "set", "autoLink.allowDifferentEmails", "false", "--reason", "browser test: done")
        console.run("policy", "set", "linkSocial.allowDifferentEmails", "false", "--reason", "browser test: done")


def check_the_layout(browser, console):
    report = subprocess.run([BIN, "health", "--json", "--store", console.store], capture_output=True, text=True, timeout=60, env=console.env)
    checks = json.loads(report.stdout)["checks"]
    bad = [c for c in checks if c["status"] != "ok"]
    assert len({c["status"] for c in bad}) >= 2, bad
    for size in ((1440, 900), (390, 844)):
        viewport(browser, size)
        go(browser, console, "health")
        current = wait(browser).until(EC.presence_of_element_located((By.ID, "health-ok")))
        problems = browser.find_element(By.ID, "health-problems")
        assert problems.location["y"] < current.location["y"], "problems come before the OK checks"
        rows = problems.find_elements(By.CSS_SELECTOR, "tbody tr")
        assert len(rows) == len(bad), (len(rows), bad)
        statuses = [r.find_element(By.CSS_SELECTOR, ".pill").text for r in rows]
        assert "OK" not in statuses and statuses == sorted(statuses, key=RANK.get), statuses
        if not bad:
            assert "every check is OK" in problems.text
        families = browser.find_elements(By.CSS_SELECTOR, "#health-ok details.family")
        names = [f.get_attribute("data-family") for f in families]
        assert len(names) == len(set(names)) and "store" in names, names
        assert not any(f.get_attribute("open") for f in families), "folded"
        folded = sum(len(f.find_elements(By.CSS_SELECTOR, "tbody tr")) for f in families)
        assert folded + len(rows) == len(checks)
        for family in families:
            summary = family.find_element(By.TAG_NAME, "summary").text
            assert summary.startswith(family.get_attribute("data-family")) and "OK" in summary, summary
        assert errors_shown(browser) == []
        shoot(browser, "52-health-folded", size)
    # A family opens on a click and shows its checks.
    store = browser.find_element(By.CSS_SELECTOR, '#health-ok details[data-family="store"]')
    store.find_element(By.TAG_NAME, "summary").click()
    assert "store.integrity" in store.text
