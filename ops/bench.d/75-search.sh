#!/usr/bin/env bash
# User search by any part of the email, a page at a time (issue 46 item 2), on SQLite (BENCH_STORE, read-only) and
# on Postgres (a database of its own seeded with BENCH_USERS users): p50 and p95 of a domain query's first page and
# of a page deep in the results (keyset paging: page 20 should cost what page 1 costs), process start to exit, each
# beside the store's own client running the same statement (sqlite3, psql) as the baseline of the same run.
# Env: GATEHOUSE_BIN, BENCH_STORE, BENCH_USERS, BENCH_DIR, SQLITE3; BENCH_SEARCH_POSTGRES=off skips Postgres.
# Prints TSV lines: metric<TAB>value<TAB>unit<TAB>target<TAB>note
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"

BIN=${GATEHOUSE_BIN:?GATEHOUSE_BIN is not set}
STORE=${BENCH_STORE:?BENCH_STORE is not set}
SQL=${SQLITE3:-sqlite3}
RUNS=${BENCH_RUNS:-41}
work="${BENCH_DIR:-$(mktemp -d)}/search"
rm -rf "$work"
mkdir -p "$work"
LIMIT=50
DEPTH=20 # the deep page: users 951 to 1,000 of the query

# percentiles CMD...: runs CMD RUNS times after one warm-up, prints "p50 p95" of the wall times in ms.
percentiles() {
  local samples=() start end
  "$@" > /dev/null 2>&1 || true
  for _ in $(seq "$RUNS"); do
    start=$(date +%s%N)
    "$@" > /dev/null 2>&1 || true
    end=$(date +%s%N)
    samples+=("$(( (end - start) / 1000 ))")
  done
  printf '%s\n' "${samples[@]}" | sort -n | awk '{ a[NR] = $1 } END {
    p50 = a[int((NR + 1) / 2)]; i = int(NR * 0.95 + 0.999); if (i > NR) i = NR; printf "%.1f %.1f\n", p50 / 1000, a[i] / 1000 }'
}

# cursor_at STORE QUERY PAGE: the cursor that starts page PAGE (2 or more) of QUERY, by following nextCursor.
cursor_at() {
  local store=$1 query=$2 page=$3 cursor="" i
  for i in $(seq 2 "$page"); do
    cursor=$("$BIN" users search "$query" --by email --sort email --limit "$LIMIT" ${cursor:+--after "$cursor"} --json --store "$store" \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["nextCursor"] or "")')
    [ -n "$cursor" ] || { echo "fewer than $page pages of '$query'" >&2; return 1; }
  done
  echo "$cursor"
}

# measure ENGINE STORE CLIENT_NAME CLIENT: the rows for one engine; CLIENT runs a statement file (the baseline).
measure() {
  local engine=$1 store=$2 client_name=$3 client=$4
  local query p50 p95 b50 b95 deep d50 d95 count
  for query in "@privaterelay.appleid.com" "privaterelay"; do
    first_sql "$engine" "$query" > "$work/$engine-first.sql"
    read -r p50 p95 < <(percentiles "$BIN" users search "$query" --by email --sort email --limit "$LIMIT" --store "$store")
    [ "$query" = "@privaterelay.appleid.com" ] && p50_first=$p50
    read -r b50 b95 < <(percentiles "$client" "$work/$engine-first.sql")
    count=$("$BIN" users search "$query" --by email --sort email --limit "$LIMIT" --json --store "$store" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["users"]))')
    row "$engine: users search '$query', first page p50" "$p50" ms "< 50 ms" "$count users a page ($LIMIT asked), email order; p95 $p95 ms; $client_name running the same LIKE and order: p50 $b50 ms, p95 $b95 ms; $BENCH_USERS users, $RUNS runs, process start to exit"
    row "$engine: users search '$query', first page / $client_name" "$(ratio "$p50" "$b50")" x "-" "p50 over p50, same run"
  done
  # Part of a mailbox: the sort's index is read far before the page fills (or whole when nobody else has it).
  read -r p50 p95 < <(percentiles "$BIN" users search "$RARE" --by email --sort email --limit "$LIMIT" --store "$store")
  row "$engine: users search '$RARE' (part of a mailbox), first page p50" "$p50" ms "-" "8 characters from a mid-store user's address, email order: the matches lie far into the index; p95 $p95 ms"
  deep=$(cursor_at "$store" "@privaterelay.appleid.com" "$DEPTH")
  read -r d50 d95 < <(percentiles "$BIN" users search "@privaterelay.appleid.com" --by email --sort email --limit "$LIMIT" --after "$deep" --store "$store")
  row "$engine: users search, page $DEPTH p50" "$d50" ms "< 50 ms" "'@privaterelay.appleid.com' after the cursor of page $DEPTH (users $(( (DEPTH - 1) * LIMIT + 1 ))-$(( DEPTH * LIMIT ))): keyset paging, no OFFSET; p95 $d95 ms"
  row "$engine: users search, page $DEPTH / page 1" "$(ratio "$d50" "$p50_first")" x "<= 2" "p50 over the first page's p50 of the same query, same run"
}

first_sql() { # ENGINE QUERY: the first page as the store's client runs it (the same pattern, order and limit)
  case $1 in
    sqlite) echo "SELECT id, name, email FROM \"user\" WHERE email LIKE '%$2%' ESCAPE '\\' ORDER BY email LIMIT $(( LIMIT + 1 ));" ;;
    postgres) echo "SELECT id, name, email FROM \"user\" WHERE email ILIKE '%$2%' ESCAPE '\\' ORDER BY email COLLATE \"C\" LIMIT $(( LIMIT + 1 ));" ;;
  esac
}

sqlite_client() { "$SQL" -readonly "$STORE" ".read $1"; }
p50_first=0
# Eight characters from inside a mid-store user's address: its matches lie far into the email order.
RARE=$("$SQL" -readonly "$STORE" "SELECT substr(email, 3, 8) FROM \"user\" WHERE rowid >= (SELECT max(rowid) / 2 FROM \"user\") ORDER BY rowid LIMIT 1")
measure sqlite "$STORE" sqlite3 sqlite_client

[ "${BENCH_SEARCH_POSTGRES:-on}" = off ] && exit 0
source "$here/../lib/setup.sh"
source "$here/../lib/postgres.sh"
ensure_postgres
start_test_postgres
PSQL=$(command -v psql)
db="gh_search_$$"
"$PSQL" -X -q "$GATEHOUSE_TEST_PG_URI" -c "CREATE DATABASE $db"
uri=${GATEHOUSE_TEST_PG_URI/\/gatehouse_test\?/\/$db?}
# As 70-postgres.sh (the name index's keys get pg_trgm's index; emails get none: see UserSearchPager).
"$PSQL" -X -q "$uri" -c "CREATE EXTENSION pg_trgm"
export GATEHOUSE_KEY_DIR="$work/keys"
unset GATEHOUSE_STORE
"$BIN" init --store "$uri" > /dev/null
"$BIN" demo seed --users "$BENCH_USERS" --quiet --store "$uri" > /dev/null
"$PSQL" -X -q "$uri" -c "VACUUM ANALYZE" > /dev/null 2>&1
psql_client() { "$PSQL" -X -q "$uri" -f "$1"; }
measure postgres "$uri" psql psql_client
"$PSQL" -X -q "$GATEHOUSE_TEST_PG_URI" -c "DROP DATABASE $db" > /dev/null 2>&1 || true
