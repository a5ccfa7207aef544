#!/usr/bin/env bash
# Google's Cross-Account Protection receiver (`google risc serve`) on a copy of the BENCH_USERS-user store, against
# the local Google stand-in (Tests/Fixtures/google_server.py): wrk POSTs pre-signed sessions-revoked tokens, each for
# another Google user of the store and with its own jti (so every one is verified, recorded and acted on), with 32
# connections: events/s and p99. Then one connection at a time: the p50 of one event from request to answer (verify,
# record, end the user's sessions, audit), the action's cost on a store of this size.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
source "$here/../lib/setup.sh"
ensure_debs wrk
python="${GATEHOUSE_ROOT:-.}/.venv/bin/python"
count=${BENCH_RISC_TOKENS:-30000}
seconds=${BENCH_RISC_SECONDS:-10}

work="$BENCH_DIR/risc"
store="$work/risc.sqlite"
rm -rf "$work"; mkdir -p "$work"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
"$SQLITE3" "$BENCH_STORE" ".backup '$store'"
cp "$BENCH_STORE.key" "$store.key"
# A store seeded by an older Gatehouse is upgraded first, as an operator's is.
"$GATEHOUSE_BIN" init --store "$store" > /dev/null

"$python" "$GATEHOUSE_ROOT/Tests/Fixtures/google_server.py" --port 0 > "$work/google.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q '^PORT ' "$work/google.out" && break; sleep 0.1; done
google="http://127.0.0.1:$(awk '/^PORT / { print $2 }' "$work/google.out")"
export GATEHOUSE_GOOGLE_ACCOUNTS_BASE_URL="$google"
"$GATEHOUSE_BIN" providers set google --client-id web=web-client.apps.googleusercontent.com --store "$store" > /dev/null

# Pre-signed tokens, one per Google user, in a file wrk's script reads.
"$SQLITE3" "$store" "SELECT accountId FROM account WHERE providerId = 'google' ORDER BY random() LIMIT $count" > "$work/subs.txt"
"$python" - "$google" "$work/subs.txt" "$work/tokens.txt" <<'PY'
import json, sys, urllib.request
base, subs_file, out = sys.argv[1:4]
subs = [line.strip() for line in open(subs_file) if line.strip()]
with open(out, "w") as handle:
    for start in range(0, len(subs), 1000):
        body = json.dumps({"event": "sessions-revoked", "subs": subs[start:start + 1000]}).encode()
        with urllib.request.urlopen(urllib.request.Request(base + "/test/sign-many", data=body, method="POST"), timeout=300) as answer:
            for token in json.load(answer)["tokens"]:
                handle.write(token + "\n")
PY
cat > "$work/post.lua" <<'LUA'
-- POSTs the pre-signed tokens in turn; each of wrk's threads takes its own slice, so no token is sent twice.
local tokens = {}
for line in io.lines(os.getenv("TOKENS_FILE")) do tokens[#tokens + 1] = line end
local threads = 0
function setup(thread) thread:set("index", threads); threads = threads + 1 end
local counter = 0
function init(args) counter = (index or 0) * math.floor(#tokens / 2) end
request = function()
  counter = counter % #tokens + 1
  return wrk.format("POST", "/risc", { ["Content-Type"] = "application/secevent+jwt" }, tokens[counter])
end
LUA
# The load takes the first four fifths of the tokens; one connection, afterwards, the rest (none of them recorded yet).
load_count=$(( count * 4 / 5 ))
head -n "$load_count" "$work/tokens.txt" > "$work/load-tokens.txt"
tail -n +"$(( load_count + 1 ))" "$work/tokens.txt" > "$work/one-tokens.txt"

"$GATEHOUSE_BIN" google risc serve --listen 127.0.0.1:0 --path /risc --quiet --store "$store" > "$work/serve.out" 2> "$work/serve.err" &
pids+=($!)
for _ in $(seq 100); do grep -q 'receiver on' "$work/serve.out" && break; sleep 0.1; done
url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$work/serve.out" | head -1)

TOKENS_FILE="$work/load-tokens.txt" wrk -t2 -c32 -d"${seconds}s" --latency -s "$work/post.lua" "$url/risc" > "$work/load.txt"
recorded=$("$SQLITE3" "$store" "SELECT count(*) FROM gatehouse_google_events")
TOKENS_FILE="$work/one-tokens.txt" wrk -t1 -c1 -d2s --latency -s "$work/post.lua" "$url/risc" > "$work/one.txt"
p50=$(awk '$1 == "50%" { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v); if (u == "us") v /= 1000; else if (u == "s") v *= 1000; printf "%.2f", v }' "$work/one.txt")

row "risc: receiver, 32 connections" "$(requests_per_second "$work/load.txt")" "events/s" ">= 1000" "$(total_requests "$work/load.txt") requests in ${seconds} s, non-2xx $(non_2xx "$work/load.txt")${recorded:+; }$recorded events recorded and acted on (each token sent once)"
row "risc: receiver p99, 32 connections" "$(p99_ms "$work/load.txt")" "ms" "< 50 ms" "wrk --latency; each token distinct (its own jti and user)"
row "risc: one event, request to answer (p50)" "$p50" "ms" "< 20 ms" "one connection: verify, record, end the user's sessions, audit, on a $(echo "$BENCH_USERS" | sed ':a; s/\B[0-9]\{3\}\>/,&/; ta')-user store"
