#!/usr/bin/env bash
# Linked-accounts benchmarks (issue 4) on the shared seeded store, read-only.
# Env: GATEHOUSE_BIN (release binary), BENCH_STORE (the BENCH_USERS-user store), BENCH_DIR (scratch), SQLITE3.
# Prints TSV lines: metric<TAB>value<TAB>unit<TAB>target<TAB>note
set -euo pipefail
source "$(dirname "$0")/lib.sh" # paired_ratio, spread, wall_ms (its own median_ms and ratio below take RUNS)

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
# Each ratio: BENCH_PAIRS alternating pairs, each side the median of PER runs (about RUNS runs per side in all).
PAIRS=${BENCH_PAIRS:-5}
PER=$(( (RUNS + PAIRS - 1) / PAIRS ))
show_gh() { RUNS=$PER median_ms "$BIN" users show "$EMAIL"; }
show_shell() { RUNS=$PER median_ms "$SQL" -readonly "$STORE" ".read $DIR/show.sql"; }
search_gh() { RUNS=$PER median_ms "$BIN" users search "$PREFIX" --by email; }
search_shell() { RUNS=$PER median_ms "$SQL" -readonly "$STORE" ".read $DIR/search.sql"; }
read -r show_r show_lo show_hi show_ms show_ms_lo show_ms_hi show_base _ _ < <(paired_ratio show_gh show_shell)
read -r search_r search_lo search_hi search_ms search_ms_lo search_ms_hi search_base _ _ < <(paired_ratio search_gh search_shell)
runs_note="median of $PAIRS medians of $PER runs (range $show_ms_lo-$show_ms_hi), process start to exit"
emit users_show_ms "$show_ms" ms "$(vs_1m users_show_ms lower "< 50 ms")" "$runs_note"
emit users_show_sqlite3_ms "$show_base" ms - "sqlite3 CLI running the same indexed lookups"
emit users_show_ratio "$(spread "$show_r" "$show_lo" "$show_hi")" x "<= 3" "gatehouse / sqlite3; $(pairs_note)"
emit users_search_email_ms "$search_ms" ms "$(vs_1m users_search_email_ms lower "< 30 ms")" "median of $PAIRS medians of $PER runs (range $search_ms_lo-$search_ms_hi), prefix '$PREFIX'"
emit users_search_sqlite3_ms "$search_base" ms - "sqlite3 CLI running the same index range"
emit users_search_ratio "$(spread "$search_r" "$search_lo" "$search_hi")" x "<= 3" "gatehouse / sqlite3; $(pairs_note)"

# The heavy whole-store commands: a few runs each (BENCH_HEAVY_RUNS), median and range, since the
# machine is shared; each next to the sqlite3 shell doing comparable work in the same run.
HEAVY=${BENCH_HEAVY_RUNS:-3}

# timed CMD...: runs CMD once; prints "wall_ms peak_kb" (peak 0 without /usr/bin/time).
timed() {
    local start end rss=0
    start=$(now_ns)
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f %M -o "$DIR/timed.rss" "$@" > "$DIR/timed.out"
        rss=$(tail -n 1 "$DIR/timed.rss")
    else
        "$@" > "$DIR/timed.out"
    fi
    end=$(now_ns)
    echo "$(( (end - start) / 1000000 )) $rss"
}
# stats: reads "ms kb" lines; prints "median_ms min_ms max_ms max_kb".
stats() { sort -n | awk '{ ms[NR] = $1; if ($2 > kb) kb = $2 } END { printf "%d %d %d %d\n", ms[int((NR + 1) / 2)], ms[1], ms[NR], kb }'; }

# users duplicates: wall time and peak resident memory.
for _ in $(seq "$HEAVY"); do timed "$BIN" users duplicates --json; done > "$DIR/dup.runs"
cp "$DIR/timed.out" "$DIR/dup.json"
read -r dup_ms dup_min dup_max dup_kb < <(stats < "$DIR/dup.runs")
pairs=$(grep -m1 '"pairsFound"' "$DIR/dup.json" | tr -dc '0-9')
# What the scan reads, as the sqlite3 shell would read it: every user's and every session's text columns.
cat > "$DIR/dup.sql" <<SQL
SELECT count(*), sum(length(id) + length(name) + length(email) + length(createdAt)) FROM "user";
SELECT count(*), sum(length(userId) + length(ipAddress) + length(userAgent)) FROM session;
SQL
dup_base=$(RUNS=$HEAVY median_ms "$SQL" -readonly "$STORE" ".read $DIR/dup.sql") # a whole-store read: as many runs as the command
emit users_duplicates_ms "$dup_ms" ms "$(at_scale "< 10000 ms" "< 60000 ms")" "whole store, $pairs pairs at the default score; median of $HEAVY (range $dup_min-$dup_max)"
emit users_duplicates_sqlite3_read_ms "$dup_base" ms - "sqlite3 CLI reading the same user and session columns; median of $HEAVY"
emit users_duplicates_rss_mb "$(( dup_kb / 1024 ))" MB "< 500 MB" "peak resident set"

# accounts check, against the sqlite3 shell running the seven checks as indexed anti-joins (paired, alternating) and
# as EXCEPTs (once).
cat > "$DIR/check-antijoin.sql" <<'SQL'
SELECT count(*) FROM account a WHERE NOT EXISTS (SELECT 1 FROM "user" u WHERE u.id = a.userId);
SELECT count(*) FROM "user" u WHERE NOT EXISTS (SELECT 1 FROM account a WHERE a.userId = u.id);
SELECT count(*) FROM users WHERE substr(sub, 1, 12) <> 'better_auth|' OR length(sub) = 12;
SELECT count(*) FROM users WHERE substr(sub, 1, 12) = 'better_auth|' AND length(sub) > 12 AND NOT EXISTS (SELECT 1 FROM "user" u WHERE u.id = substr(users.sub, 13));
SELECT count(*) FROM "user" u WHERE NOT EXISTS (SELECT 1 FROM users x WHERE x.sub = 'better_auth|' || u.id);
SELECT count(*) FROM (SELECT 1 FROM account GROUP BY accountId, providerId HAVING count(*) > 1);
SELECT count(*) FROM session s WHERE NOT EXISTS (SELECT 1 FROM "user" u WHERE u.id = s.userId);
SQL
cat > "$DIR/check-except.sql" <<'SQL'
SELECT count(*) FROM (SELECT userId FROM account EXCEPT SELECT id FROM "user");
SELECT count(*) FROM (SELECT id FROM "user" EXCEPT SELECT userId FROM account);
SELECT count(*) FROM users WHERE substr(sub, 1, 12) <> 'better_auth|' OR length(sub) = 12;
SELECT count(*) FROM (SELECT substr(sub, 13) FROM users WHERE sub > 'better_auth|' AND sub < 'better_auth}' EXCEPT SELECT id FROM "user");
SELECT count(*) FROM (SELECT 'better_auth|' || id FROM "user" EXCEPT SELECT sub FROM users);
SELECT count(*) FROM (SELECT 1 FROM account GROUP BY accountId, providerId HAVING count(*) > 1);
SELECT count(*) FROM (SELECT userId FROM session EXCEPT SELECT id FROM "user");
SQL
check_gh() { wall_ms "$BIN" accounts check --json; }
check_antijoin() { wall_ms "$SQL" -readonly "$STORE" ".read $DIR/check-antijoin.sql"; }
read -r check_r check_r_lo check_r_hi check_ms check_min check_max antijoin_ms _ _ < <(paired_ratio check_gh check_antijoin)
except_ms=$(wall_ms "$SQL" -readonly "$STORE" ".read $DIR/check-except.sql")
emit accounts_check_ms "$check_ms" ms "$(at_scale "< 5000 ms" "< 15000 ms")" "seven integrity checks (merge walks; sessions on a second connection); median of $PAIRS (range $check_min-$check_max)"
emit accounts_check_sqlite3_antijoin_ms "$antijoin_ms" ms - "sqlite3 CLI: the seven checks as per-row anti-joins (the old plan), counts only; median of $PAIRS"
emit accounts_check_sqlite3_except_ms "$except_ms" ms - "sqlite3 CLI: the link checks as EXCEPT (counts distinct keys); one run"
emit accounts_check_ratio "$(spread "$check_r" "$check_r_lo" "$check_r_hi")" x - "gatehouse / sqlite3 anti-joins; $(pairs_note)"

# Name search (issue 13): queries that match few users, through the trigram index against the scan it replaces
# (the same binary with GATEHOUSE_NAME_SEARCH=scan) and against the sqlite3 shell's LIKE scan of every name, which
# is less than the scan does (no accent folding). Three users are added with the sqlite3 shell, as Better Auth
# adds them, so that a substring in the middle of a name matches few; they are removed at the end. 'ía garc' matches
# about 2,000 users; 'zq' (two characters, no trigram of its own: the
# index's list of trigrams holding it, empty here, and its short keys) none.
"$SQL" "$STORE" <<'SQL'
INSERT INTO "user" (id, name, email, emailVerified, createdAt, updatedAt) VALUES
  ('benchQuill000000000000000000001', 'Orla Quillfeather', 'orla.q@example.com', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'),
  ('benchQuill000000000000000000002', 'Piet Quillfeather-Dahl', 'piet.qd@example.com', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'),
  ('benchQuill000000000000000000003', 'Renée QUILLFÉATHER', 'renee.q@example.com', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
SQL
cleanup_markers() { "$SQL" "$STORE" "DELETE FROM \"user\" WHERE id LIKE 'benchQuill%'" || true; }
trap cleanup_markers EXIT
# An email fragment: the end of a real address's local part, with its number (no address starts with it, no name
# holds it), as an operator pastes it.
FRAGMENT=$("$SQL" -readonly "$STORE" "SELECT substr(email, instr(email, '.') + 1, instr(email, '@') - instr(email, '.') - 1) FROM \"user\"
    WHERE rowid >= (SELECT max(rowid) / 2 FROM \"user\") AND email LIKE '%.%.%@gmail.com' ORDER BY rowid LIMIT 1")
for case in "middle:llfeath" "fragment:$FRAGMENT" "none:zyqwv" "dense:ía garc" "short:zq"; do
    label=${case%%:*} query=${case#*:}
    # Two letters would find relay addresses by email prefix first: the short case searches names only.
    by=(); [ "$label" = short ] && by=(--by name)
    count=$("$BIN" users search "$query" "${by[@]}" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["users"]))')
    # The index side is the median of PER runs per pair; the scan reads every name, one run per pair is enough.
    name_fts() { RUNS=$PER median_ms "$BIN" users search "$query" "${by[@]}"; }
    name_scan() { GATEHOUSE_NAME_SEARCH=scan wall_ms "$BIN" users search "$query" "${by[@]}"; }
    read -r name_r name_lo name_hi fts_ms fts_lo fts_hi scan_ms _ _ < <(paired_ratio name_fts name_scan)
    like_ms=$(RUNS=$PER median_ms "$SQL" -readonly "$STORE" "SELECT id FROM \"user\" WHERE name LIKE '%$query%' LIMIT 21")
    emit "users_search_name_${label}_ms" "$fts_ms" ms "$(vs_1m "users_search_name_${label}_ms" lower "< 20 ms")" "'$query' ($count found): median of $PAIRS medians of $PER runs (range $fts_lo-$fts_hi), process start to exit"
    emit "users_search_name_${label}_scan_ms" "$scan_ms" ms - "the same with GATEHOUSE_NAME_SEARCH=scan (the old plan); median of $PAIRS"
    emit "users_search_name_${label}_like_ms" "$like_ms" ms - "sqlite3 CLI: name LIKE '%…%' over every row; median of $PER"
    emit "users_search_name_${label}_ratio" "$(spread "$name_r" "$name_lo" "$name_hi")" x - "index / scan; $(pairs_note)"
done
