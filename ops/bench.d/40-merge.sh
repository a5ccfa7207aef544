#!/usr/bin/env bash
# Merge apply on the BENCH_USERS-user demo store: a user with 10 accounts, 200 sessions and 20 workspaces is
# merged into another; the figure is the time inside apply's BEGIN IMMEDIATE … COMMIT (its
# transactionMilliseconds). Works on a copy: BENCH_STORE is never modified.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

store="$BENCH_DIR/merge.sqlite"
rm -f "$store" "$store"-wal "$store"-shm "$store".key
# The copy is as large as the store (about 19 GB at 10M users): removed however the script ends.
trap 'rm -f "$store" "$store"-wal "$store"-shm "$store".key' EXIT
"$SQLITE3" "$BENCH_STORE" ".backup '$store'"
[ -f "$BENCH_STORE.key" ] && cp "$BENCH_STORE.key" "$store.key"
# A store seeded by an older Gatehouse gets the indexes this one wants (the verification lookups'), as an operator's
# upgrade does; on a current store this creates nothing.
"$GATEHOUSE_BIN" accounts index --store "$store" > /dev/null

u1=BenchMergeTargetUser000000000001
u2=BenchMergeSourceUser000000000002
"$SQLITE3" "$store" >/dev/null <<SQL
.timeout 5000
BEGIN;
INSERT INTO user (id, name, email, emailVerified, createdAt, updatedAt) VALUES
  ('$u1', 'Bench Merge', 'benchmerge01@privaterelay.appleid.com', 1, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z'),
  ('$u2', 'Bench Merge', 'bench.merge@gmail.com', 1, '2025-01-02T00:00:00.000Z', '2025-01-02T00:00:00.000Z');
INSERT INTO account (id, issuer, accountId, providerId, userId, createdAt, updatedAt) VALUES
  ('BenchMergeAccountTarget000000001', 'https://appleid.apple.com', 'bench.apple.target', 'apple', '$u1', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z');
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10)
INSERT INTO account (id, issuer, accountId, providerId, userId, createdAt, updatedAt)
  SELECT 'BenchMergeAccount' || printf('%015d', i), 'local:bench' || i, 'bench-account-' || i, 'bench' || i, '$u2',
         '2025-01-02T00:00:00.000Z', '2025-01-02T00:00:00.000Z' FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
INSERT INTO session (id, expiresAt, token, createdAt, updatedAt, ipAddress, userAgent, userId)
  SELECT 'BenchMergeSession' || printf('%015d', i), '2030-01-01T00:00:00.000Z', 'bench-merge-token-' || i,
         '2025-01-02T00:00:00.000Z', '2025-01-02T00:00:00.000Z', '81.2.3.4', 'bench', '$u2' FROM n;
INSERT INTO users (sub, display_name, created_at) VALUES ('better_auth|$u1', 'Bench', '2025-01-01'), ('better_auth|$u2', 'Bench', '2025-01-02');
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
INSERT INTO workspaces (id, owner_id, name, created_at)
  SELECT 'ws_BenchMerge' || printf('%06d', i), (SELECT id FROM users WHERE sub = 'better_auth|$u2'), 'Bench ' || i, '2025-01-02' FROM n;
COMMIT;
SQL

# BENCH_PAIRS (default 5) rounds of plan, apply and undo on the same pair: the figures are the medians (one round
# alone is at the mercy of whatever else the machine does in those 50 ms).
rounds=${BENCH_PAIRS:-5}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
tx_all=() plan_all=() undo_all=()
for _ in $(seq "$rounds"); do
  start=$(date +%s%N)
  plan_json=$("$GATEHOUSE_BIN" merge plan --store "$store" --from "$u2" --into "$u1" --keep-email target --json)
  plan_all+=( $(( ($(date +%s%N) - start) / 1000 )) )
  plan_id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["planID"])' <<< "$plan_json")
  apply_json=$("$GATEHOUSE_BIN" merge apply "$plan_id" --ticket BENCH --yes --json --store "$store" --actor bench)
  tx_all+=( "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["transactionMilliseconds"])' <<< "$apply_json")" )
  rows=$(python3 -c 'import json,sys; r=json.load(sys.stdin); print(sum(r["updated"].values()) + sum(r["deleted"].values()))' <<< "$apply_json")
  merge_id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["mergeID"])' <<< "$apply_json")
  start=$(date +%s%N)
  "$GATEHOUSE_BIN" merge undo "$merge_id" --reason bench --store "$store" --actor bench > /dev/null
  undo_all+=( $(( ($(date +%s%N) - start) / 1000 )) )
done
tx_ms=$(printf '%s\n' "${tx_all[@]}" | median)
plan_ms=$(printf '%s\n' "${plan_all[@]}" | median | awk '{ printf "%.2f", $1 / 1000 }')
undo_ms=$(printf '%s\n' "${undo_all[@]}" | median | awk '{ printf "%.2f", $1 / 1000 }')
row "merge apply: time inside the transaction" "$tx_ms" "ms" "< 50 ms" "10 accounts, 200 sessions, 20 workspaces; $rows rows; median of $rounds rounds (${tx_all[*]})"
row "merge plan: wall time (CLI)" "$plan_ms" "ms" "" "reads and fingerprints the same rows; median of $rounds"
row "merge undo: wall time (CLI)" "$undo_ms" "ms" "" "restores every row; median of $rounds"
rm -f "$store" "$store"-wal "$store"-shm "$store".key
