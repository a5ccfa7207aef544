"""The Health page's deadline charts: one per deadline the checks watch (the Apple client secret, the membership, the
transfer window, the key's age), against its warning and critical lines, over a range kept in the hash, with tooltips
and a table of the values; the empty state names the timer. At 1440 px and 390 px, text at 11 px or more as rendered."""
import datetime
import json
import os
import sqlite3
import subprocess
import urllib.request

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select

from a11y import color_scheme, contrast_failures, small_targets, stray_values, structure_problems
from conftest import SCREENSHOTS
from test_console import errors_shown, go, ready, viewport, wait
from test_pages import shoot, signed_in_as

SIZES = ((1440, 900), (390, 844))


def execute(console, sql, rows=()):
    """Runs `sql` once per row of parameters on the console's store, whichever engine holds it."""
    rows = list(rows) or [()]
    if console.engine == "sqlite":
        with sqlite3.connect(console.store) as db:
            db.executemany(sql, rows)
    elif console.engine == "postgres":
        for row in rows:
            text = sql
            for value in row:
                text = text.replace("?", "NULL" if value is None else repr(value) if isinstance(value, (int, float)) else "'" + str(value).replace("'", "''") + "'", 1)
            subprocess.run(["psql", console.store, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", text], check=True, capture_output=True, timeout=60)
    else:
        account, database = console.store.removeprefix("d1://").split("/")
        url = f"{os.environ['GATEHOUSE_TEST_D1_URL']}/accounts/{account}/d1/database/{database}/query"
        for row in rows:
            request = urllib.request.Request(url, data=json.dumps({"sql": sql, "params": list(row)}).encode(), method="POST",
                                             headers={"Content-Type": "application/json", "Authorization": f"Bearer {os.environ['GATEHOUSE_TEST_D1_TOKEN']}"})
            with urllib.request.urlopen(request, timeout=30) as answer:
                assert json.load(answer)["success"]


INSERT = ("INSERT INTO gatehouse_health_gauges (at, check_id, status, value, warning, critical, lower_is_worse) "
          "VALUES (?, ?, ?, ?, ?, ?, ?)")


def status(value, warning, critical, lower):
    worse = (lambda line: value < line) if lower else (lambda line: value > line)
    return "critical" if critical is not None and worse(critical) else "warning" if warning is not None and worse(warning) else "ok"


def seed_deadlines(console):
    """Every 6 hours over 40 days: a secret running down through both lines, a membership far off, a transfer
    window closing, and a key ageing towards its warning line."""
    now = datetime.datetime.now(datetime.timezone.utc)
    rows = []
    for step in range(0, 40 * 4):
        at = now - datetime.timedelta(hours=6 * step)
        days_ago = step / 4
        iso = at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"
        for check, value, warning, critical, lower in (
                ("apple.secret.com.example.web", 8 + days_ago * 1.3, 28, 14, True),
                ("gates.membership", 190 + days_ago, 30, 7, True),
                ("apple.transfer", 3 + days_ago * 0.7, 21, 7, True),
                ("apple.key_age", 340 - days_ago, 365, None, False)):
            rows.append((iso, check, status(value, warning, critical, lower), value, warning, critical, 1 if lower else 0))
    execute(console, INSERT, rows)


def open_health(browser, console, days):
    browser.get(f"{console.url}#/health?days={days}")
    ready(browser, "health")
    return wait(browser).until(EC.presence_of_element_located((By.CSS_SELECTOR, ".deadline-card")))


def rendered_font_sizes(browser, selector):
    """The font size each text of the charts is drawn at, in CSS pixels of the page."""
    return browser.execute_script("""
        return [...document.querySelectorAll(arguments[0])].map((t) => {
          const svg = t.ownerSVGElement, scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
          return parseFloat(getComputedStyle(t).fontSize) * scale;
        });""", selector)


def test_deadline_charts(browser, console):
    signed_in_as(browser, console, "admin")
    execute(console, "DELETE FROM gatehouse_health_gauges")
    # Empty: the page says the timer fills the charts.
    viewport(browser, SIZES[0])
    go(browser, console, "health")
    empty = wait(browser).until(EC.presence_of_element_located((By.ID, "health-deadlines-empty")))
    assert "gatehouse-health.timer" in empty.text and "gatehouse health --record" in empty.text
    shoot(browser, "60-health-deadlines-empty", SIZES[0])

    seed_deadlines(console)
    for size in SIZES:
        viewport(browser, size)
        open_health(browser, console, 30)
        assert Select(browser.find_element(By.ID, "health-range")).first_selected_option.text == "30 days"
        cards = browser.find_elements(By.CSS_SELECTOR, ".deadline-card")
        checks = [c.get_attribute("data-check") for c in cards]
        assert checks == ["apple.key_age", "apple.secret.com.example.web", "apple.transfer", "gates.membership"], checks
        for card in cards:
            chart = card.find_element(By.CSS_SELECTOR, "svg.chart")
            assert chart.get_attribute("role") == "img"
            label = browser.execute_script("return arguments[0].getAttribute('aria-labelledby').split(' ').map((id) => document.getElementById(id).textContent).join(' ')", chart)
            assert "recorded value" in label and "the table below lists them" in label, label
            assert card.find_elements(By.CSS_SELECTOR, "circle.dot title"), "each point has a tooltip"
        secret = browser.find_element(By.CSS_SELECTOR, '.deadline-card[data-check="apple.secret.com.example.web"]')
        lines = [t.get_attribute("textContent") for t in secret.find_elements(By.CSS_SELECTOR, "text.threshold-label")]
        assert lines == ["warning 28 days", "critical 14 days"], lines
        assert "CRITICAL" in secret.find_element(By.CSS_SELECTOR, "figcaption .pill").text
        assert "8 days left" in secret.find_element(By.CSS_SELECTOR, "figcaption").text
        key = browser.find_element(By.CSS_SELECTOR, '.deadline-card[data-check="apple.key_age"]')
        assert [t.get_attribute("textContent") for t in key.find_elements(By.CSS_SELECTOR, "text.threshold-label")] == ["warning 365 days"]
        # Readable: no text under 11 px as drawn, nothing wider than the window.
        sizes = rendered_font_sizes(browser, ".deadline-card svg text")
        assert sizes and min(sizes) >= 11, (min(sizes), browser.execute_script("return [...document.querySelectorAll('.deadline-card svg')].map((s) => [s.viewBox.baseVal.width, s.getBoundingClientRect().width, s.parentNode.clientWidth, document.getElementById('health-deadlines').clientWidth, window.innerWidth])"))
        assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        for card in cards:
            box = card.rect
            assert box["x"] >= 0 and box["x"] + box["width"] <= size[0], (card.get_attribute("data-check"), box)
        # The label follows the pointer and the keys.
        tip = secret.find_element(By.CSS_SELECTOR, ".chart-tip")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", secret)
        dots = secret.find_elements(By.CSS_SELECTOR, "circle.dot")
        ActionChains(browser).move_to_element(dots[len(dots) // 2]).perform()
        wait(browser).until(lambda b: "days left" in tip.text)
        chart = secret.find_element(By.CSS_SELECTOR, "svg.chart")
        chart.send_keys(Keys.END)
        wait(browser).until(lambda b: tip.text.endswith("CRITICAL"))
        latest = tip.text
        chart.send_keys(Keys.HOME)
        wait(browser).until(lambda b: tip.text != latest and tip.text.endswith("OK"))
        assert errors_shown(browser) == []
        browser.execute_script("window.scrollTo(0, 0)")
        shoot(browser, "61-health-deadlines", size)
        browser.execute_script("document.getElementById('health-deadlines').scrollIntoView()")
        browser.save_screenshot(str(SCREENSHOTS / f"61-health-deadlines-charts-{size[0]}.png"))

    # The accessibility checks of test_accessibility.py, over the charts and their opened tables, in both schemes.
    problems = {}
    try:
        for scheme in ("light", "dark"):
            color_scheme(browser, scheme)
            for size in SIZES:
                viewport(browser, size)
                open_health(browser, console, 30)
                browser.execute_script("document.querySelectorAll('#view details').forEach((d) => d.open = true)")
                found = structure_problems(browser) + contrast_failures(browser) + small_targets(browser) + stray_values(browser)
                if found:
                    problems[f"{scheme} {size[0]}"] = found
                if scheme == "dark":
                    browser.execute_script("document.querySelectorAll('#view details').forEach((d) => d.open = false)")
                    browser.execute_script("document.getElementById('health-deadlines').scrollIntoView()")
                    browser.save_screenshot(str(SCREENSHOTS / f"61-health-deadlines-dark-{size[0]}.png"))
    finally:
        color_scheme(browser, None)
    assert problems == {}, json.dumps(problems, indent=1)

    # The range: 7 days draws fewer values, and the hash keeps it across a reload.
    viewport(browser, SIZES[0])
    open_health(browser, console, 30)
    month = len(browser.find_elements(By.CSS_SELECTOR, '.deadline-card[data-check="gates.membership"] tbody tr'))
    Select(browser.find_element(By.ID, "health-range")).select_by_visible_text("7 days")
    wait(browser).until(lambda b: "days=7" in b.current_url)
    wait(browser).until(lambda b: 0 < len(b.find_elements(By.CSS_SELECTOR, '.deadline-card[data-check="gates.membership"] tbody tr')) < month)
    browser.refresh()
    ready(browser, "health")
    assert Select(browser.find_element(By.ID, "health-range")).first_selected_option.text == "7 days"
