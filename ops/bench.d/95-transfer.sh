#!/usr/bin/env bash
# Apple app transfer on a copy of the BENCH_USERS-user demo store, against the local Apple stand-in
# (Tests/Fixtures/apple_server.py):
# - collect and exchange at the default concurrency (4), on a sample of accounts, set beside the same number of calls
#   made to the stand-in by a bare client (transfer-replay.py): with no added latency, and at 50 ms a call;
# - plan and apply on every Apple account of the store (the transfer's rows filled by SQL for those the sample did not
#   ask Apple about, so the plan's and apply's work is the whole store's), with their peak memory.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
python="${GATEHOUSE_ROOT:-.}/.venv/bin/python"
sample=${BENCH_TRANSFER_SAMPLE:-6000}
slow_sample=${BENCH_TRANSFER_SLOW_SAMPLE:-400}

work="$BENCH_DIR/transfer"
store="$work/transfer.sqlite"
rm -rf "$work"; mkdir -p "$work"
trap 'kill "${apple_pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
"$SQLITE3" "$BENCH_STORE" ".backup '$store'"
[ -f "$BENCH_STORE.key" ] && cp "$BENCH_STORE.key" "$store.key"
# A store seeded by an older Gatehouse is upgraded first, as an operator's is.
"$GATEHOUSE_BIN" init --store "$store" > /dev/null
(cd "$work" && umask 077 && for kid in SENDKEY001 RECVKEY001; do openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "AuthKey_$kid.p8" 2>/dev/null; done)

"$python" "$GATEHOUSE_ROOT/Tests/Fixtures/apple_server.py" --port 0 --keys-dir "$work" > "$work/apple.out" 2>&1 &
apple_pid=$!
for _ in $(seq 100); do grep -q '^PORT ' "$work/apple.out" && break; sleep 0.1; done
base="http://127.0.0.1:$(awk '/^PORT / { print $2 }' "$work/apple.out")"
export GATEHOUSE_APPLE_BASE_URL="$base"
config() { curl -sf -H 'Content-Type: application/json' --data-binary "$1" "$base/test/config" > /dev/null; }

gh() { "$GATEHOUSE_BIN" "$@" --store "$store"; }
gh providers set apple --team-id SENDTEAM01 --bundle-id com.example.app > /dev/null
gh apple key import "$work/AuthKey_SENDKEY001.p8" --team-id SENDTEAM01 > /dev/null
gh apple key activate SENDKEY001 > /dev/null
gh apple key import "$work/AuthKey_RECVKEY001.p8" --team-id RECVTEAM01 > /dev/null
gh apple transfer start --to-team RECVTEAM01 > /dev/null
accounts=$("$SQLITE3" "$store" "SELECT count(*) FROM account WHERE providerId = 'apple'")

rate() { python3 -c 'import json,sys; print("%.1f" % json.load(sys.stdin)["requestsPerSecond"])'; }
collect_rate=$(gh apple transfer collect --limit "$sample" --json | rate)
replay_rate=$("$python" "$here/transfer-replay.py" "$base" "$work/AuthKey_SENDKEY001.p8" SENDKEY001 SENDTEAM01 RECVTEAM01 "$sample" 4)
exchange_rate=$(gh apple transfer exchange --limit "$sample" --json | rate)
config '{"latency_ms": 50}'
slow_collect=$(gh apple transfer collect --limit "$slow_sample" --json | rate)
slow_replay=$("$python" "$here/transfer-replay.py" "$base" "$work/AuthKey_SENDKEY001.p8" SENDKEY001 SENDTEAM01 RECVTEAM01 "$slow_sample" 4)
config '{"latency_ms": 0}'

row "transfer: collect, no added latency (concurrency 4)" "$collect_rate" "requests/s" "" "$sample of $accounts Apple accounts"
row "transfer: the stand-in alone, bare client (concurrency 4)" "$replay_rate" "requests/s" "" "same calls, one connection each, nothing written"
row "transfer: collect / bare client" "$(ratio "$collect_rate" "$replay_rate")" "ratio" ">= 0.70" "bound by the stand-in when near 1"
row "transfer: exchange, no added latency (concurrency 4)" "$exchange_rate" "requests/s" "" "$sample accounts"
row "transfer: exchange / bare client" "$(ratio "$exchange_rate" "$replay_rate")" "ratio" ">= 0.70" ""
row "transfer: collect at 50 ms a call (concurrency 4)" "$slow_collect" "requests/s" "" "$slow_sample accounts; 4 / 0.05 s = 80/s at most"
row "transfer: collect / bare client, at 50 ms" "$(ratio "$slow_collect" "$slow_replay")" "ratio" ">= 0.85" "bare client $slow_replay requests/s"

# Plan and apply over every Apple account: the rows the sample did not ask about are filled as Apple would answer.
"$SQLITE3" "$store" >/dev/null <<SQL
.timeout 5000
INSERT INTO gatehouse_apple_transfer_accounts (transfer_id, account_id, user_id, old_sub, updated_at)
  SELECT 1, id, userId, accountId, '2026-01-01T00:00:00.000Z' FROM account
  WHERE providerId = 'apple' AND id NOT IN (SELECT account_id FROM gatehouse_apple_transfer_accounts);
UPDATE gatehouse_apple_transfer_accounts SET transfer_sub = 'ts.' || old_sub WHERE transfer_sub IS NULL;
UPDATE gatehouse_apple_transfer_accounts SET new_sub = 'new.' || old_sub, is_private_email = 1,
  new_email = lower(hex(randomblob(6))) || '@privaterelay.appleid.com' WHERE new_sub IS NULL;
SQL
measure() { # prints "seconds peak-MB" of the command
  /usr/bin/time -f '%e %M' "$@" 2> "$work/time.txt" > "$work/out.txt"
  tail -1 "$work/time.txt" | awk '{ printf "%s %.0f\n", $1, $2 / 1024 }'
}
read -r plan_s plan_mb < <(measure "$GATEHOUSE_BIN" apple transfer plan --store "$store")
plan_id=$(grep -o 'tp_[0-9a-f]*' "$work/out.txt" | head -1)
rewrites=$(grep -o '[0-9]* account(s) to rewrite' "$work/out.txt" | awk '{ print $1 }')
read -r apply_s apply_mb < <(measure "$GATEHOUSE_BIN" apple transfer apply "$plan_id" --ticket BENCH-1 --yes --store "$store")
row "transfer: plan, every Apple account" "$plan_s" "s" "< 60" "$rewrites rewrites of $accounts Apple accounts; peak $plan_mb MB"
row "transfer: apply, one transaction" "$apply_s" "s" "< 300" "peak $apply_mb MB"
row "transfer: peak memory (plan, apply)" "$(( plan_mb > apply_mb ? plan_mb : apply_mb ))" "MB" "< 300" ""
