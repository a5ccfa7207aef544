#!/usr/bin/env bash
# The first run as a newcomer meets it (issue 40): ops/console on a fresh store, twice. Called by ops/test after the
# package test (the release build is then already made); runs alone too: Tests/Package/test_first_run.sh
# 1. First run: ops/console seeds a demo store, prints the admin's password once, the URL, the username and the
#    binary's path; the printed password logs in over HTTP.
# 2. Second run: init's report is shown (no new password: the store has its admin) and the same password still logs in.
# 3. A store with no admin: serve's start line names the exact `gatehouse admins add …` command with the store, and
#    the public GET /api/auth/setup says the same to the login page.
set -euo pipefail
source "$(dirname "$0")/../../ops/lib/setup.sh"
cd "$GATEHOUSE_ROOT"
ensure_debs curl sqlite3
ensure_venv

fail() { echo "first-run test: FAILED: $*" >&2; [ -f "${log:-}" ] && sed 's/^/  | /' "$log" >&2; exit 1; }
step() { echo "== first run: $*" >&2; }

work=$(mktemp -d /tmp/gatehouse-first-run.XXXXXX)
pid=""
stop() { [ -n "$pid" ] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; }; pid=""; }
trap 'stop; rm -rf "$work"' EXIT

free_port() { "$GATEHOUSE_TEST_PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
  || python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# console LOG: runs ops/console on the test store in the background until its serve line appears.
console() {
  log="$1"
  port=$(free_port)
  GATEHOUSE_STORE="$work/demo.sqlite" GATEHOUSE_LISTEN="127.0.0.1:$port" DEMO_USERS=300 ops/console >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do
    grep -q "Gatehouse console on" "$log" && return 0
    kill -0 "$pid" 2>/dev/null || fail "ops/console exited early"
    sleep 0.5
  done
  fail "ops/console did not start serving within 300 s"
}

login_status() {  # login_status PASSWORD → the HTTP status of POST /api/auth/login as admin
  "$GATEHOUSE_TEST_PYTHON" -c 'import json,sys; print(json.dumps({"username":"admin","password":sys.argv[1]}))' "$1" \
    | curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data-binary @- "http://127.0.0.1:$port/api/auth/login"
}

step "ops/console on a fresh store"
console "$work/first.log"
password=$(grep -A1 "password for admin (shown once" "$work/first.log" | tail -1 | tr -d ' ')
[ -n "$password" ] || fail "the first run printed no password for admin"
[ "${#password}" -ge 16 ] || fail "the printed password is too short: ${#password} characters"
grep -q "open http://127.0.0.1:$port/ and log in as admin" "$work/first.log" || fail "no URL and username"
bin=$(sed -n 's/^  The CLI is //p' "$work/first.log")
[ -x "$bin" ] && [ "${bin#/}" != "$bin" ] || fail "the binary's full path is not printed (got '$bin')"
grep -q "no admin can log in yet" "$work/first.log" && fail "serve says no admin on a seeded store"
[ "$(login_status "$password")" = 200 ] || fail "the printed password does not log in"
[ "$(login_status "wrong-$password")" = 401 ] || fail "a wrong password is not refused"
curl -s "http://127.0.0.1:$port/api/auth/setup" | grep -q '"hasAdmins":true' || fail "setup does not say the store has admins"
stop

step "ops/console again on the same store"
console "$work/second.log"
grep -q "Store $work/demo.sqlite" "$work/second.log" || fail "init's report is not shown on the second run"
grep -q "shown once" "$work/second.log" && fail "the second run printed a new password"
grep -q "log in as admin" "$work/second.log" || fail "the second run does not say how to log in"
[ "$(login_status "$password")" = 200 ] || fail "the first run's password no longer logs in"
stop

step "serve on a store with no admin"
# As a store another tool made, or whose admins were deleted by hand (gatehouse refuses to remove the last admin).
sqlite3 "$work/demo.sqlite" "DELETE FROM gatehouse_admins;"
port=$(free_port)
log="$work/serve.log"
"$bin" serve --store "$work/demo.sqlite" --listen "127.0.0.1:$port" >"$log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do grep -q "Gatehouse console on" "$log" && break; sleep 0.2; done
expected="gatehouse admins add admin --role admin --store $work/demo.sqlite"
grep "Gatehouse console on" "$log" | grep -qF "run \`$expected\`" || fail "the start line does not name \`$expected\`"
setup=$(curl -s "http://127.0.0.1:$port/api/auth/setup")
"$GATEHOUSE_TEST_PYTHON" - "$setup" "$expected" <<'PY' || fail "GET /api/auth/setup answered $setup"
import json, sys
answer = json.loads(sys.argv[1])
assert answer == {"hasAdmins": False, "command": sys.argv[2]}, answer
PY
stop
# The command it names works, and its password logs in.
created=$("$bin" admins add admin --role admin --store "$work/demo.sqlite")
password=$(echo "$created" | tail -1 | tr -d ' ')
"$bin" serve --store "$work/demo.sqlite" --listen "127.0.0.1:$port" >"$log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do grep -q "Gatehouse console on" "$log" && break; sleep 0.2; done
grep -q "no admin can log in yet" "$log" && fail "serve still says no admin"
[ "$(login_status "$password")" = 200 ] || fail "the named command's admin cannot log in"
stop
echo "first run: ok" >&2
