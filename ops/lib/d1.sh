# A throw-away local D1 REST API for the tests (Tests/Fixtures/d1_server.py over a fresh SQLite file): sourced after
# lib/setup.sh, like lib/postgres.sh.
#
#   start_test_d1 [SERVER FLAGS...]   starts the server on a fresh database in a temporary directory, with a random
#                                     token, account id and database id, and exports for the tests:
#                                       GATEHOUSE_TEST_D1_URL       the API base, http://127.0.0.1:<port>/client/v4
#                                       GATEHOUSE_TEST_D1_ACCOUNT   the account id (32 hex characters)
#                                       GATEHOUSE_TEST_D1_DATABASE  the database id (a UUID)
#                                       CLOUDFLARE_API_TOKEN        the token the server accepts (also
#                                                                   GATEHOUSE_TEST_D1_TOKEN)
#                                       GATEHOUSE_TEST_D1_CONTROL   the test endpoints, http://127.0.0.1:<port>/test
#                                       GATEHOUSE_TEST_D1_DB        the SQLite file behind the API
#                                       GATEHOUSE_TEST_D1_DIR, GATEHOUSE_TEST_D1_PID
#                                     Flags go to the server as they are, e.g. `start_test_d1 --latency-ms 50` or
#                                     `--wrangler-migrations`. Registers stop_test_d1 on EXIT after the EXIT trap
#                                     already set (lib/postgres.sh's, when it started first), so both run; and the
#                                     server ends by itself if this shell is gone (--parent-pid), so a later
#                                     `trap … EXIT` that replaces ours still leaves no server behind.
#   stop_test_d1                      stops the server and removes its directory; safe to call twice
#
# Start Postgres first, then D1: start_test_postgres sets its EXIT trap outright, start_test_d1 adds to it.

GATEHOUSE_D1_SERVER="$GATEHOUSE_ROOT/Tests/Fixtures/d1_server.py"

# _gatehouse_d1_on_exit CMD: runs CMD on EXIT, after the EXIT trap already set (if any).
_gatehouse_d1_on_exit() {
  local current
  current=$(trap -p EXIT)
  if [ -z "$current" ]; then
    trap -- "$1" EXIT
    return
  fi
  # `trap -p` prints: trap -- '<command, its single quotes written '\''>' EXIT
  current=${current#"trap -- '"}
  current=${current%"' EXIT"}
  current=${current//"'\\''"/"'"}
  case "$current" in *"$1"*) return ;; esac
  trap -- "$current; $1" EXIT
}

start_test_d1() {
  [ -n "${GATEHOUSE_TEST_D1_DIR:-}" ] && return 0
  command -v python3 >/dev/null 2>&1 || { echo "ops: python3 is needed for the test D1 server" >&2; return 1; }

  GATEHOUSE_TEST_D1_DIR=$(mktemp -d /tmp/gatehouse-d1.XXXXXX)
  export GATEHOUSE_TEST_D1_DIR
  _gatehouse_d1_on_exit stop_test_d1
  # Ctrl-C and kill end the script through its EXIT trap (the status says which signal), as lib/postgres.sh does.
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'exit 129' HUP

  local dir="$GATEHOUSE_TEST_D1_DIR"
  GATEHOUSE_TEST_D1_TOKEN=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
  GATEHOUSE_TEST_D1_ACCOUNT=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  GATEHOUSE_TEST_D1_DATABASE=$(cat /proc/sys/kernel/random/uuid)
  GATEHOUSE_TEST_D1_DB="$dir/d1.sqlite"
  export GATEHOUSE_TEST_D1_TOKEN GATEHOUSE_TEST_D1_ACCOUNT GATEHOUSE_TEST_D1_DATABASE GATEHOUSE_TEST_D1_DB

  # The token reaches the server through its environment only, never its command line.
  GATEHOUSE_TEST_D1_SERVER_TOKEN="$GATEHOUSE_TEST_D1_TOKEN" python3 "$GATEHOUSE_D1_SERVER" \
      --db "$GATEHOUSE_TEST_D1_DB" --port 0 --token-env GATEHOUSE_TEST_D1_SERVER_TOKEN \
      --account "$GATEHOUSE_TEST_D1_ACCOUNT" --database "$GATEHOUSE_TEST_D1_DATABASE" --parent-pid $$ "$@" \
      >"$dir/port" 2>"$dir/server.log" &
  GATEHOUSE_TEST_D1_PID=$!
  export GATEHOUSE_TEST_D1_PID

  local port="" tries=0
  while [ $tries -lt 100 ]; do
    # (the file may not exist yet: the server's shell creates it)
    port=$(sed -n 's/^PORT \([0-9][0-9]*\)$/\1/p' "$dir/port" 2>/dev/null || true)
    [ -n "$port" ] && break
    kill -0 "$GATEHOUSE_TEST_D1_PID" 2>/dev/null || break
    sleep 0.1
    tries=$((tries + 1))
  done
  if [ -z "$port" ]; then
    echo "ops: the test D1 server did not start:" >&2
    cat "$dir/server.log" >&2
    stop_test_d1
    return 1
  fi

  export GATEHOUSE_TEST_D1_URL="http://127.0.0.1:$port/client/v4"
  export GATEHOUSE_TEST_D1_CONTROL="http://127.0.0.1:$port/test"
  export CLOUDFLARE_API_TOKEN="$GATEHOUSE_TEST_D1_TOKEN"
  echo "ops: test D1 API on $GATEHOUSE_TEST_D1_URL ($GATEHOUSE_TEST_D1_DIR)" >&2
}

stop_test_d1() {
  local dir="${GATEHOUSE_TEST_D1_DIR:-}" pid="${GATEHOUSE_TEST_D1_PID:-}"
  [ -n "$dir" ] || return 0
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null
    local tries=0
    while kill -0 "$pid" 2>/dev/null && [ $tries -lt 50 ]; do sleep 0.1; tries=$((tries + 1)); done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  fi
  # The token in the environment is ours only if it is still the one start_test_d1 set.
  [ "${CLOUDFLARE_API_TOKEN:-}" = "${GATEHOUSE_TEST_D1_TOKEN:-}" ] && unset CLOUDFLARE_API_TOKEN
  unset GATEHOUSE_TEST_D1_DIR GATEHOUSE_TEST_D1_PID GATEHOUSE_TEST_D1_URL GATEHOUSE_TEST_D1_CONTROL \
        GATEHOUSE_TEST_D1_ACCOUNT GATEHOUSE_TEST_D1_DATABASE GATEHOUSE_TEST_D1_TOKEN GATEHOUSE_TEST_D1_DB
  case "$dir" in /tmp/gatehouse-d1.*) rm -rf "$dir" ;; esac
}
