"""Fixtures for the console's browser tests: a seeded store, `gatehouse serve`, headless Chromium.

Every test runs once per engine: on a SQLite file, on a Postgres database of its own on the throw-away cluster
ops/test starts (GATEHOUSE_TEST_PG_URI), and on a D1 database of its own on the local D1 API server ops/test starts
(GATEHOUSE_TEST_D1_CONTROL). Without them those runs are skipped, never faked.
"""
import json
import os
import pathlib
import secrets
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("GATEHOUSE_BIN") or str(ROOT / ".build/debug/gatehouse")
SCREENSHOTS = ROOT / ".build/screenshots"
PASSWORD = "browser-test-password-1"
# Short enough that a test can wait past it; long enough that a page load fits inside it.
ACCESS_TTL = 3


class Console:
    """A running `gatehouse serve` over a seeded store."""

    def __init__(self, directory, store):
        self.directory = pathlib.Path(directory)
        self.store = store
        self.log_path = self.directory / "serve.log"
        self.process = None
        self.url = None
        # A Postgres store's master key file lives in GATEHOUSE_KEY_DIR (a SQLite store keeps it beside the file).
        self.env = dict(os.environ, GATEHOUSE_KEY_DIR=str(self.directory / "keys"))
        if os.environ.get("GATEHOUSE_TEST_D1_URL"):
            self.env["CLOUDFLARE_API_BASE_URL"] = os.environ["GATEHOUSE_TEST_D1_URL"]

    def run(self, *args):
        result = subprocess.run([BIN, *args, "--store", self.store], capture_output=True, text=True, timeout=120,
                                env=self.env)
        assert result.returncode == 0, f"gatehouse {' '.join(args)}: {result.stdout}{result.stderr}"
        return result

    def start(self, d1=None):
        served = self.store
        if d1:
            # D1: seeded as a SQLite file (the demo seed reads back ids inside its writes, which D1 cannot answer), then
            # copied into the file behind the D1 database, with its key where a D1 store's key lives.
            self.store = str(self.directory / "seed.sqlite")
        # init first: its admin has the tests' password (a seed on a store with no admin would make one of its own).
        password_file = self.directory / "admin.pw"
        password_file.write_text(PASSWORD + "\n")
        init = self.run("init", "--admin-password-file", str(password_file))
        assert PASSWORD not in init.stdout + init.stderr
        self.run("demo", "seed", "--users", "300", "--seed", "7", "-q")
        self.run("admins", "add", "vera", "--role", "viewer", "--password-file", str(password_file))
        if d1:
            d1.fill_from(self.store, self.directory / "keys")
            self.store = served
        env = dict(self.env, GATEHOUSE_ACCESS_TOKEN_TTL=str(ACCESS_TTL))
        self.stdout = open(self.directory / "serve.out", "w+")
        self.stderr = open(self.log_path, "w+")
        self.process = subprocess.Popen([BIN, "serve", "--store", self.store, "--listen", "127.0.0.1:0"],
                                        stdout=self.stdout, stderr=self.stderr, env=env, cwd=ROOT)
        deadline = time.time() + 20
        while time.time() < deadline and self.url is None:
            time.sleep(0.05)
            for word in (self.directory / "serve.out").read_text().split():
                if word.startswith("http://127.0.0.1:"):
                    self.url = word
            assert self.process.poll() is None, self.log_path.read_text()
        assert self.url, "gatehouse serve printed no URL"

    def log(self):
        """The server's request log so far (one line per request)."""
        return self.log_path.read_text()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        # The request log beside the screenshots, for a failure's story (it names no secret, and no email).
        if self.log_path.exists():
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            (SCREENSHOTS / f"serve-{getattr(self, 'engine', 'store')}.log").write_text(self.log_path.read_text())


class PostgresDatabase:
    """A database of its own on the test cluster, dropped afterwards."""

    def __init__(self):
        self.base = os.environ.get("GATEHOUSE_TEST_PG_URI", "")
        if not self.base:
            pytest.skip("GATEHOUSE_TEST_PG_URI is not set: run ops/test, which starts a throw-away Postgres")
        self.name = "gh_browser_" + secrets.token_hex(4)
        self.psql(f"CREATE DATABASE {self.name}")
        parts = urllib.parse.urlsplit(self.base)
        self.uri = urllib.parse.urlunsplit(parts._replace(path="/" + self.name))

    def psql(self, sql):
        result = subprocess.run(["psql", self.base, "-X", "-q", "-c", sql], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr

    def drop(self):
        self.psql(f"DROP DATABASE IF EXISTS {self.name} WITH (FORCE)")


class D1Database:
    """A database of its own on the local D1 API server (Tests/Fixtures/d1_server.py), over a SQLite file."""

    def __init__(self):
        control = os.environ.get("GATEHOUSE_TEST_D1_CONTROL", "")
        if not control:
            pytest.skip("GATEHOUSE_TEST_D1_CONTROL is not set: run ops/test, which starts a local D1 API server")
        request = urllib.request.Request(control + "/databases", data=b"{}", method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            made = json.load(answer)
        self.account = os.environ["GATEHOUSE_TEST_D1_ACCOUNT"]
        self.database, self.file = made["database"], made["file"]
        self.uri = f"d1://{self.account}/{self.database}"

    def fill_from(self, sqlite, keys):
        """Copies a seeded SQLite store into the database's file, and its master key to where a D1 store's is kept."""
        for script in (f".backup '{self.file}'",):
            subprocess.run(["sqlite3", sqlite, script], check=True, timeout=60)
        subprocess.run(["sqlite3", self.file, "PRAGMA journal_mode = DELETE; CREATE TABLE IF NOT EXISTS _cf_KV "
                        "(key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID;"], check=True, timeout=60, capture_output=True)
        keys.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = keys / f"d1_{self.account}_{self.database}.key"
        key.write_bytes(pathlib.Path(sqlite + ".key").read_bytes())
        key.chmod(0o600)

    def drop(self):
        pass


@pytest.fixture(scope="session", params=["sqlite", "postgres", "d1"])
def console(request):
    with tempfile.TemporaryDirectory(prefix="gatehouse-browser-") as directory:
        database = {"postgres": PostgresDatabase, "d1": D1Database}.get(request.param, lambda: None)()
        server = Console(directory, database.uri if database else str(pathlib.Path(directory) / "console.sqlite"))
        server.engine = request.param
        try:
            server.start(d1=database if request.param == "d1" else None)
            yield server
        finally:
            server.stop()
            if database:
                database.drop()


def chromium():
    """A headless Chromium with a profile of its own (a second one is a second person: no shared session storage)."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,800",
                     "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # Chromium's profile and the shared-memory files that --disable-dev-shm-usage puts in TMPDIR go into one
    # folder that is removed afterwards, instead of an org.chromium.Chromium.* folder left in /tmp per run.
    with tempfile.TemporaryDirectory(prefix="gatehouse-browser-") as scratch:
        options.add_argument(f"--user-data-dir={scratch}/profile")
        service = Service("/usr/bin/chromedriver", env={**os.environ, "TMPDIR": scratch})
        driver = webdriver.Chrome(service=service, options=options)
        driver.set_window_size(1280, 800)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        try:
            yield driver
        finally:
            driver.quit()


@pytest.fixture(scope="session")
def browser():
    yield from chromium()


@pytest.fixture(scope="session")
def second_browser():
    """Another person's browser, for what takes two admins (approvals)."""
    yield from chromium()
