#!/usr/bin/env bash
# D1 beside SQLite (issue 25): the same demo data (BENCH_D1_USERS, default 100,000) as a SQLite file and as a D1
# database behind the local D1 API server (Tests/Fixtures/d1_server.py) adding 50 ms to every request, a realistic
# distance to Cloudflare (BENCH_D1_LATENCY_MS). Each job is timed on both and its API requests counted; a scan's time is
# set beside the time its pages take to cross the wire: the same requests replayed by a bare client (d1-replay.py),
# which pays the latency, the server's work and the bytes, and parses nothing.
# Prints TSV lines: metric<TAB>value<TAB>unit<TAB>target<TAB>note
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
source "$here/../lib/setup.sh"
source "$here/../lib/d1.sh"

BIN=${GATEHOUSE_BIN:?GATEHOUSE_BIN is not set}
USERS=${BENCH_D1_USERS:-100000}
LATENCY=${BENCH_D1_LATENCY_MS:-50}
RUNS=${BENCH_RUNS:-11}
work="$BENCH_DIR/d1"
rm -rf "$work"
mkdir -p "$work"
export GATEHOUSE_KEY_DIR="$work/keys"

# The SQLite store, seeded by Gatehouse.
sqlite="$work/store.sqlite"
"$BIN" init --store "$sqlite" > /dev/null
"$BIN" demo seed --users "$USERS" --store "$sqlite" > /dev/null
# An admin for the console's figure.
head -c 24 /dev/urandom | base64 | tr -d '/+=' > "$work/admin.pw"
"$BIN" admins add bench --role viewer --password-file "$work/admin.pw" --store "$sqlite" > /dev/null

# The local D1 API with the same rows: a database made by the server, its file replaced by a copy of the store.
start_test_d1 --latency-ms "$LATENCY" --keep-bodies
export CLOUDFLARE_API_BASE_URL="$GATEHOUSE_TEST_D1_URL"
made=$(curl -sf -X POST -H 'Content-Type: application/json' -d '{}' "$GATEHOUSE_TEST_D1_CONTROL/databases")
database=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["database"])' <<< "$made")
file=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["file"])' <<< "$made")
"$SQLITE3" "$sqlite" ".backup '$file'"
"$SQLITE3" "$file" "PRAGMA journal_mode = DELETE; CREATE TABLE IF NOT EXISTS _cf_KV (key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID;" > /dev/null
d1="d1://$GATEHOUSE_TEST_D1_ACCOUNT/$database"
mkdir -p "$GATEHOUSE_KEY_DIR"
cp "$sqlite.key" "$GATEHOUSE_KEY_DIR/d1_${GATEHOUSE_TEST_D1_ACCOUNT}_${database}.key"

reset() { curl -sf -X POST "$GATEHOUSE_TEST_D1_CONTROL/reset" > /dev/null; }
requests() { curl -sf "$GATEHOUSE_TEST_D1_CONTROL/requests" | python3 -c 'import json,sys; print(json.load(sys.stdin)["count"])'; }
# requests_of CMD...: the API requests one run of CMD makes.
requests_of() { reset; "$@" > /dev/null 2>&1 || true; requests; }

id=$("$BIN" users search a --limit 1 --json --store "$sqlite" | python3 -c 'import json,sys; print(json.load(sys.stdin)["users"][0]["id"])')
email=$("$BIN" users search a --limit 1 --json --store "$sqlite" | python3 -c 'import json,sys; print(json.load(sys.stdin)["users"][0]["email"])')
note="$USERS users, $LATENCY ms a request"

row "d1: users show" "$(median_ms "$RUNS" "$BIN" users show "$id" --store "$d1")" ms "< 200 ms" "$note; SQLite $(median_ms "$RUNS" "$BIN" users show "$id" --store "$sqlite") ms"
row "d1: users show requests" "$(requests_of "$BIN" users show "$id" --store "$d1")" requests "<= 3" "$note"
row "d1: users search (email)" "$(median_ms "$RUNS" "$BIN" users search "$email" --store "$d1")" ms "" "$note; SQLite $(median_ms "$RUNS" "$BIN" users search "$email" --store "$sqlite") ms"
row "d1: users search requests" "$(requests_of "$BIN" users search "$email" --store "$d1")" requests "" "$note"

# policy set: alternating values so every run writes.
i=0
policy() { i=$((i + 1)); "$BIN" policy set linkSocial.allowDifferentEmails "$([ $((i % 2)) -eq 0 ] && echo true || echo false)" --reason "bench $i" --store "$1"; }
row "d1: policy set" "$(median_ms 5 policy "$d1")" ms "" "$note; process start to exit"
row "d1: policy set requests" "$(requests_of policy "$d1")" requests "<= 2" "$note; the write itself is one (target: 2 in all, open included, when nothing races)"

# merge apply: a planned pair of the seed's split identities.
pair=$("$BIN" users duplicates --json --limit 1 --store "$sqlite" | python3 -c 'import json,sys; c=json.load(sys.stdin)["candidates"][0]; print(c["earlier"]["id"], c["later"]["id"])')
read -r earlier later <<< "$pair"
# Every decision a pair of the seed may need, taken for U1 (the bench measures the apply, not the choice).
plan=$("$BIN" merge plan --from "$earlier" --into "$later" --keep-email target --keep-subscription target --keep-password target \
  --same-provider both --json --store "$d1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["planID"])')
reset
start=$(date +%s%N)
"$BIN" merge apply "$plan" --ticket BENCH --yes --store "$d1" > /dev/null
end=$(date +%s%N)
row "d1: merge apply" "$(( (end - start) / 1000000 ))" ms "" "$note; process start to exit"
row "d1: merge apply requests" "$(requests)" requests "<= 2" "$note; its writes are one request (target: 2 in all when nothing races)"

# Scans: time against the time their pages take to cross the wire (the same requests replayed, nothing parsed);
# each the median of 3 runs, each run followed by its replay.
scan() {
  local label=$1; shift
  local start end count times=() wires=() ratios=()
  for _ in 1 2 3; do
    reset
    start=$(date +%s%N)
    "$BIN" "$@" --store "$d1" > /dev/null 2>&1 || true
    end=$(date +%s%N)
    count=$(requests)
    wire=$(D1_REPLAY_DATABASE="$database" python3 "$here/d1-replay.py" "$GATEHOUSE_TEST_D1_CONTROL" "$GATEHOUSE_TEST_D1_URL")
    times+=($(( (end - start) / 1000000 )))
    wires+=("$wire")
    ratios+=("$(awk -v t="$(( (end - start) / 1000000 ))" -v w="$wire" 'BEGIN { printf "%.2f", t / w }')")
  done
  local ratio
  ratio=$(printf '%s\n' "${ratios[@]}" | sort -n | sed -n 2p)
  row "d1: $label" "$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p)" ms "" "$note; $count requests; SQLite $(median_ms 1 "$BIN" "$@" --store "$sqlite") ms"
  row "d1: $label / its pages on the wire" "$ratio" x "<= 2" "$note; median of 3 (${ratios[*]}); the pages replayed by a bare client took ${wires[*]} ms ($count requests x $LATENCY ms = $(( count * LATENCY )) ms of latency)"
}
scan "users duplicates" users duplicates --json
scan "accounts check" accounts check --json
scan "health" health

# The console's user detail: requests per page view, the token check included.
if start_console "$d1" "$work"; then
  token=$(console_token "$url" "$work/admin.pw" bench)
  curl -sf -H "Authorization: Bearer $token" "$url/api/users/$id" > /dev/null
  reset
  start=$(date +%s%N)
  for _ in 1 2 3 4 5; do curl -sf -H "Authorization: Bearer $token" "$url/api/users/$id" > /dev/null; done
  end=$(date +%s%N)
  views=$(requests)
  row "d1: console user detail" "$(( (end - start) / 5000000 ))" ms "" "$note; one view, median of 5 not taken: their mean"
  row "d1: console user detail requests" "$(awk -v r="$views" 'BEGIN { printf "%.1f", r / 5 }')" requests "<= 1" "$note; per view, token check included"
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
else
  row "d1: console user detail" FAILED "" "" "the console did not start on D1"
fi
