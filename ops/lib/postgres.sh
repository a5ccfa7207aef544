# A throw-away Postgres cluster for the tests: ops/test sources this after lib/setup.sh.
#
#   ensure_postgres        installs Debian's postgresql (the server) and libpq5 (the client library) when missing
#   start_test_postgres    initdb's a cluster in a temporary directory, starts it on a Unix socket in that
#                          directory only (no TCP), creates the test roles and database, exports
#                          GATEHOUSE_TEST_PG_URI (and the password role's GATEHOUSE_TEST_PG_PASSWORD_*; and, for tests
#                          that restart the server, GATEHOUSE_TEST_PG_BINDIR, _OPTIONS and _RUN_AS), and registers
#                          stop_test_postgres on EXIT, so the cluster stops on any exit, Ctrl-C included
#   stop_test_postgres     stops the cluster and removes its directory; safe to call twice
#
# Postgres refuses to run as root: as root the cluster belongs to the system user gatehouse-test (created once);
# otherwise to the calling user.

GATEHOUSE_TEST_PG_OWNER=gatehouse-test

ensure_postgres() {
  ensure_debs postgresql libpq5
}

# The directory of initdb, pg_ctl and postgres: the newest installed major version.
_gatehouse_pg_bindir() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] && [ -x "$dir/initdb" ] || { echo "ops: Postgres server binaries not found in /usr/lib/postgresql/*/bin" >&2; return 1; }
  echo "$dir"
}

# _gatehouse_pg_as CMD...: runs CMD as the cluster's owner.
_gatehouse_pg_as() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u "$GATEHOUSE_TEST_PG_OWNER" -- "$@"
  else
    "$@"
  fi
}

start_test_postgres() {
  [ -n "${GATEHOUSE_TEST_PG_DIR:-}" ] && return 0
  local bindir; bindir=$(_gatehouse_pg_bindir) || return 1
  if [ "$(id -u)" -eq 0 ] && ! id -u "$GATEHOUSE_TEST_PG_OWNER" >/dev/null 2>&1; then
    # Another worktree's ops/test may be creating it at the same moment: only fail if it still does not exist.
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$GATEHOUSE_TEST_PG_OWNER" 2>/dev/null \
      || id -u "$GATEHOUSE_TEST_PG_OWNER" >/dev/null 2>&1 \
      || { echo "ops: could not create the system user $GATEHOUSE_TEST_PG_OWNER" >&2; return 1; }
  fi

  GATEHOUSE_TEST_PG_DIR=$(mktemp -d /tmp/gatehouse-pg.XXXXXX)
  export GATEHOUSE_TEST_PG_DIR
  trap stop_test_postgres EXIT
  # Ctrl-C and kill end the script through its EXIT trap (the status says which signal).
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'exit 129' HUP
  chmod 0755 "$GATEHOUSE_TEST_PG_DIR"
  [ "$(id -u)" -eq 0 ] && chown "$GATEHOUSE_TEST_PG_OWNER" "$GATEHOUSE_TEST_PG_DIR"

  local data="$GATEHOUSE_TEST_PG_DIR/data" log="$GATEHOUSE_TEST_PG_DIR/server.log"
  # The password role's password: random per run, handed to the tests in the environment only.
  GATEHOUSE_TEST_PG_PASSWORD=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
  export GATEHOUSE_TEST_PG_PASSWORD
  export GATEHOUSE_TEST_PG_PASSWORD_USER=gatehouse_pw

  # `gatehouse` (the tests' role) and the bootstrap superuser log in without a password over the socket, which only
  # this directory's owner and root can reach; `gatehouse_pw` must give its password (SCRAM), to test password logins.
  _gatehouse_pg_as "$bindir/initdb" --pgdata="$data" --username=postgres --encoding=UTF8 --locale=C.UTF-8 \
      --auth-local=trust --auth-host=reject --no-sync >"$GATEHOUSE_TEST_PG_DIR/initdb.log" 2>&1 \
    || { echo "ops: initdb failed:" >&2; cat "$GATEHOUSE_TEST_PG_DIR/initdb.log" >&2; return 1; }
  _gatehouse_pg_as sh -c "{ echo 'local all gatehouse_pw scram-sha-256'; cat '$data/pg_hba.conf'; } > '$data/pg_hba.conf.new' && mv '$data/pg_hba.conf.new' '$data/pg_hba.conf'"

  # No TCP at all; the socket lives in the private directory, so the port only names the socket file.
  # Small and unsynced: a test cluster on a 2-core machine shared with other builds. Room for 100 connections: a test
  # may run 40 CLI processes at once while earlier tests' console pools are still closing.
  # The server's options, kept for tests that stop and start it again (the console's reconnection tests).
  GATEHOUSE_TEST_PG_OPTIONS="-c listen_addresses= -c unix_socket_directories=$GATEHOUSE_TEST_PG_DIR -c port=5432 -c fsync=off \
      -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=16MB -c max_connections=100 \
      -c password_encryption=scram-sha-256 ${GATEHOUSE_TEST_PG_SETTINGS:-}"
  export GATEHOUSE_TEST_PG_OPTIONS GATEHOUSE_TEST_PG_BINDIR="$bindir"
  [ "$(id -u)" -eq 0 ] && export GATEHOUSE_TEST_PG_RUN_AS="$GATEHOUSE_TEST_PG_OWNER"
  _gatehouse_pg_as "$bindir/pg_ctl" --pgdata="$data" --log="$log" --wait --timeout=60 \
      -o "$GATEHOUSE_TEST_PG_OPTIONS" start >/dev/null \
    || { echo "ops: the test Postgres did not start:" >&2; cat "$log" >&2; return 1; }

  local psql="$bindir/psql"
  [ -x "$psql" ] || psql=$(command -v psql)
  _gatehouse_pg_as "$psql" -X -q -v ON_ERROR_STOP=1 -h "$GATEHOUSE_TEST_PG_DIR" -p 5432 -U postgres -d postgres \
      -v pw="$GATEHOUSE_TEST_PG_PASSWORD" >/dev/null <<'SQL' || { echo "ops: could not create the test roles" >&2; return 1; }
CREATE ROLE gatehouse LOGIN CREATEDB;
CREATE DATABASE gatehouse_test OWNER gatehouse;
CREATE ROLE gatehouse_pw LOGIN PASSWORD :'pw';
GRANT ALL ON DATABASE gatehouse_test TO gatehouse_pw;
-- A role with few connections, for the console's start-up check of what the server can give it.
CREATE ROLE gatehouse_limited LOGIN CONNECTION LIMIT 3;
GRANT gatehouse TO gatehouse_limited;
SQL

  export GATEHOUSE_TEST_PG_URI="postgresql://gatehouse@/gatehouse_test?host=$GATEHOUSE_TEST_PG_DIR&port=5432"
  echo "ops: test Postgres $("$bindir/postgres" --version | awk '{print $3}') on $GATEHOUSE_TEST_PG_DIR" >&2
}

stop_test_postgres() {
  local dir="${GATEHOUSE_TEST_PG_DIR:-}"
  [ -n "$dir" ] || return 0
  unset GATEHOUSE_TEST_PG_DIR GATEHOUSE_TEST_PG_URI GATEHOUSE_TEST_PG_PASSWORD GATEHOUSE_TEST_PG_OPTIONS GATEHOUSE_TEST_PG_BINDIR GATEHOUSE_TEST_PG_RUN_AS
  if [ -f "$dir/data/postmaster.pid" ]; then
    local bindir; bindir=$(_gatehouse_pg_bindir) || true
    _gatehouse_pg_as "$bindir/pg_ctl" --pgdata="$dir/data" --mode=immediate --wait --timeout=30 stop >/dev/null 2>&1 \
      || echo "ops: could not stop the test Postgres in $dir" >&2
  fi
  case "$dir" in /tmp/gatehouse-pg.*) rm -rf "$dir" ;; esac
}
