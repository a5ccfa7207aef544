"""The login page of a store nobody can log in to yet (issue 40): it names the exact command that creates the first
admin, on the server, for this store. Screenshots at 1440 and 390 px go to .build/screenshots/.
"""
import pathlib
import subprocess
import tempfile
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC

from conftest import BIN, SCREENSHOTS
from test_console import WIDE, viewport, wait


def test_a_store_without_admins_names_the_command_that_creates_one(browser):
    with tempfile.TemporaryDirectory(prefix="gatehouse-browser-") as directory:
        store = str(pathlib.Path(directory) / "no admins.sqlite")
        subprocess.run([BIN, "init", "--store", store], check=True, capture_output=True, timeout=60)
        # As a store another tool made, or whose admins were deleted by hand (gatehouse keeps the last admin).
        subprocess.run(["sqlite3", store, "DELETE FROM gatehouse_admins;"], check=True, timeout=60)
        out = pathlib.Path(directory) / "serve.out"
        with open(out, "w") as sink:
            server = subprocess.Popen([BIN, "serve", "--store", store, "--listen", "127.0.0.1:0", "-q"],
                                      stdout=sink, stderr=subprocess.STDOUT)
        try:
            url = None
            for _ in range(200):
                url = next((w for w in out.read_text().split() if w.startswith("http://127.0.0.1:")), None)
                if url:
                    break
                time.sleep(0.05)
            assert url, out.read_text()
            command = f"gatehouse admins add admin --role admin --store '{store}'"
            assert f"run `{command}`" in out.read_text()
            for width in (1440, 390):
                viewport(browser, (width, 800))
                browser.get(url)
                box = wait(browser).until(EC.visibility_of_element_located((By.ID, "login-setup")))
                assert box.find_element(By.TAG_NAME, "code").text == command
                assert "no admin yet" in box.text
                assert browser.execute_script("return document.documentElement.scrollWidth") <= width, "no sideways scroll"
                browser.save_screenshot(str(SCREENSHOTS / f"login-no-admin-{width}x800.png"))
        finally:
            server.terminate()
            server.wait(timeout=10)
            viewport(browser, WIDE)
