#!/usr/bin/env bash
# Linked-accounts benchmarks (issue 4) on the shared seeded store, read-only.
# Env: GATEHOUSE_BIN (release binary), BENCH_STORE (1,000,000-user store), BENCH_DIR (scratch), SQLITE3.
# Prints TSV lines: metric<TAB>value<TAB>unit<TAB>target<TAB>note
set -euo pipefail

BIN=${GATEHOUSE_BIN:?GATEHOUSE_BIN is not set}
STORE=${BENCH_STORE:?BENCH_STORE is not set}
DIR=${BENCH_DIR:-$(mktemp -d)}
SQL=${SQLITE3:-sqlite3}
RUNS=${BENCH_RUNS:-21}
mkdir -p "$DIR"

now_ns() { date +%s%N; }

# median_ms CMD...: runs CMD $RUNS times (output discarded), prints the median wall time in ms.
median_ms() {
    local samples=() start end
    "$@" >/dev/null 2>&1 || true # warm the page cache once
    for _ in $(seq "$RUNS"); do
        start=$(now_ns)
        "$@" >/dev/null 2>&1
        end=$(now_ns)
        samples+=("$(( (end - start) / 1000 ))")
    done
    printf '%s\n' "${samples[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f", a[int((NR + 1) / 2)] / 1000 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "nan" }'; }
emit() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5"; }

# A user from the middle of the store, with an email, and a prefix of that email.
read -r USER_ID EMAIL < <("$SQL" -readonly -separator ' ' "$STORE" \
    "SELECT id, email FROM \"user\" WHERE rowid >= (SELECT max(rowid) / 2 FROM \"user\") ORDER BY rowid LIMIT 1")
PREFIX=${EMAIL:0:9}
UPPER="${PREFIX%?}$(printf "\\$(printf '%03o' $(( $(printf '%d' "'${PREFIX: -1}") + 1 )))")"
SUB="better_auth|$USER_ID"

# What `users show` reads, as the sqlite3 shell would run it: the same indexed lookups.
cat > "$DIR/show.sql" <<SQL
SELECT id, name, email, emailVerified, image, createdAt, updatedAt FROM "user" WHERE email = '$EMAIL';
SELECT id, providerId, issuer, accountId, createdAt, updatedAt, scope, accessToken IS NOT NULL, refreshToken IS NOT NULL, idToken IS NOT NULL, password IS NOT NULL FROM account WHERE userId = '$USER_ID' ORDER BY createdAt;
SELECT count(*), sum(expiresAt > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) FROM session WHERE userId = '$USER_ID';
SELECT id, createdAt, expiresAt, ipAddress, userAgent FROM session WHERE userId = '$USER_ID' ORDER BY createdAt DESC LIMIT 5;
SELECT id, sub, display_name, created_at FROM users WHERE sub = '$SUB';
SELECT id, name, created_at FROM workspaces WHERE owner_id = (SELECT id FROM users WHERE sub = '$SUB');
SELECT id, plan, status, current_period_end FROM subscriptions WHERE user_id = (SELECT id FROM users WHERE sub = '$SUB');
SELECT role, granted_at FROM allow_list WHERE sub = '$SUB';
SQL
# What `users search --by email` reads: the index range, then each hit's providers and sync row.
cat > "$DIR/search.sql" <<SQL
SELECT u.id, u.name, u.email, u.emailVerified, u.createdAt,
       (SELECT group_concat(DISTINCT providerId) FROM account a WHERE a.userId = u.id),
       EXISTS (SELECT 1 FROM users s WHERE s.sub = 'better_auth|' || u.id)
FROM "user" u WHERE u.email >= '$PREFIX' AND u.email < '$UPPER' ORDER BY u.email LIMIT 21;
SQL

export GATEHOUSE_STORE="$STORE"
show_ms=$(median_ms "$BIN" users show "$EMAIL")
show_base=$(median_ms "$SQL" -readonly "$STORE" ".read $DIR/show.sql")
search_ms=$(median_ms "$BIN" users search "$PREFIX" --by email)
search_base=$(median_ms "$SQL" -readonly "$STORE" ".read $DIR/search.sql")
emit users_show_ms "$show_ms" ms 50 "median of $RUNS runs, process start to exit"
emit users_show_sqlite3_ms "$show_base" ms - "sqlite3 CLI running the same indexed lookups"
emit users_show_ratio "$(ratio "$show_ms" "$show_base")" x 3 "gatehouse / sqlite3"
emit users_search_email_ms "$search_ms" ms 30 "median of $RUNS runs, prefix '$PREFIX'"
emit users_search_sqlite3_ms "$search_base" ms - "sqlite3 CLI running the same index range"
emit users_search_ratio "$(ratio "$search_ms" "$search_base")" x 3 "gatehouse / sqlite3"

# users duplicates: wall time and peak resident memory.
if [ -x /usr/bin/time ]; then
    start=$(now_ns)
    /usr/bin/time -f %M -o "$DIR/dup.rss" "$BIN" users duplicates --json > "$DIR/dup.json"
    end=$(now_ns)
    rss_kb=$(tail -n 1 "$DIR/dup.rss")
else
    start=$(now_ns)
    "$BIN" users duplicates --json > "$DIR/dup.json" &
    pid=$!
    rss_kb=0
    while kill -0 "$pid" 2>/dev/null; do
        hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
        [ -n "$hwm" ] && [ "$hwm" -gt "$rss_kb" ] && rss_kb=$hwm
        sleep 0.05
    done
    wait "$pid"
    end=$(now_ns)
fi
pairs=$(grep -m1 '"pairsFound"' "$DIR/dup.json" | tr -dc '0-9')
emit users_duplicates_ms "$(( (end - start) / 1000000 ))" ms 10000 "whole store, $pairs pairs at the default score"
emit users_duplicates_rss_mb "$(( rss_kb / 1024 ))" MB 500 "peak resident set"

start=$(now_ns)
"$BIN" accounts check --json > "$DIR/check.json"
end=$(now_ns)
emit accounts_check_ms "$(( (end - start) / 1000000 ))" ms 5000 "seven integrity checks in one snapshot"
