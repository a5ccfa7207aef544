"""Tests of the local D1 REST API server (d1_server.py) over a real socket: every rule it emulates, and its answers
checked field by field against the reference answers in d1_reference/ (copied in shape from Cloudflare's API reference
and from answers D1 is seen to send), so the server is held to Cloudflare's contract, not to itself.

Run: .venv/bin/python -m pytest Tests/Fixtures/test_d1_server.py
"""
import http.client
import importlib.util
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SERVER = HERE / "d1_server.py"
REFERENCE = HERE / "d1_reference"
TOKEN = "test-token-" + uuid.uuid4().hex
ACCOUNT = "0123456789abcdef0123456789abcdef"


def load_module():
    spec = importlib.util.spec_from_file_location("d1_server", SERVER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Server:
    """A d1_server.py process, and a small client for it."""

    def __init__(self, tmp: Path, *extra, token=TOKEN, database=None, name="d1.sqlite"):
        self.db_path = tmp / name
        self.database = database or str(uuid.uuid4())
        env = dict(os.environ, D1_TEST_TOKEN=token)
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), "--db", str(self.db_path), "--port", "0", "--token-env", "D1_TEST_TOKEN",
             "--account", ACCOUNT, "--database", self.database, *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        line = self.process.stdout.readline()
        assert line.startswith("PORT "), (line, self.process.stderr.read() if self.process.poll() is not None else "")
        self.port = int(line.split()[1])

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    def path(self, endpoint="query", account=ACCOUNT, database=None):
        return f"/client/v4/accounts/{account}/d1/database/{database or self.database}/{endpoint}"

    def request(self, method, path, body=None, headers=None, timeout=30):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        connection.request(method, path, body=data, headers=headers or {})
        response = connection.getresponse()
        raw = response.read()
        connection.close()
        return response.status, dict(response.getheaders()), raw

    def api(self, body, endpoint="query", token=TOKEN, method="POST", **path):
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        status, headers, raw = self.request(method, self.path(endpoint, **path), body, headers)
        return status, headers, raw

    def ok(self, body, endpoint="query"):
        status, _, raw = self.api(body, endpoint)
        answer = json.loads(raw)
        assert status == 200 and answer["success"] is True, (status, raw)
        return answer["result"]

    def refused(self, body, endpoint="query", status=400):
        got, _, raw = self.api(body, endpoint)
        answer = json.loads(raw)
        assert got == status and answer["success"] is False, (got, raw)
        return answer["errors"][0]

    def control(self, method, path, body=None):
        status, _, raw = self.request(method, "/test/" + path, body)
        assert status == 200, raw
        return json.loads(raw)

    def rows(self, sql, params=None):
        return self.ok({"sql": sql, "params": params or []})[0]["results"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = Server(tmp_path_factory.mktemp("d1"))
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def clean(request):
    if "server" in request.fixturenames:
        request.getfixturevalue("server").control("POST", "reset")
    yield


def table(server, columns="id INTEGER PRIMARY KEY, v"):
    name = "t_" + uuid.uuid4().hex[:12]
    server.ok({"sql": f"CREATE TABLE {name} ({columns})"})
    return name


# ---------------------------------------------------------------------------------------------------------------------
# Held to the reference, field by field


def reference(name):
    return json.loads((REFERENCE / name).read_text())


def at(value, path):
    """Every value at a dotted path ('*' for every element)."""
    found = [value]
    for part in path.split("."):
        following = []
        for item in found:
            if part == "*":
                following.extend(item if isinstance(item, list) else list(item.values()))
            elif isinstance(item, list):
                following.append(item[int(part)])
            else:
                following.append(item[part])
        found = following
    return found


def json_type(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", dict: "object", list: "array"}[type(value)]


def assert_shape(actual, expected, path="body"):
    """Every field the reference shows is present in the answer with the same JSON type, recursively."""
    assert json_type(actual) == json_type(expected), f"{path}: {json_type(actual)} where the reference has " \
                                                     f"{json_type(expected)}"
    if isinstance(expected, dict):
        for key, value in expected.items():
            assert key in actual, f"{path}.{key} is missing"
            assert_shape(actual[key], value, f"{path}.{key}")
    elif isinstance(expected, list) and expected:
        for index, item in enumerate(actual):
            if isinstance(expected[0], list) and not expected[0]:
                assert isinstance(item, list), f"{path}.{index}"
            else:
                assert_shape(item, expected[0], f"{path}.{index}")


def assert_matches(name, status, headers, raw):
    ref = reference(name)
    assert status == ref["status"], f"HTTP {status}, the reference says {ref['status']}"
    lower = {k.lower(): v for k, v in headers.items()}
    for header, value in ref.get("headers", {}).items():
        assert header.lower() in lower, f"header {header} missing"
        if value is not None:
            assert lower[header.lower()] == value
    body = json.loads(raw)
    assert_shape(body, ref["body"])
    for path in ref.get("exact", []):
        expected = at(ref["body"], path)
        actual = at(body, path)
        assert actual and all(a == expected[0] for a in actual), f"{path}: {actual} where the reference has {expected}"
    for path, allowed in ref.get("enums", {}).items():
        for value in at(body, path):
            assert value in allowed, f"{path}: {value} not one of {allowed}"
    return body


def test_query_answer_matches_the_reference(server):
    name = table(server, "id INTEGER PRIMARY KEY, name TEXT")
    status, headers, raw = server.api({"batch": [
        {"sql": f"INSERT INTO {name} (name) VALUES (?)", "params": ["ada"]},
        {"sql": f"SELECT id, name FROM {name}"}]})
    body = assert_matches("query-200.json", status, headers, raw)
    assert body["result"][1]["results"] == [{"id": 1, "name": "ada"}]
    assert body["result"][0]["results"] == []


def test_raw_answer_matches_the_reference(server):
    name = table(server, "id INTEGER PRIMARY KEY, name TEXT")
    status, headers, raw = server.api({"batch": [
        {"sql": f"INSERT INTO {name} (name) VALUES (?), (?)", "params": ["ada", "bob"]},
        {"sql": f"SELECT id, name FROM {name} ORDER BY id"}]}, endpoint="raw")
    body = assert_matches("raw-200.json", status, headers, raw)
    assert body["result"][1]["results"] == {"columns": ["id", "name"], "rows": [[1, "ada"], [2, "bob"]]}
    assert body["result"][0]["results"] == {"columns": [], "rows": []}


def test_a_real_d1_answer_has_the_same_shape_and_cf_kv_definition(server):
    status, headers, raw = server.api({"sql": "SELECT name, sql, type FROM sqlite_master WHERE name = '_cf_KV'"})
    assert_matches("query-observed-200.json", status, headers, raw)


def test_a_refused_statement_matches_the_reference(server):
    status, headers, raw = server.api({"sql": "SELECT * FROM sqlite_master, pragma_table_info('_cf_KV')"})
    body = assert_matches("sql-error-400.json", status, headers, raw)
    assert body["errors"][0]["message"].endswith(": SQLITE_AUTH")


@pytest.mark.parametrize("token", [None, "wrong-token", ""])
def test_a_bad_or_missing_token_is_403_authentication_error(server, token):
    status, headers, raw = server.api({"sql": "SELECT 1"}, token=token)
    assert_matches("auth-403.json", status, headers, raw)
    assert TOKEN.encode() not in raw


def test_a_wrong_account_is_7403_and_a_wrong_database_7404(server):
    status, headers, raw = server.api({"sql": "SELECT 1"}, account="f" * 32)
    assert_matches("account-not-authorized-403.json", status, headers, raw)
    other = str(uuid.uuid4())
    status, headers, raw = server.api({"sql": "SELECT 1"}, database=other)
    body = assert_matches("database-not-found-404.json", status, headers, raw)
    assert other in body["errors"][0]["message"]
    status, _, raw = server.api({"sql": "SELECT 1"}, database="not-a-uuid")
    assert status == 400 and json.loads(raw)["errors"][0] == {"code": 7400, "message":
                                                              "The request is malformed: failed to decode id"}


def test_rate_limited_answers_429_with_retry_after_then_recovers(server):
    server.control("POST", "faults", {"fault": "429", "count": 2, "retry_after": 3})
    for _ in range(2):
        status, headers, raw = server.api({"sql": "SELECT 1 AS one"})
        assert_matches("rate-limited-429.json", status, headers, raw)
        assert {k.lower(): v for k, v in headers.items()}["retry-after"] == "3"
    assert server.rows("SELECT 1 AS one") == [{"one": 1}]


# ---------------------------------------------------------------------------------------------------------------------
# The request: routes, bodies, statements, parameters


def test_only_post_is_served_and_unknown_routes_are_404(server):
    for method in ("GET", "PUT", "DELETE", "PATCH"):
        status, _, raw = server.api(None if method == "GET" else {"sql": "SELECT 1"}, method=method)
        assert status == 405 and json.loads(raw)["success"] is False, (method, raw)
    status, _, raw = server.request("POST", "/client/v4/accounts/x/d1/database", b"{}",
                                    {"Authorization": f"Bearer {TOKEN}"})
    assert status == 404 and json.loads(raw)["errors"][0]["code"] == 7003


def test_refused_requests_leave_a_kept_alive_connection_usable(server):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    body = json.dumps({"sql": "SELECT 1 AS one"}).encode()
    for path, expected in [("/client/v4/nowhere", 404), (server.path("raw"), 200), (server.path(database=str(
            uuid.uuid4())), 404), (server.path("raw"), 200)]:
        connection.request("POST", path, body, headers)
        response = connection.getresponse()
        assert response.status == expected and json.loads(response.read())["success"] is (expected == 200)
    connection.request("PUT", server.path(), body, headers)
    response = connection.getresponse()
    assert response.status == 405 and response.read()
    connection.request("POST", server.path(), body, {"Authorization": "Bearer wrong"})
    response = connection.getresponse()
    assert response.status == 403 and response.read()
    connection.request("POST", server.path("raw"), body, headers)
    assert connection.getresponse().status == 200
    connection.close()


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]", b'{"params": []}', b'{"sql": 5}', b'{"batch": []}',
                                  b'{"sql": "SELECT ?", "params": "1"}', b'{"sql": "SELECT ?", "params": [{"a": 1}]}',
                                  b'{"sql": "   ;  -- nothing\\n"}'])
def test_a_malformed_body_is_400_7400(server, body):
    status, _, raw = server.request("POST", server.path(), body, {"Authorization": f"Bearer {TOKEN}"})
    answer = json.loads(raw)
    assert status == 400 and answer["success"] is False and answer["errors"][0]["code"] == 7400, raw


def test_several_statements_in_one_sql_answer_one_result_each(server):
    name = table(server)
    results = server.ok({"sql": f"INSERT INTO {name} (v) VALUES ('a;b'); -- a comment; with a semicolon\n"
                                f"INSERT INTO {name} (v) VALUES ('c'); SELECT v FROM {name} ORDER BY id;"})
    assert len(results) == 3
    assert results[2]["results"] == [{"v": "a;b"}, {"v": "c"}]


def test_a_trigger_body_is_one_statement(server):
    name = table(server)
    log = table(server, "v")
    results = server.ok({"sql": f"CREATE TRIGGER trg_{name} AFTER INSERT ON {name} BEGIN "
                                f"INSERT INTO {log} VALUES (new.v); INSERT INTO {log} VALUES (new.v || '!'); END; "
                                f"INSERT INTO {name} (v) VALUES ('x')"})
    assert len(results) == 2
    assert server.rows(f"SELECT v FROM {log} ORDER BY rowid") == [{"v": "x"}, {"v": "x!"}]


def test_params_bind_positionally_as_strings_numbers_and_null(server):
    rows = server.rows("SELECT ? AS a, ? AS b, ? AS c, ?2 AS again, typeof(?1) AS ta, typeof(?2) AS tb, "
                       "typeof(?3) AS tc, typeof(?4) AS td, ?4 AS d", ["1", 2, None, 2.5])
    assert rows == [{"a": "1", "b": 2, "c": None, "again": 2, "ta": "text", "tb": "integer", "tc": "null",
                     "td": "real", "d": 2.5}]
    rows = server.rows("SELECT ?1 AS t, ?2 AS f, typeof(?3) AS blob, hex(?3) AS hex", [True, False, [0, 1, 255]])
    assert rows == [{"t": 1, "f": 0, "blob": "blob", "hex": "0001FF"}]


def test_a_wrong_number_of_params_is_refused(server):
    error = server.refused({"sql": "SELECT ?, ?", "params": ["1"]})
    assert error["code"] == 7500 and "parameter" in error["message"]


def test_params_with_several_statements_in_one_sql_are_refused(server):
    error = server.refused({"sql": "SELECT ?; SELECT ?", "params": ["1"]})
    assert error["code"] == 7400


# ---------------------------------------------------------------------------------------------------------------------
# Each request is atomic


def test_a_failing_statement_rolls_back_the_whole_batch(server):
    name = table(server, "id INTEGER PRIMARY KEY, v TEXT UNIQUE")
    server.ok({"sql": f"INSERT INTO {name} (v) VALUES ('kept')"})
    error = server.refused({"batch": [{"sql": f"INSERT INTO {name} (v) VALUES ('new')"},
                                      {"sql": f"UPDATE {name} SET v = 'changed' WHERE v = 'kept'"},
                                      {"sql": f"INSERT INTO {name} (v) VALUES ('new')"}]})
    assert error == {"code": 7500, "message": f"UNIQUE constraint failed: {name}.v: SQLITE_CONSTRAINT"}
    assert server.rows(f"SELECT v FROM {name}") == [{"v": "kept"}]


def test_a_failing_statement_in_one_sql_string_rolls_back_the_earlier_ones(server):
    name = table(server)
    error = server.refused({"sql": f"INSERT INTO {name} (v) VALUES (1); SELECT * FROM no_such_table"})
    assert error == {"code": 7500, "message": "no such table: no_such_table: SQLITE_ERROR"}
    assert server.rows(f"SELECT count(*) AS n FROM {name}") == [{"n": 0}]


def test_a_guard_statement_makes_the_request_change_nothing(server):
    """The optimistic-concurrency pattern the D1 engine relies on: a statement that fails when what was read has
    changed (here a CHECK through a one-row table) ahead of the writes."""
    guard = table(server, "id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL CHECK (version >= 0)")
    data = table(server)
    server.ok({"sql": f"INSERT INTO {guard} VALUES (1, 5)"})
    stale = {"batch": [{"sql": f"UPDATE {guard} SET version = CASE WHEN version = ? THEN version + 1 ELSE -1 END",
                        "params": ["4"]},
                       {"sql": f"INSERT INTO {data} (v) VALUES ('write')"}]}
    error = server.refused(stale)
    assert "CHECK constraint failed" in error["message"]
    assert server.rows(f"SELECT count(*) AS n FROM {data}") == [{"n": 0}]
    stale["batch"][0]["params"] = ["5"]
    server.ok(stale)
    assert server.rows(f"SELECT version FROM {guard}") == [{"version": 6}]


def test_concurrent_requests_are_serialised_and_all_applied(server):
    name = table(server, "id INTEGER PRIMARY KEY, n INTEGER")
    server.ok({"sql": f"INSERT INTO {name} VALUES (1, 0)"})
    statuses = []

    def bump():
        status, _, _ = server.api({"batch": [{"sql": f"SELECT n FROM {name}"},
                                             {"sql": f"UPDATE {name} SET n = n + 1"}]})
        statuses.append(status)

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [200] * 8
    assert server.rows(f"SELECT n FROM {name}") == [{"n": 8}]


# ---------------------------------------------------------------------------------------------------------------------
# What D1 refuses


@pytest.mark.parametrize("statement", ["BEGIN", "BEGIN TRANSACTION", "BEGIN IMMEDIATE", "COMMIT", "END", "ROLLBACK",
                                       "SAVEPOINT sp", "RELEASE sp", "ROLLBACK TO sp"])
def test_transaction_statements_are_refused_anywhere_in_the_batch(server, statement):
    name = table(server)
    error = server.refused({"batch": [{"sql": f"INSERT INTO {name} (v) VALUES (1)"}, {"sql": statement}]})
    assert error["code"] == 7500 and error["message"].endswith(": SQLITE_AUTH")
    assert "state.storage.transaction()" in error["message"]
    assert server.rows(f"SELECT count(*) AS n FROM {name}") == [{"n": 0}]
    error = server.refused({"sql": f"INSERT INTO {name} (v) VALUES (2); {statement}"})
    assert error["message"].endswith(": SQLITE_AUTH")


def test_attach_is_refused(server, tmp_path):
    error = server.refused({"sql": f"ATTACH DATABASE '{tmp_path / 'other.sqlite'}' AS other"})
    assert error == {"code": 7500, "message": "not authorized: SQLITE_AUTH"}
    assert not (tmp_path / "other.sqlite").exists()


@pytest.mark.parametrize("sql", ["SELECT * FROM _cf_KV", "SELECT count(*) FROM _cf_KV",
                                 "INSERT INTO _cf_KV VALUES ('k', x'00')", "UPDATE _cf_KV SET value = NULL",
                                 "DELETE FROM _cf_KV", "DROP TABLE _cf_KV", "CREATE TABLE _cf_mine (x)",
                                 "CREATE INDEX i_cf ON _cf_KV (value)", "SELECT * FROM _CF_kv",
                                 "SELECT * FROM pragma_table_info('_cf_KV')"])
def test_cf_tables_and_pragma_functions_are_not_authorised(server, sql):
    error = server.refused({"sql": sql})
    assert error["code"] == 7500 and error["message"].endswith(": SQLITE_AUTH"), error


def test_cf_kv_exists_and_shows_in_the_schema(server):
    tables = [r["name"] for r in server.rows("PRAGMA table_list")]
    assert "_cf_KV" in tables
    assert server.rows("SELECT name FROM sqlite_master WHERE name LIKE '\\_cf\\_%' ESCAPE '\\'") == [{"name": "_cf_KV"}]


@pytest.mark.parametrize("pragma", ["PRAGMA table_list", "PRAGMA table_info(sqlite_master)", "PRAGMA quick_check",
                                    "PRAGMA foreign_key_list(sqlite_master)", "PRAGMA foreign_key_check",
                                    "PRAGMA index_list(sqlite_master)", "PRAGMA optimize"])
def test_the_pragmas_d1_documents_are_allowed(server, pragma):
    server.ok({"sql": pragma})


@pytest.mark.parametrize("pragma", ["PRAGMA journal_mode = DELETE", "PRAGMA writable_schema = ON",
                                    "PRAGMA page_count", "PRAGMA user_version = 7", "PRAGMA synchronous = OFF"])
def test_other_pragmas_are_refused(server, pragma):
    error = server.refused({"sql": pragma})
    assert error == {"code": 7500, "message": "not authorized: SQLITE_AUTH"}


# ---------------------------------------------------------------------------------------------------------------------
# Foreign keys: always on, deferrable to the end of the request


def parent_child(server):
    parent = table(server, "id INTEGER PRIMARY KEY")
    child = table(server, f"id INTEGER PRIMARY KEY, parent INTEGER NOT NULL REFERENCES {parent}(id)")
    return parent, child


def test_foreign_keys_are_always_enforced(server):
    parent, child = parent_child(server)
    assert server.rows("PRAGMA foreign_keys") == [{"foreign_keys": 1}]
    error = server.refused({"sql": f"INSERT INTO {child} (parent) VALUES (42)"})
    assert error == {"code": 7500, "message": "FOREIGN KEY constraint failed: SQLITE_CONSTRAINT"}
    # "user queries cannot change this": turning them off, in the same request or an earlier one, changes nothing
    server.ok({"sql": "PRAGMA foreign_keys = off"})
    assert server.rows("PRAGMA foreign_keys") == [{"foreign_keys": 1}]
    server.refused({"sql": f"PRAGMA foreign_keys = off; INSERT INTO {child} (parent) VALUES (42)"})
    assert server.rows(f"SELECT count(*) AS n FROM {child}") == [{"n": 0}]


def test_defer_foreign_keys_defers_the_check_to_the_end_of_the_request(server):
    parent, child = parent_child(server)
    server.ok({"batch": [{"sql": "PRAGMA defer_foreign_keys = on"},
                         {"sql": f"INSERT INTO {child} (parent) VALUES (7)"},
                         {"sql": f"INSERT INTO {parent} (id) VALUES (7)"}]})
    assert server.rows(f"SELECT parent FROM {child}") == [{"parent": 7}]
    # still violated at the end: the whole request fails, nothing written
    error = server.refused({"batch": [{"sql": "PRAGMA defer_foreign_keys = on"},
                                      {"sql": f"INSERT INTO {parent} (id) VALUES (8)"},
                                      {"sql": f"INSERT INTO {child} (parent) VALUES (9)"}]})
    assert error["message"] == "FOREIGN KEY constraint failed: SQLITE_CONSTRAINT"
    assert server.rows(f"SELECT id FROM {parent} ORDER BY id") == [{"id": 7}]
    # the deferral ends with its request
    server.ok({"sql": "PRAGMA defer_foreign_keys = on"})
    server.refused({"sql": f"INSERT INTO {child} (parent) VALUES (9)"})


# ---------------------------------------------------------------------------------------------------------------------
# Limits


def test_at_most_100_bound_parameters_per_statement(server):
    hundred = ", ".join("?" for _ in range(100))
    raw = server.ok({"sql": f"SELECT {hundred}", "params": [str(i) for i in range(100)]}, endpoint="raw")
    assert raw[0]["results"]["rows"] == [[str(i) for i in range(100)]]
    error = server.refused({"sql": f"SELECT {hundred}, ?", "params": [str(i) for i in range(101)]})
    assert error == {"code": 7500, "message": "too many SQL variables: SQLITE_ERROR"}
    error = server.refused({"sql": "SELECT ?101", "params": [str(i) for i in range(101)]})
    assert error["code"] == 7500
    # the limit is per statement: a batch may carry many more
    server.ok({"batch": [{"sql": f"SELECT {hundred}", "params": [str(i) for i in range(100)]}] * 3})


def test_at_most_100_kb_per_statement(server):
    def statement(size):
        head = "SELECT '"
        return head + "x" * (size - len(head) - 1) + "'"

    assert len(statement(100_000).encode()) == 100_000
    server.ok({"sql": statement(100_000)})
    error = server.refused({"sql": statement(100_001)})
    assert error == {"code": 7500, "message": "statement too long: SQLITE_TOOBIG"}
    # per statement, not per request
    server.ok({"batch": [{"sql": statement(90_000)}, {"sql": statement(90_000)}]})
    assert len("é".encode()) == 2
    error = server.refused({"sql": "SELECT '" + "é" * 50_000 + "'"})
    assert error["message"] == "statement too long: SQLITE_TOOBIG"


def test_like_patterns_of_at_most_50_bytes_and_functions_of_at_most_32_arguments(server):
    name = table(server, "id INTEGER PRIMARY KEY, v TEXT")
    server.ok({"sql": f"INSERT INTO {name} (v) VALUES (?)", "params": ["x" * 60]})
    assert server.rows(f"SELECT count(*) AS n FROM {name} WHERE v LIKE ?", ["%" + "x" * 48 + "%"]) == [{"n": 1}]
    error = server.refused({"sql": f"SELECT count(*) FROM {name} WHERE v LIKE ?", "params": ["%" + "x" * 49 + "%"]})
    assert error == {"code": 7500, "message": "LIKE or GLOB pattern too complex: SQLITE_ERROR"}
    error = server.refused({"sql": f"SELECT count(*) FROM {name} WHERE v GLOB ?", "params": ["*" + "x" * 50]})
    assert error["message"] == "LIKE or GLOB pattern too complex: SQLITE_ERROR"
    assert server.rows("SELECT max(" + ", ".join(str(i) for i in range(32)) + ") AS m") == [{"m": 31}]
    error = server.refused({"sql": "SELECT max(" + ", ".join(str(i) for i in range(33)) + ")"})
    assert error == {"code": 7500, "message": "too many arguments on function max: SQLITE_ERROR"}


# ---------------------------------------------------------------------------------------------------------------------
# Values as JavaScript numbers, BLOBs as byte arrays


def test_values_come_back_as_javascript_would_print_them(server):
    name = table(server, "id INTEGER PRIMARY KEY, i INTEGER, r REAL, t TEXT, b BLOB")
    server.ok({"sql": f"""INSERT INTO {name} (i, r, t, b) VALUES
        (9007199254740992, 5.0, 'héllo ✓', x'00ff10'),
        (9007199254740993, 0.1, '', x''),
        (-9007199254740993, 1e21, NULL, NULL),
        (1152921504606846976, 1e-7, '9007199254740993', NULL), -- 2^60: JavaScript prints 1152921504606847000
        (123456789012345678, 123.456, 'null', NULL)"""})
    status, _, raw = server.api({"sql": f"SELECT i, r, t, b FROM {name} ORDER BY id"}, endpoint="raw")
    text = raw.decode()
    assert status == 200
    for literal in ['[9007199254740992,5,"héllo ✓",[0,255,16]]', '[9007199254740992,0.1,"",[]]',
                    '[-9007199254740992,1e+21,null,null]', '[1152921504606847000,1e-7,"9007199254740993",null]',
                    '[123456789012345680,123.456,"null",null]']:
        assert literal in text, (literal, text)
    rows = json.loads(raw)["result"][0]["results"]["rows"]
    assert rows[0][3] == [0, 255, 16]


def test_js_number_printing_matches_javascript():
    d1 = load_module()
    # Expected strings are what node prints for String(x) / JSON.stringify(x).
    cases = {0.0: "0", -0.0: "0", 1.0: "1", -1.5: "-1.5", 0.1: "0.1", 1e21: "1e+21", 1e20: "100000000000000000000",
             1.5e-7: "1.5e-7", 0.000001: "0.000001", 123e-20: "1.23e-18", 2.0 ** 53: "9007199254740992",
             2.0 ** 70: "1.1805916207174113e+21", 1 / 3: "0.3333333333333333", float("inf"): "null",
             float("nan"): "null", 5e-324: "5e-324", 1.7976931348623157e308: "1.7976931348623157e+308"}
    for value, expected in cases.items():
        assert d1.js_number(value) == expected, value
    assert d1.js_integer(2 ** 53 + 1) == "9007199254740992"
    assert d1.js_integer(-(2 ** 53)) == "-9007199254740992"
    assert d1.js_integer(2 ** 63 - 1) == "9223372036854776000"


@pytest.mark.skipif(not shutil.which("node"), reason="node is not installed")
def test_js_number_printing_agrees_with_node_on_random_values():
    """Against an independent implementation: node's own JSON.stringify, on doubles of every magnitude and on
    integers around and far beyond 2^53."""
    d1 = load_module()
    generator = random.Random(53)
    doubles = [generator.uniform(-1, 1) * 10 ** generator.randint(-330, 308) for _ in range(3000)]
    doubles += [float(generator.randint(1, 9)) * 10.0 ** e for e in range(-12, 25)]
    integers = [2 ** 53 + d for d in range(-3, 4)] + [generator.randint(-2 ** 64, 2 ** 64) for _ in range(500)]
    script = ("const v = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "console.log(JSON.stringify([v.d.map(x => String(x)), v.i.map(x => String(Number(x)))]));")
    payload = json.dumps({"d": [repr(x) for x in doubles], "i": [str(i) for i in integers]})
    # node parses each value from its Python text itself, so the comparison starts from the same double
    script = script.replace("v.d.map(x => String(x))", "v.d.map(x => String(Number(x)))")
    done = subprocess.run(["node", "-e", script], input=payload, capture_output=True, text=True, timeout=60)
    node_doubles, node_integers = json.loads(done.stdout)
    assert [d1.js_number(x) for x in doubles] == node_doubles
    assert [d1.js_integer(i) for i in integers] == node_integers


def test_meta_reports_changes_last_row_id_and_size(server):
    name = table(server, "id INTEGER PRIMARY KEY, v")
    results = server.ok({"batch": [{"sql": f"INSERT INTO {name} (v) VALUES (1), (2), (3)"},
                                   {"sql": f"SELECT * FROM {name}"},
                                   {"sql": f"DELETE FROM {name} WHERE id > 1"}]})
    insert, select, delete = (r["meta"] for r in results)
    assert (insert["changes"], insert["last_row_id"], insert["changed_db"], insert["rows_written"]) == (3, 3, True, 3)
    assert (select["changes"], select["changed_db"], select["rows_read"]) == (0, False, 3)
    assert (delete["changes"], delete["changed_db"]) == (2, True)
    assert insert["size_after"] == os.path.getsize(server.db_path) and insert["size_after"] % 4096 == 0
    assert select["served_by_primary"] is True and select["duration"] >= 0


# ---------------------------------------------------------------------------------------------------------------------
# Faults on request


def test_server_errors_on_request(server):
    server.control("POST", "faults", {"fault": "500"})
    server.control("POST", "faults", {"fault": "502"})
    server.control("POST", "faults", {"fault": "503"})
    status, _, raw = server.api({"sql": "SELECT 1"})
    assert status == 500 and json.loads(raw)["errors"][0]["code"] == 7500
    for expected in (502, 503):
        status, headers, raw = server.api({"sql": "SELECT 1"})
        assert status == expected and headers["Content-Type"].startswith("text/html")
        with pytest.raises(ValueError):
            json.loads(raw)
    assert server.control("GET", "faults") == {"queued": []}
    server.ok({"sql": "SELECT 1"})


def test_faulted_requests_change_nothing(server):
    name = table(server)
    for fault in ("429", "500", "502", "503", "notjson"):
        server.control("POST", "faults", {"fault": fault})
        status, _, _ = server.api({"sql": f"INSERT INTO {name} (v) VALUES ('{fault}')"})
        assert status != 200 or fault == "notjson"
    assert server.rows(f"SELECT count(*) AS n FROM {name}") == [{"n": 0}]


def test_a_body_that_is_not_json(server):
    server.control("POST", "faults", {"fault": "notjson"})
    status, headers, raw = server.api({"sql": "SELECT 1"})
    assert status == 200
    with pytest.raises(ValueError):
        json.loads(raw)


def test_a_slow_answer(server):
    server.control("POST", "faults", {"fault": "slow", "delay_ms": 700})
    started = time.monotonic()
    assert server.rows("SELECT 2 AS two") == [{"two": 2}]
    assert time.monotonic() - started >= 0.7
    started = time.monotonic()
    server.rows("SELECT 2 AS two")
    assert time.monotonic() - started < 0.5
    # a client that gives up first still finds the server answering the next request
    server.control("POST", "faults", {"fault": "slow", "delay_ms": 1500})
    with pytest.raises(socket.timeout):
        server.request("POST", server.path(), {"sql": "SELECT 1"}, {"Authorization": f"Bearer {TOKEN}"},
                       timeout=0.3)
    server.rows("SELECT 1")


@pytest.mark.parametrize("execute", [True, False])
def test_a_connection_cut_mid_answer(server, execute):
    name = table(server)
    server.control("POST", "faults", {"fault": "cut", "execute": execute})
    with pytest.raises(http.client.IncompleteRead):
        server.api({"sql": f"INSERT INTO {name} (v) VALUES ('cut'); SELECT * FROM {name}"})
    # executed (the client cannot tell) or not, the request was all or nothing
    assert server.rows(f"SELECT count(*) AS n FROM {name}") == [{"n": 1 if execute else 0}]


@pytest.mark.parametrize("execute", [True, False])
def test_a_malformed_status_line_after_running_the_request_or_before(server, execute):
    name = table(server)
    server.control("POST", "faults", {"fault": "badstatus", "execute": execute})
    with pytest.raises(http.client.HTTPException):
        server.api({"sql": f"INSERT INTO {name} (v) VALUES ('weird')"})
    assert server.rows(f"SELECT count(*) AS n FROM {name}") == [{"n": 1 if execute else 0}]
    log = server.control("GET", "requests")["log"]
    assert [entry["status"] for entry in log if entry["fault"] == "badstatus"] == [2000]


def test_a_fault_for_writes_only_lets_reads_pass_and_waits_for_a_write(server):
    name = table(server)
    server.control("POST", "faults", {"fault": "500", "writes_only": True})
    assert server.rows(f"SELECT count(*) AS n FROM {name}") == [{"n": 0}]
    server.ok({"batch": [{"sql": f"SELECT count(*) FROM {name}"}, {"sql": "PRAGMA table_info(t)"}]})
    status, _, _ = server.api({"batch": [{"sql": f"SELECT count(*) FROM {name}"}, {"sql": f"INSERT INTO {name} (v) VALUES ('x')"}]})
    assert status == 500
    assert server.control("GET", "faults") == {"queued": []}
    assert server.rows(f"SELECT count(*) AS n FROM {name}") == [{"n": 0}]


def test_a_huge_answer_is_a_well_formed_envelope_of_the_size_asked(server):
    server.control("POST", "faults", {"fault": "huge", "bytes": 300_000})
    status, _, raw = server.api({"sql": "SELECT 1"}, endpoint="raw")
    assert status == 200 and 300_000 <= len(raw) < 300_200
    answer = json.loads(raw)
    assert answer["success"] is True and answer["result"][0]["results"]["columns"] == ["a"]
    assert set(answer["result"][0]["results"]["rows"][0][0]) == {1}


@pytest.mark.parametrize("endpoint", ["query", "raw"])
def test_an_integer_beyond_2_53_injected_into_results(server, endpoint):
    server.control("POST", "faults", {"fault": "bigint"})
    status, _, raw = server.api({"sql": "SELECT 1 AS a, 2 AS b UNION ALL SELECT 3, 4"}, endpoint=endpoint)
    assert status == 200
    assert raw.count(b"9007199254740993") == 2  # the first value of each row
    assert b'"b":4' in raw or b",4]" in raw         # the others untouched
    server.control("POST", "faults", {"fault": "bigint", "value": 123456789012345678901})
    status, _, raw = server.api({"sql": "SELECT 1 AS a"}, endpoint=endpoint)
    assert b"123456789012345678901" in raw


def test_an_unknown_fault_is_refused_by_the_control_endpoint(server):
    status, _, _ = server.request("POST", "/test/faults", {"fault": "nope"})
    assert status == 400
    status, _, _ = server.request("POST", "/test/faults", {"fault": "429", "count": 0})
    assert status == 400


# ---------------------------------------------------------------------------------------------------------------------
# Counting requests


def test_requests_are_counted_faulted_and_refused_ones_included(server):
    server.control("POST", "faults", {"fault": "429"})
    server.api({"sql": "SELECT 1"})                       # 429
    server.api({"sql": "SELECT 1"}, token="wrong")        # 403
    server.api({"sql": "BEGIN"})                          # 400
    server.api({"batch": [{"sql": "SELECT ?", "params": ["a-secret-value"]}, {"sql": "SELECT 2"}]}, endpoint="raw")
    counted = server.control("GET", "requests")
    assert counted["count"] == 4
    assert [(e["endpoint"], e["status"], e["fault"]) for e in counted["log"]] == [
        ("query", 429, "429"), ("query", 403, None), ("query", 400, None), ("raw", 200, None)]
    assert counted["log"][3]["statements"] == ["SELECT ?", "SELECT 2"]
    assert "a-secret-value" not in json.dumps(counted) and TOKEN not in json.dumps(counted)
    server.control("GET", "requests")  # the control endpoints are not counted
    assert server.control("GET", "requests")["count"] == 4
    server.control("POST", "reset")
    assert server.control("GET", "requests") == {"count": 0, "log": []}


def test_bodies_are_kept_only_when_asked_for_a_replay(tmp_path):
    keeping = Server(tmp_path, "--keep-bodies")
    try:
        body = {"batch": [{"sql": "SELECT ?", "params": ["kept"]}]}
        keeping.api(body, endpoint="raw")
        entry = keeping.control("GET", "requests")["log"][0]
        assert json.loads(entry["body"]) == body and entry["endpoint"] == "raw"
    finally:
        keeping.stop()


def test_latency_is_added_to_every_request(server):
    server.control("POST", "latency", {"ms": 300})
    try:
        started = time.monotonic()
        server.api({"sql": "SELECT 1"}, token="wrong")
        server.rows("SELECT 1")
        assert time.monotonic() - started >= 0.6
    finally:
        server.control("POST", "latency", {"ms": 0})
    started = time.monotonic()
    server.rows("SELECT 1")
    assert time.monotonic() - started < 0.3


def test_answers_on_a_kept_alive_connection_are_not_held_back(server):
    """Without TCP_NODELAY each answer waited ~40 ms (Nagle's algorithm against the client's delayed ACK), which
    would swamp the 50 ms the benchmark adds as the distance to Cloudflare."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    body = json.dumps({"sql": "SELECT 1 AS one"}).encode()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    timings = []
    for _ in range(30):
        started = time.monotonic()
        connection.request("POST", server.path("raw"), body, headers)
        response = connection.getresponse()
        assert response.status == 200 and json.loads(response.read())["success"] is True
        timings.append(time.monotonic() - started)
    connection.close()
    assert sorted(timings)[len(timings) // 2] < 0.02, timings


# ---------------------------------------------------------------------------------------------------------------------
# The command line


def test_latency_flag(tmp_path):
    running = Server(tmp_path, "--latency-ms", "250")
    try:
        started = time.monotonic()
        assert running.rows("SELECT 1 AS one") == [{"one": 1}]
        assert time.monotonic() - started >= 0.25
    finally:
        running.stop()


@pytest.mark.skipif(not shutil.which("openssl"), reason="openssl is not installed")
def test_https_with_a_certificate_the_client_trusts(tmp_path):
    import ssl
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=60)
    running = Server(tmp_path, "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        context = ssl.create_default_context(cafile=str(cert))
        connection = http.client.HTTPSConnection("127.0.0.1", running.port, context=context, timeout=10)
        connection.request("POST", running.path(), json.dumps({"sql": "SELECT 1 AS one"}).encode(),
                           {"Authorization": f"Bearer {TOKEN}"})
        response = connection.getresponse()
        assert response.status == 200 and json.loads(response.read())["result"][0]["results"] == [{"one": 1}]
        with pytest.raises(ssl.SSLCertVerificationError):
            untrusting = http.client.HTTPSConnection("127.0.0.1", running.port, timeout=10,
                                                     context=ssl.create_default_context())
            untrusting.request("POST", running.path(), b"{}")
    finally:
        running.stop()


def test_a_new_file_is_created_with_cf_kv_and_kept_across_restarts(tmp_path):
    running = Server(tmp_path)
    try:
        assert running.db_path.exists()
        running.ok({"sql": "CREATE TABLE kept (v); INSERT INTO kept VALUES ('yes')"})
    finally:
        running.stop()
    with sqlite3.connect(running.db_path) as direct:
        names = {r[0] for r in direct.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"_cf_KV", "kept"} <= names and "d1_migrations" not in names
    again = Server(tmp_path, database=running.database)
    try:
        assert again.rows("SELECT v FROM kept") == [{"v": "yes"}]
    finally:
        again.stop()


def test_wrangler_migrations_flag_adds_d1_migrations_as_wrangler_creates_it(tmp_path):
    running = Server(tmp_path, "--wrangler-migrations")
    try:
        columns = running.rows("PRAGMA table_info(d1_migrations)")
        assert [(c["name"], c["type"], c["notnull"], c["pk"]) for c in columns] == [
            ("id", "INTEGER", 0, 1), ("name", "TEXT", 0, 0), ("applied_at", "TIMESTAMP", 1, 0)]
        running.ok({"sql": "INSERT INTO d1_migrations (name) VALUES ('0001_init.sql')"})
        row = running.rows("SELECT id, name, applied_at FROM d1_migrations")[0]
        assert row["id"] == 1 and row["name"] == "0001_init.sql" and len(row["applied_at"]) == 19
    finally:
        running.stop()


@pytest.mark.parametrize("args, env, message", [
    (["--account", ACCOUNT, "--database", str(uuid.uuid4())], {}, "holds no token"),
    (["--account", ACCOUNT, "--database", "db-1"], {"D1_TEST_TOKEN": "t"}, "must be a UUID"),
    (["--account", "a" * 33, "--database", str(uuid.uuid4())], {"D1_TEST_TOKEN": "t"}, "32 characters"),
])
def test_the_command_line_refuses_bad_settings(tmp_path, args, env, message):
    environment = {k: v for k, v in os.environ.items() if k != "D1_TEST_TOKEN"}
    environment.update(env)
    done = subprocess.run([sys.executable, str(SERVER), "--db", str(tmp_path / "x.sqlite"), "--token-env",
                           "D1_TEST_TOKEN", *args], capture_output=True, text=True, env=environment, timeout=20)
    assert done.returncode == 2 and message in done.stderr and done.stdout == ""


def test_the_server_ends_with_its_parent(tmp_path):
    parent = subprocess.Popen(["sleep", "60"])
    running = Server(tmp_path, "--parent-pid", str(parent.pid))
    try:
        assert running.rows("SELECT 1 AS one") == [{"one": 1}]
        parent.send_signal(signal.SIGTERM)
        parent.wait()
        running.process.wait(timeout=5)
    finally:
        running.stop()
        parent.kill()


# ---------------------------------------------------------------------------------------------------------------------
# ops/lib/d1.sh


ROOT = HERE.parent.parent


def run_bash(script, timeout=60):
    prelude = f"set -euo pipefail\nGATEHOUSE_ROOT={ROOT}\nsource {ROOT}/ops/lib/d1.sh\n"
    # A shell of its own: without the server ops/test started for the Swift tests (start_test_d1 would reuse it).
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith("GATEHOUSE_TEST_D1_") and key != "CLOUDFLARE_API_TOKEN"}
    return subprocess.run(["bash", "-c", prelude + script], capture_output=True, text=True, timeout=timeout, env=environment)


def gone(pid, within=8.0):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_start_test_d1_exports_a_working_api_and_keeps_the_earlier_exit_trap(tmp_path):
    marker = tmp_path / "earlier-trap-ran"
    done = run_bash(f"""
trap "echo 'it'\\''s the earlier trap' > {marker}" EXIT   # as start_test_postgres leaves it, quotes and all
start_test_d1 --wrangler-migrations
python3 - <<'PY'
import json, os
print(json.dumps({{k: v for k, v in os.environ.items() if k.startswith(("GATEHOUSE_TEST_D1", "CLOUDFLARE"))}}))
PY
tr '\\0' ' ' < "/proc/$GATEHOUSE_TEST_D1_PID/cmdline"; echo
stop_test_d1
stop_test_d1
start_test_d1
echo "second $GATEHOUSE_TEST_D1_PID $GATEHOUSE_TEST_D1_DIR"
""")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    env = json.loads(lines[0])
    command_line, second = lines[1], lines[2]
    assert env["CLOUDFLARE_API_TOKEN"] == env["GATEHOUSE_TEST_D1_TOKEN"] and len(env["CLOUDFLARE_API_TOKEN"]) == 48
    assert env["CLOUDFLARE_API_TOKEN"] not in command_line and "--parent-pid" in command_line
    assert len(env["GATEHOUSE_TEST_D1_ACCOUNT"]) == 32 and uuid.UUID(env["GATEHOUSE_TEST_D1_DATABASE"])
    assert env["GATEHOUSE_TEST_D1_URL"].startswith("http://127.0.0.1:") and env["GATEHOUSE_TEST_D1_URL"].endswith(
        "/client/v4")
    assert env["GATEHOUSE_TEST_D1_CONTROL"] == env["GATEHOUSE_TEST_D1_URL"].replace("/client/v4", "/test")
    # stopped: the server gone, its directory removed; the EXIT trap stopped the second one and ran the earlier trap
    assert gone(int(env["GATEHOUSE_TEST_D1_PID"])) and not Path(env["GATEHOUSE_TEST_D1_DIR"]).exists()
    _, pid, directory = second.split()
    assert gone(int(pid)) and not Path(directory).exists()
    assert marker.read_text() == "it's the earlier trap\n"


def test_the_exported_settings_reach_the_api(tmp_path):
    done = run_bash("""
start_test_d1
python3 - <<'PY'
import json, os, urllib.request
url = (f"{os.environ['GATEHOUSE_TEST_D1_URL']}/accounts/{os.environ['GATEHOUSE_TEST_D1_ACCOUNT']}/d1/database/"
       f"{os.environ['GATEHOUSE_TEST_D1_DATABASE']}/raw")
request = urllib.request.Request(url, data=json.dumps({"sql": "SELECT name FROM sqlite_master"}).encode(),
                                 headers={"Authorization": "Bearer " + os.environ["CLOUDFLARE_API_TOKEN"]})
print(json.load(urllib.request.urlopen(request))["result"][0]["results"]["rows"])
print(urllib.request.urlopen(os.environ["GATEHOUSE_TEST_D1_CONTROL"] + "/requests").read().decode())
PY
""")
    assert done.returncode == 0, done.stderr
    rows, counted = done.stdout.splitlines()
    assert rows == "[['_cf_KV']]"
    assert json.loads(counted)["count"] == 1


def test_a_server_whose_exit_trap_was_replaced_still_ends_with_its_shell(tmp_path):
    done = run_bash("""
start_test_d1
trap 'true' EXIT   # a later start_test_postgres would replace the trap like this
echo "$GATEHOUSE_TEST_D1_PID $GATEHOUSE_TEST_D1_DIR"
""")
    assert done.returncode == 0, done.stderr
    pid, directory = done.stdout.split()
    try:
        assert gone(int(pid))
    finally:
        assert directory.startswith("/tmp/gatehouse-d1.")
        subprocess.run(["rm", "-rf", directory], check=True)  # what stop_test_d1 would have removed
