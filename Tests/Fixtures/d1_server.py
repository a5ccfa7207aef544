#!/usr/bin/env python3
"""A local stand-in for Cloudflare D1's REST API, for Gatehouse's tests: the two query endpoints Gatehouse calls,
answered over a real SQLite file the way Cloudflare documents them (and, where the documents are silent, the way D1 is
seen to answer), plus faults on request and a request counter. Python 3 standard library only.

Follows Cloudflare's API reference and D1's documentation:
  - Query D1 Database, POST {base}/accounts/{account_id}/d1/database/{database_id}/query: body {"sql", "params"} or
    {"batch": [{"sql", "params"}, ...]}; "sql" may hold several statements joined by semicolons, run as a batch;
    params typed as strings. Answer: the v4 envelope with result = one QueryResult {meta, results, success} per
    statement, results the rows as objects; meta {changed_db, changes, duration, last_row_id, rows_read, rows_written,
    served_by_colo, served_by_primary, served_by_region (WNAM|ENAM|WEUR|EEUR|APAC|OC), size_after,
    timings {sql_duration_ms}}; account_id at most 32 characters; token permission D1 Read or D1 Write:
      https://developers.cloudflare.com/api/resources/d1/subresources/database/methods/query/
  - Raw D1 Database query, POST …/raw: the same, with results {columns: [...], rows: [[...]]}:
      https://developers.cloudflare.com/api/resources/d1/subresources/database/methods/raw/
    (the same types in Cloudflare's generated SDK: cloudflare/cloudflare-typescript src/resources/d1/database/database.ts)
  - The v4 envelope {result, success, errors: [{code, message}], messages} and error codes ≥ 1000:
      https://developers.cloudflare.com/fundamentals/api/ (every method page above lists errors/messages/result/success)
  - D1 limits: 100 bound parameters per query, 100,000 bytes per SQL statement, 2 MB per string/BLOB/row, 32
    arguments per SQL function, 50 bytes per LIKE or GLOB pattern, 10 GB per database (500 MB free), 30 s per query
    (the last two not enforced here):
      https://developers.cloudflare.com/d1/platform/limits/
  - Foreign keys always enforced, as with PRAGMA foreign_keys = on; "user queries cannot change this"; PRAGMA
    defer_foreign_keys = on defers the checks to the end of the transaction (here: the end of the request):
      https://developers.cloudflare.com/d1/sql-api/foreign-keys/
  - The PRAGMAs D1 accepts (table_list, table_info, table_xinfo, index_list, index_info, index_xinfo, quick_check,
    foreign_key_check, foreign_key_list, case_sensitive_like, ignore_check_constraints, legacy_alter_table,
    recursive_triggers, reverse_unordered_selects, foreign_keys, defer_foreign_keys, optimize); PRAGMA table_list shows
    D1's own table _cf_KV:
      https://developers.cloudflare.com/d1/sql-api/sql-statements/
  - Invalid SQL answers HTTP 400 (was 500 before 2024-04-15): D1 changelog,
      https://developers.cloudflare.com/d1/platform/changelog/ (cloudflare/cloudflare-docs#13934)
  - Rate limit: 1200 requests / 5 minutes; past it HTTP 429 with Retry-After (seconds, rounded up):
      https://developers.cloudflare.com/fundamentals/api/reference/limits/
  - Return objects (meta as the Worker binding shows it, with served_by):
      https://developers.cloudflare.com/d1/worker-api/return-object/
Where the documents are silent, as D1 is seen to answer:
  - SQL errors: HTTP 400, {"result": [], "success": false, "errors": [{"code": 7500, "message": "<SQLite message>:
    SQLITE_<CODE>"}], "messages": []}; a read of _cf_KV, a pragma table-valued function (pragma_table_info(…)) or
    BEGIN/SAVEPOINT is "not authorized: SQLITE_AUTH" (BEGIN with Durable Objects' longer message, workerd#2866):
      https://github.com/store-craft/storecraft/issues/93 (a real /query answer, meta and error),
      https://github.com/better-auth/better-auth/issues/10976, https://github.com/cloudflare/workerd/pull/2866,
      https://github.com/nuxt-hub/core/issues/81
  - A wrong database id: "The database <id> could not be found" code 7404; a malformed one: "The request is malformed:
    failed to decode id" code 7400; an account the token may not use: code 7403 "The given account is not valid or is
    not authorized to access this service" (HTTP 403):
      https://github.com/cloudflare/workers-sdk/issues/5523, https://github.com/cloudflare/workers-sdk/issues/15553
  - A bad token: HTTP 403, code 10000 "Authentication error"; rate limited: code 971 "Please wait and consider
    throttling your request speed".
  - PRAGMA foreign_keys = off is accepted and changes nothing (https://github.com/cloudflare/workers-sdk/issues/8512).
  - BLOBs come back as arrays of byte numbers (https://github.com/cloudflare/workers-sdk/issues/8642).
  - Numbers are JavaScript numbers: an integer beyond 2^53 comes back rounded to the nearest double, printed as
    JavaScript prints it (2^53 + 1 → 9007199254740992); a REAL with no fraction prints without one (5.0 → 5).
  - wrangler's migrations table, as `wrangler d1 migrations apply` creates it (workers-sdk
    packages/wrangler/src/d1/migrations/helpers.ts): d1_migrations(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT
    UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL).
Approximations: rows_read and rows_written are counted from rows returned and changes (SQLite's per-statement VM
counters are not reachable from Python); duration is this process's wall time per statement.

Serves under /client/v4, so the base URL is http://127.0.0.1:<port>/client/v4. Each request runs all its statements in
one transaction (BEGIN IMMEDIATE … COMMIT; any failure rolls all back), one request at a time, as D1 does.

Test-only endpoints (no token; never under /client/v4):
  GET  /test/requests   → {"count": N, "log": [{"endpoint", "status", "fault", "statements": [sql, ...]}]}  (API
                          requests since start or reset, faulted and refused ones included; SQL only, never params;
                          with --keep-bodies each entry also holds "body", the request as sent, for ops/bench's replay)
  POST /test/reset      → clears the count, the log and the fault queue (the database is untouched)
  POST /test/faults     {"fault": F, "count": N (default 1), ...} queues a fault for the next N API requests:
                          "429" (+ "retry_after" seconds, default 1), "500", "502", "503" (not executed),
                          "slow" (+ "delay_ms", default 2000; then answered normally), "cut" (headers and half the
                          body, then the connection closed; "execute": true by default, false to cut before running),
                          "notjson" (HTTP 200, an HTML body; not executed), "bigint" (executed; every row's first
                          value replaced by the raw number "value", default 9007199254740993), "badstatus" (a malformed
                          status line, HTTP/1.1 2000 Weird, then the connection closed; "execute": true by default, as a
                          broken proxy that forwarded the request would), "huge" (HTTP 200 with a well-formed envelope
                          whose one row holds a BLOB of "bytes" bytes of JSON, default 2000000, as a hostile endpoint
                          would send; not executed);
                          any fault with "writes_only": true waits for a request that writes (a statement that is not a
                          SELECT, PRAGMA or WITH), and the requests before it pass untouched
  GET  /test/faults     → the queue;  DELETE /test/faults → empties it
  POST /test/latency    {"ms": N} sets the delay added to every API request (as --latency-ms)
  POST /test/databases  {"wrangler_migrations": bool} → {"database": UUID, "file": PATH}: one more D1 database of the
                          same account, a fresh SQLite file beside --db (a test's own store); unknown ids stay 404

Usage: python3 d1_server.py --db FILE --account ACCOUNT_ID --database DATABASE_UUID [--port 0]
         [--token-env CLOUDFLARE_API_TOKEN] [--latency-ms 0] [--wrangler-migrations] [--parent-pid PID]
         [--keep-bodies] [--tls-cert PEM --tls-key PEM]
The token is read from the environment variable --token-env names (never a flag, so never in ps). Prints "PORT <n>"
once listening, then serves until killed (or until --parent-pid is gone).
"""
import argparse
import decimal
import json
import math
import os
import re
import socket
import sqlite3
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROUTE = re.compile(r"^/client/v4/accounts/([^/]+)/d1/database/([^/]+)/(query|raw)/?$")

MAX_BOUND_PARAMETERS = 100      # D1 limits: "Maximum bound parameters per query"
MAX_STATEMENT_BYTES = 100_000   # D1 limits: "Maximum SQL statement length"
MAX_VALUE_BYTES = 2_000_000     # D1 limits: "Maximum string, BLOB or table row size"
MAX_FUNCTION_ARGUMENTS = 32     # D1 limits: "Maximum arguments per SQL function"
MAX_LIKE_PATTERN_BYTES = 50     # D1 limits: "Maximum characters (bytes) in a LIKE or GLOB pattern"
MAX_BODY_BYTES = 100 * 1024 * 1024
SAFE_INTEGER = 2 ** 53          # beyond it, a JavaScript number cannot hold every integer

ALLOWED_PRAGMAS = {
    "table_list", "table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "quick_check",
    "foreign_key_check", "foreign_key_list", "case_sensitive_like", "ignore_check_constraints", "legacy_alter_table",
    "recursive_triggers", "reverse_unordered_selects", "foreign_keys", "defer_foreign_keys", "optimize",
}

TRANSACTION_MESSAGE = (
    "To execute a transaction, please use the state.storage.transaction() or state.storage.transactionSync() APIs "
    "instead of the SQL BEGIN TRANSACTION or SAVEPOINT statements. The JavaScript API is safer because it will "
    "automatically roll back on exceptions, and because it interacts correctly with Durable Objects' automatic atomic "
    "write coalescing."
)

# SQLite's primary result codes, by number, for the ": SQLITE_<CODE>" suffix D1 puts on its messages.
PRIMARY_CODES = {
    1: "SQLITE_ERROR", 2: "SQLITE_INTERNAL", 3: "SQLITE_PERM", 4: "SQLITE_ABORT", 5: "SQLITE_BUSY", 6: "SQLITE_LOCKED",
    7: "SQLITE_NOMEM", 8: "SQLITE_READONLY", 9: "SQLITE_INTERRUPT", 10: "SQLITE_IOERR", 11: "SQLITE_CORRUPT",
    12: "SQLITE_NOTFOUND", 13: "SQLITE_FULL", 14: "SQLITE_CANTOPEN", 15: "SQLITE_PROTOCOL", 16: "SQLITE_EMPTY",
    17: "SQLITE_SCHEMA", 18: "SQLITE_TOOBIG", 19: "SQLITE_CONSTRAINT", 20: "SQLITE_MISMATCH", 21: "SQLITE_MISUSE",
    22: "SQLITE_NOLFS", 23: "SQLITE_AUTH", 24: "SQLITE_FORMAT", 25: "SQLITE_RANGE", 26: "SQLITE_NOTADB",
}

# The actions whose authorizer arguments name a table: action → index (0 or 1) of the argument holding its name.
TABLE_ARGUMENT = {
    sqlite3.SQLITE_READ: 0, sqlite3.SQLITE_INSERT: 0, sqlite3.SQLITE_UPDATE: 0, sqlite3.SQLITE_DELETE: 0,
    sqlite3.SQLITE_CREATE_TABLE: 0, sqlite3.SQLITE_DROP_TABLE: 0, sqlite3.SQLITE_CREATE_TEMP_TABLE: 0,
    sqlite3.SQLITE_DROP_TEMP_TABLE: 0, sqlite3.SQLITE_ANALYZE: 0, sqlite3.SQLITE_CREATE_INDEX: 1,
    sqlite3.SQLITE_DROP_INDEX: 1, sqlite3.SQLITE_CREATE_TRIGGER: 1, sqlite3.SQLITE_DROP_TRIGGER: 1,
    sqlite3.SQLITE_ALTER_TABLE: 1,
}


# ---------------------------------------------------------------------------------------------------------------------
# JSON as JavaScript writes it


class RawNumber:
    """A number written into the answer exactly as given (the "bigint" fault: what no JavaScript server would send)."""

    def __init__(self, text: str):
        self.text = text


def js_number(value) -> str:
    """Number.prototype.toString for a double (ECMA-262 Number::toString), as JSON.stringify writes numbers."""
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        return "null"  # JSON.stringify(Infinity) === "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits_tuple = decimal.Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(str(d) for d in digits_tuple.digits)
    k = len(digits)
    n = k + digits_tuple.exponent  # value = 0.digits × 10^n
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        text = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + text


def js_integer(value: int) -> str:
    return str(value) if -SAFE_INTEGER <= value <= SAFE_INTEGER else js_number(float(value))


def to_json(value) -> str:
    """Serialises as JSON.stringify would for the values a D1 answer holds."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, RawNumber):
        return value.text
    if isinstance(value, int):
        return js_integer(value)
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "[" + ",".join(str(b) for b in bytes(value)) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(str(k), ensure_ascii=False) + ":" + to_json(v) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(to_json(v) for v in value) + "]"
    raise TypeError(f"not serialisable: {type(value).__name__}")


# ---------------------------------------------------------------------------------------------------------------------
# Requests and their statements


class D1Error(Exception):
    """An answer other than success: HTTP status, Cloudflare error code, message."""

    def __init__(self, status: int, code: int, message: str, headers=None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}


def malformed(detail: str) -> D1Error:
    return D1Error(400, 7400, f"The request is malformed: {detail}")


def blank(statement: str) -> bool:
    """True for a statement holding only whitespace, comments and semicolons."""
    text = statement
    while True:
        text = text.lstrip().lstrip(";").lstrip()
        if text.startswith("--"):
            newline = text.find("\n")
            text = "" if newline < 0 else text[newline + 1:]
        elif text.startswith("/*"):
            end = text.find("*/")
            text = "" if end < 0 else text[end + 2:]
        else:
            return text == ""


def split_statements(sql: str):
    """The statements of a string joined by semicolons, quotes, comments and trigger bodies respected."""
    statements, start = [], 0
    for index, char in enumerate(sql):
        if char == ";" and sqlite3.complete_statement(sql[start:index + 1]):
            statements.append(sql[start:index + 1])
            start = index + 1
    statements.append(sql[start:])
    return [s.strip() for s in statements if not blank(s)]


def bind_value(value):
    """A JSON parameter as D1 binds it: strings as TEXT, numbers as JavaScript numbers, booleans as 0/1, null as NULL,
    an array of byte numbers as a BLOB."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, int):
        return value if -SAFE_INTEGER <= value <= SAFE_INTEGER else int(float(value))
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) <= SAFE_INTEGER else value
    if isinstance(value, list) and all(isinstance(b, int) and not isinstance(b, bool) and 0 <= b <= 255 for b in value):
        return bytes(value)
    raise malformed(f"a parameter must be a string, number, boolean, null or array of bytes, not {to_json(value)[:40]}")


def parse_body(raw: bytes):
    """[(sql, [params])] from a /query or /raw body, one entry per statement."""
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise malformed("the body is not JSON")
    if not isinstance(body, dict):
        raise malformed("the body must be an object")
    if "batch" in body:
        batch = body["batch"]
        if not isinstance(batch, list) or not batch:
            raise malformed("batch must be a non-empty array of {sql, params}")
        items = batch
    else:
        items = [body]
    work = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("sql"), str):
            raise malformed("every query needs a string sql")
        params = item.get("params", [])
        if params is None:
            params = []
        if not isinstance(params, list):
            raise malformed("params must be an array")
        bound = [bind_value(p) for p in params]
        statements = split_statements(item["sql"])
        if not statements:
            raise malformed("no SQL statements")
        if bound and len(statements) > 1:
            raise malformed("params cannot be bound to several statements in one sql string; send them as a batch")
        work.extend((s, bound) for s in statements)
    return work


class Database:
    """The SQLite file behind the API; one request at a time, each in its own transaction."""

    def __init__(self, path: str, wrangler_migrations: bool):
        self.path = path
        self.lock = threading.Lock()
        self.user_sql = False     # the authorizer judges only the client's statements
        self.denied = None        # why the authorizer last said no
        # No statement cache: a cached statement is not authorised again, so the client's "COMMIT" would reuse ours.
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, cached_statements=0)
        self.conn.text_factory = lambda b: b.decode("utf-8", "replace")
        self.conn.execute("PRAGMA foreign_keys = ON")  # outside any transaction, once: then no statement can change it
        self.conn.execute("PRAGMA busy_timeout = 5000")
        self.conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, MAX_BOUND_PARAMETERS)
        self.conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_STATEMENT_BYTES)
        self.conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        self.conn.setlimit(sqlite3.SQLITE_LIMIT_FUNCTION_ARG, MAX_FUNCTION_ARGUMENTS)
        self.conn.setlimit(sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, MAX_LIKE_PATTERN_BYTES)
        # D1's own table, present in every D1 database (PRAGMA table_list in D1's SQL statements page).
        self.conn.execute("CREATE TABLE IF NOT EXISTS _cf_KV (\n        key TEXT PRIMARY KEY,\n        value BLOB\n"
                          "      ) WITHOUT ROWID")
        if wrangler_migrations:
            self.conn.execute("CREATE TABLE IF NOT EXISTS d1_migrations(\n\t\tid         INTEGER PRIMARY KEY "
                              "AUTOINCREMENT,\n\t\tname       TEXT UNIQUE,\n\t\tapplied_at TIMESTAMP DEFAULT "
                              "CURRENT_TIMESTAMP NOT NULL\n);")
        self.conn.set_authorizer(self.authorize)

    def authorize(self, action, arg1, arg2, db_name, trigger):
        if not self.user_sql:
            return sqlite3.SQLITE_OK
        if action in (sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT):
            self.denied = "transaction"
            return sqlite3.SQLITE_DENY
        if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() not in ALLOWED_PRAGMAS:
            return sqlite3.SQLITE_DENY
        index = TABLE_ARGUMENT.get(action)
        if index is not None:
            table = ((arg1, arg2)[index] or "").lower()
            if table.startswith("_cf_") or (action == sqlite3.SQLITE_READ and table.startswith("pragma_")):
                return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    def internal(self, sql: str):
        return self.conn.execute(sql).fetchall()

    def size(self) -> int:
        return self.internal("PRAGMA page_count")[0][0] * self.internal("PRAGMA page_size")[0][0]

    def run(self, work, raw: bool):
        """Runs every statement in one transaction: all their results, or a D1Error and nothing changed."""
        with self.lock:
            self.internal("BEGIN IMMEDIATE")
            try:
                results = [self.statement(sql, params, raw) for sql, params in work]
                self.internal("COMMIT")  # deferred foreign keys are checked here
            except BaseException as error:
                if self.conn.in_transaction:
                    self.internal("ROLLBACK")
                if isinstance(error, (sqlite3.Error, D1Error)):
                    raise self.as_d1_error(error)
                raise
            size = self.size()
            for result in results:
                result["meta"]["size_after"] = size
            return results

    def statement(self, sql: str, params, raw: bool):
        if len(sql.encode("utf-8")) > MAX_STATEMENT_BYTES:
            raise D1Error(400, 7500, "statement too long: SQLITE_TOOBIG")
        schema_before = self.internal("PRAGMA schema_version")[0][0]
        changes_before = self.conn.total_changes
        started = time.perf_counter()
        self.user_sql, self.denied = True, None
        try:
            cursor = self.conn.cursor()
            cursor.execute(sql, params)
            rows = cursor.fetchall()
            columns = [d[0] for d in cursor.description] if cursor.description else []
            last_row_id = cursor.lastrowid or 0
        finally:
            self.user_sql = False
        elapsed_ms = (time.perf_counter() - started) * 1000
        changes = self.conn.total_changes - changes_before
        changed = changes > 0 or self.internal("PRAGMA schema_version")[0][0] != schema_before
        meta = {
            "served_by": "v3-prod", "served_by_region": "WEUR", "served_by_colo": "LHR", "served_by_primary": True,
            "timings": {"sql_duration_ms": round(elapsed_ms, 4)}, "duration": round(elapsed_ms, 4),
            "changes": changes, "last_row_id": last_row_id, "changed_db": changed, "size_after": 0,
            "rows_read": len(rows) + changes, "rows_written": changes,
        }
        if raw:
            results = {"columns": columns, "rows": [list(r) for r in rows]}
        else:
            results = [dict(zip(columns, r)) for r in rows]
        return {"results": results, "success": True, "meta": meta}

    def as_d1_error(self, error) -> D1Error:
        if isinstance(error, D1Error):
            return error
        if isinstance(error, sqlite3.DataError) and "too large" in str(error):
            return D1Error(400, 7500, "statement too long: SQLITE_TOOBIG")
        if isinstance(error, sqlite3.ProgrammingError) and "bindings" in str(error):
            return D1Error(400, 7500, "Wrong number of parameter bindings for SQL query.")
        code = getattr(error, "sqlite_errorcode", None)
        name = PRIMARY_CODES.get(code & 0xFF, "SQLITE_ERROR") if isinstance(code, int) else "SQLITE_ERROR"
        if name == "SQLITE_AUTH" and self.denied == "transaction":
            return D1Error(400, 7500, f"{TRANSACTION_MESSAGE}: SQLITE_AUTH")
        return D1Error(400, 7500, f"{error}: {name}")


# ---------------------------------------------------------------------------------------------------------------------
# Faults, counting, HTTP


class State:
    def __init__(self, database: Database, token: str, account: str, database_id: str, latency_ms: int):
        self.database, self.token, self.account, self.database_id = database, token, account, database_id
        self.databases = {database_id: database}
        self.directory = os.path.dirname(os.path.abspath(database.path))
        self.latency_ms = latency_ms
        self.keep_bodies = False
        self.lock = threading.Lock()
        self.count = 0
        self.log = []
        self.faults = []  # [{"fault": kind, "count": remaining, ...}]

    def next_fault(self, writes):
        """The fault for this request, if any; `writes()` says whether it writes (asked only for a "writes_only" one)."""
        with self.lock:
            if not self.faults or (self.faults[0].get("writes_only") and not writes()):
                return None
            fault = dict(self.faults[0])
            self.faults[0]["count"] -= 1
            if self.faults[0]["count"] <= 0:
                self.faults.pop(0)
            return fault


FAULTS = {"429", "500", "502", "503", "slow", "cut", "notjson", "bigint", "badstatus", "huge"}
READS = ("SELECT", "PRAGMA", "WITH", "VALUES", "EXPLAIN")


def writes(raw_body: bytes) -> bool:
    """Whether a request's statements include one that writes (a malformed body does not)."""
    try:
        work = parse_body(raw_body)
    except D1Error:
        return False
    return any(not sql.lstrip("( \n\t").upper().startswith(READS) for sql, _ in work)


def envelope_error(code: int, message: str, result=None):
    return {"result": result, "success": False, "errors": [{"code": code, "message": message}], "messages": []}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm and the client's delayed ACK
    # add ~40 ms to every answer on a kept-alive connection, which would swamp the latency the benchmark sets.
    disable_nagle_algorithm = True
    state: State = None

    def log_message(self, fmt, *args):  # quiet
        pass

    def body(self) -> bytes:
        """The request body, read whatever the answer will be, so a kept-alive connection stays in step."""
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY_BYTES:
            self.close_connection = True  # the body is left unread: the connection cannot carry another request
            raise D1Error(413 if length > 0 else 400, 7400, "The request is malformed: bad Content-Length")
        return self.rfile.read(length) if length else b""

    def send_bytes(self, status: int, data: bytes, content_type="application/json; charset=UTF-8", headers=None,
                   cut=False):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if cut:
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self.wfile.write(data)

    def send_json(self, status: int, payload, headers=None, cut=False):
        self.send_bytes(status, to_json(payload).encode("utf-8"), headers=headers, cut=cut)

    # -- test endpoints

    def test_endpoint(self, method: str):
        state = self.state
        path = self.path.split("?")[0].rstrip("/")
        try:
            raw = self.body()
            body = json.loads(raw or b"{}") if method == "POST" else {}
        except D1Error:
            self.send_json(400, {"error": "bad Content-Length"})
            return
        except ValueError:
            self.send_json(400, {"error": "the body is not JSON"})
            return
        if path == "/test/requests" and method == "GET":
            with state.lock:
                self.send_json(200, {"count": state.count, "log": list(state.log)})
        elif path == "/test/reset" and method == "POST":
            with state.lock:
                state.count, state.log, state.faults = 0, [], []
            self.send_json(200, {})
        elif path == "/test/faults" and method == "GET":
            with state.lock:
                self.send_json(200, {"queued": list(state.faults)})
        elif path == "/test/faults" and method == "DELETE":
            with state.lock:
                state.faults = []
            self.send_json(200, {})
        elif path == "/test/faults" and method == "POST":
            kind = str(body.get("fault", ""))
            count = body.get("count", 1)
            if kind not in FAULTS or not isinstance(count, int) or count < 1:
                self.send_json(400, {"error": f"fault must be one of {sorted(FAULTS)}, count a positive integer"})
                return
            fault = {"fault": kind, "count": count}
            for key in ("retry_after", "delay_ms", "execute", "value", "bytes", "writes_only"):
                if key in body:
                    fault[key] = body[key]
            with state.lock:
                state.faults.append(fault)
                self.send_json(200, {"queued": list(state.faults)})
        elif path == "/test/databases" and method == "POST":
            database_id = str(uuid.uuid4())
            file = os.path.join(state.directory, database_id + ".sqlite")
            database = Database(file, bool(body.get("wrangler_migrations", False)))
            with state.lock:
                state.databases[database_id] = database
            self.send_json(200, {"database": database_id, "file": file})
        elif path == "/test/latency" and method == "POST":
            ms = body.get("ms")
            if not isinstance(ms, int) or ms < 0:
                self.send_json(400, {"error": "ms must be a non-negative integer"})
                return
            state.latency_ms = ms
            self.send_json(200, {"ms": ms})
        else:
            self.send_json(404, {"error": "not_found"})

    # -- the API

    def handle_any(self, method: str):
        if self.path.startswith("/test/"):
            self.test_endpoint(method)
            return
        state = self.state
        path = self.path.split("?")[0]
        match = ROUTE.match(path)
        entry = {"endpoint": match.group(3) if match else path, "status": None, "fault": None, "statements": []}
        with state.lock:
            state.count += 1
            state.log.append(entry)
            del state.log[:-500]
        if state.latency_ms:
            time.sleep(state.latency_ms / 1000)
        try:
            self.api(method, match, entry)
        except D1Error as error:
            entry["status"] = error.status
            self.send_json(error.status, envelope_error(error.code, error.message, [] if error.code == 7500 else None),
                           headers=error.headers)

    def api(self, method: str, match, entry):
        state = self.state
        raw_body = self.body()
        if state.keep_bodies:
            entry["body"] = raw_body.decode("utf-8", "replace")
        if not match:
            raise D1Error(404, 7003, f"Could not route to {self.path.split('?')[0]}, perhaps your object identifier "
                                     "is invalid?")
        if method != "POST":
            raise D1Error(405, 7001, f"Method {method} not available for that URI.")
        authorization = self.headers.get("Authorization") or ""
        if not state.token or authorization != f"Bearer {state.token}":
            raise D1Error(403, 10000, "Authentication error")
        account, database_id, endpoint = match.groups()
        if account != state.account:
            raise D1Error(403, 7403, "The given account is not valid or is not authorized to access this service")
        try:
            uuid.UUID(database_id)
        except ValueError:
            raise malformed("failed to decode id")
        with state.lock:
            database = state.databases.get(database_id)
        if database is None:
            raise D1Error(404, 7404, f"The database {database_id} could not be found")

        fault = state.next_fault(lambda: writes(raw_body))
        entry["fault"] = fault["fault"] if fault else None
        if fault:
            kind = fault["fault"]
            if kind == "429":
                retry_after = str(fault.get("retry_after", 1))
                raise D1Error(429, 971, "Please wait and consider throttling your request speed",
                              headers={"Retry-After": retry_after})
            if kind == "500":
                raise D1Error(500, 7500, f"internal error; reference = {uuid.uuid4().hex}")
            if kind in ("502", "503"):
                entry["status"] = int(kind)
                page = (f"<!DOCTYPE html><html><head><title>{kind} error</title></head><body><h1>Error {kind}</h1>"
                        "<p>The server could not answer this request.</p></body></html>").encode()
                self.send_bytes(int(kind), page, content_type="text/html; charset=UTF-8")
                return
            if kind == "notjson":
                entry["status"] = 200
                self.send_bytes(200, b"<html><body>Not what you expected</body></html>",
                                content_type="text/html; charset=UTF-8")
                return
            if kind == "slow":
                time.sleep(int(fault.get("delay_ms", 2000)) / 1000)
            if kind == "huge":
                entry["status"] = 200
                size = max(int(fault.get("bytes", 2_000_000)), 16)
                blob = b"[1" + b",1" * ((size - 3) // 2) + b"]"
                self.send_bytes(200, b'{"result":[{"results":{"columns":["a"],"rows":[[' + blob + b']]},"success":true,'
                                     b'"meta":{"changes":0}}],"success":true,"errors":[],"messages":[]}')
                return
            if kind == "badstatus" and not fault.get("execute", True):
                self.send_bad_status(entry)
                return
            if kind == "cut" and not fault.get("execute", True):
                entry["status"] = 200
                self.send_json(200, {"result": [], "success": True, "errors": [], "messages": []}, cut=True)
                return

        work = parse_body(raw_body)
        entry["statements"] = [sql[:2000] for sql, _ in work]
        results = database.run(work, raw=endpoint == "raw")
        if fault and fault["fault"] == "bigint":
            number = RawNumber(str(fault.get("value", 9007199254740993)))
            for result in results:
                rows = result["results"]["rows"] if endpoint == "raw" else result["results"]
                for index, row in enumerate(rows):
                    if endpoint == "raw" and row:
                        row[0] = number
                    elif endpoint != "raw" and row:
                        first = next(iter(row))
                        row[first] = number
        if fault and fault["fault"] == "badstatus":
            self.send_bad_status(entry)
            return
        entry["status"] = 200
        self.send_json(200, {"result": results, "success": True, "errors": [], "messages": []},
                       cut=bool(fault and fault["fault"] == "cut"))

    def send_bad_status(self, entry):
        """A status line no HTTP client accepts (a three-digit status is the rule), with a plausible answer after it,
        then the connection closed: what a broken proxy in front of the API might send."""
        entry["status"] = 2000
        body = b'{"result":[],"success":true,"errors":[],"messages":[]}'
        self.wfile.write(b"HTTP/1.1 2000 Weird\r\nContent-Type: application/json\r\nContent-Length: "
                         + str(len(body)).encode() + b"\r\n\r\n" + body)
        self.wfile.flush()
        self.close_connection = True

    def do_POST(self):
        self.handle_any("POST")

    def do_GET(self):
        self.handle_any("GET")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_DELETE(self):
        self.handle_any("DELETE")


def watch_parent(pid: int):
    """Ends this process once the process that started it is gone (a test runner killed before its EXIT trap ran)."""
    while True:
        time.sleep(1)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:
            pass


def main():
    parser = argparse.ArgumentParser(description="A local Cloudflare D1 REST API over a SQLite file, for tests.")
    parser.add_argument("--db", required=True, help="the SQLite file (created if missing, with _cf_KV)")
    parser.add_argument("--account", required=True, help="the account id the API answers for (at most 32 characters)")
    parser.add_argument("--database", required=True, help="the database id (a UUID) the API answers for")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token-env", default="CLOUDFLARE_API_TOKEN", help="the environment variable holding the token")
    parser.add_argument("--latency-ms", type=int, default=0, help="a delay added to every API request")
    parser.add_argument("--wrangler-migrations", action="store_true", help="add wrangler's d1_migrations table")
    parser.add_argument("--parent-pid", type=int, help="exit once this process is gone")
    parser.add_argument("--keep-bodies", action="store_true",
                        help="keep each API request's body (params included) in /test/requests, for a replay")
    parser.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate (and --tls-key)")
    parser.add_argument("--tls-key", help="the certificate's PEM private key")
    args = parser.parse_args()

    token = os.environ.get(args.token_env, "")
    if not token:
        parser.error(f"the environment variable {args.token_env} holds no token")
    if not args.account or len(args.account) > 32:
        parser.error("--account must be 1 to 32 characters (Cloudflare's account identifier)")
    try:
        uuid.UUID(args.database)
    except ValueError:
        parser.error("--database must be a UUID, as D1 database ids are")
    if args.latency_ms < 0:
        parser.error("--latency-ms must not be negative")

    Handler.state = State(Database(args.db, args.wrangler_migrations), token, args.account, args.database,
                          args.latency_ms)
    Handler.state.keep_bodies = args.keep_bodies
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    if args.tls_cert:
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    if args.parent_pid:
        threading.Thread(target=watch_parent, args=(args.parent_pid,), daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
