#!/usr/bin/env bash
# The console under load (wrk, 32 connections): authenticated GET /api/users/{id} on ~1000 random
# users of the BENCH_USERS-user store (requests/s, p99), static GET / against a bare libmicrohttpd
# server answering a constant body (bare-mhd.c, built here) measured in the same run, and the
# server's memory after about 1,000,000 requests, and the console's answers while one local process
# holds 600 slowloris connections (vs none, same run). Works on a copy of BENCH_STORE; the original is
# never modified.
#
# BENCH_CONSOLE_SECONDS (default 10): the measured API run. BENCH_CONSOLE_REQUESTS (default 1000000):
# requests to reach before reading the memory. BENCH_CONSOLE_MAX_SECONDS (default 300): the most
# extra load time spent reaching them; the count reached is reported either way.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
source "$here/../lib/setup.sh"
ensure_debs wrk libmicrohttpd-dev pkg-config gcc

seconds=${BENCH_CONSOLE_SECONDS:-10}
want=${BENCH_CONSOLE_REQUESTS:-1000000}
max_extra=${BENCH_CONSOLE_MAX_SECONDS:-300}
connections=32
work="$BENCH_DIR/console"
rm -rf "$work"
mkdir -p "$work"
store="$work/console.sqlite"
"$SQLITE3" "$BENCH_STORE" ".backup '$store'"
cp "$BENCH_STORE.key" "$store.key"
chmod 600 "$store.key"

# An admin for the bench: a password file, a viewer (the route's minimum role).
head -c 24 /dev/urandom | base64 | tr -d '/+=' > "$work/admin.pw"
"$GATEHOUSE_BIN" admins add bench --role viewer --password-file "$work/admin.pw" --store "$store" >/dev/null

server_pid=""
bare_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  [ -n "$bare_pid" ] && kill "$bare_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  # The copy is as large as the store (about 19 GB at 10M users): not kept after the run.
  rm -f "$store" "$store"-wal "$store"-shm "$store".key
}
trap cleanup EXIT

# The slowloris rows hold 600 connections from 127.0.0.1, one address: the console's limit per address (64 by default)
# would close all but 64 of them, over and over, which is not what the rows measure. No limit per address here.
start_console "$store" "$work" --max-connections-per-address 0 || exit 1

# Log in with curl; the token goes to the Lua script through the environment, never to the output.
TOKEN=$(console_token "$url" "$work/admin.pw" bench)
export TOKEN

# ~1000 random users.
"$SQLITE3" "$store" "SELECT id FROM \"user\" ORDER BY random() LIMIT 1000" > "$work/ids.txt"
export IDS_FILE="$work/ids.txt"
id=$(head -1 "$IDS_FILE")
status=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$url/api/users/$id")
[ "$status" = 200 ] || { echo "50-console: GET /api/users/$id answered $status" >&2; exit 1; }

write_users_lua "$work/users.lua"

# wrk_run OUT DURATION URL [wrk options]: runs wrk, keeps its report in OUT.
wrk_run() {
  local out=$1 duration=$2 target=$3; shift 3
  wrk -t2 -c"$connections" -d"${duration}s" --latency "$@" "$target" > "$out"
}

# Static GET /: the console and the bare server, one after the other in this run.
cc -O2 -o "$work/bare-mhd" "$here/bare-mhd.c" $(pkg-config --cflags --libs libmicrohttpd)
"$work/bare-mhd" "$GATEHOUSE_ROOT/Public/index.html" > "$work/bare.out" &
bare_pid=$!
bare_port=""
for _ in $(seq 100); do bare_port=$(head -1 "$work/bare.out" 2>/dev/null || true); [ -n "$bare_port" ] && break; sleep 0.05; done
# Alternating pairs (paired_ratio): bare server, then console, BENCH_PAIRS times; every console run's report is kept
# (its requests count towards the memory figure below).
static_console() {
  local out; out=$(mktemp "$work/static-console.XXXXXX.txt")
  wrk_run "$out" 5 "$url/"
  requests_per_second "$out"
}
static_bare() {
  wrk_run "$work/static-bare.txt" 5 "http://127.0.0.1:$bare_port/"
  requests_per_second "$work/static-bare.txt"
}
read -r static_r static_lo static_hi console_static cs_lo cs_hi bare_static bs_lo bs_hi < <(paired_ratio static_console static_bare)
kill "$bare_pid" 2>/dev/null || true
bare_pid=""
row "console: static GET / at $connections connections" "$console_static" "req/s" "" "median (range $cs_lo-$cs_hi); bare libmicrohttpd: $bare_static req/s (range $bs_lo-$bs_hi)"
row "console: static GET / vs bare libmicrohttpd" "$(spread "$static_r" "$static_lo" "$static_hi")" "ratio" ">= 0.70" "same body ($(wc -c < "$GATEHOUSE_ROOT/Public/index.html") bytes); 5 s each; $(pairs_note)"

# Authenticated user detail: a first pass over the same 1000 users reads their pages into the cache (at 10M the store
# is most of the machine's memory), then the measured run; the first pass's p99 is in the note.
wrk_run "$work/users-first.txt" 3 "$url" -s "$work/users.lua"
wrk_run "$work/users.txt" "$seconds" "$url" -s "$work/users.lua"
rps=$(requests_per_second "$work/users.txt")
errors=$(non_2xx "$work/users.txt")
row "console: GET /api/users/{id}, $connections connections" "$rps" "req/s" "$(vs_1m "console: GET /api/users/{id}, $connections connections" higher ">= 5000")" "1000 random users of $BENCH_USERS; non-2xx: ${errors:-0}"
row "console: GET /api/users/{id} p99 latency" "$(p99_ms "$work/users.txt")" "ms" "$(vs_1m "console: GET /api/users/{id} p99 latency" lower "< 20 ms")" "wrk --latency, ${seconds} s, after a 3 s first pass over the same users (its p99: $(p99_ms "$work/users-first.txt") ms)"

# Memory after about 1,000,000 requests (every request so far counts).
done_requests=$(awk '/requests in/ { n += $1 } END { print n + 0 }' "$work"/static-console.*.txt "$work/users-first.txt" "$work/users.txt")
if [ "$done_requests" -lt "$want" ] && [ "$rps" -gt 0 ]; then
  extra=$(( (want - done_requests) / rps + 2 ))
  [ "$extra" -gt "$max_extra" ] && extra=$max_extra
  wrk_run "$work/users-more.txt" "$extra" "$url" -s "$work/users.lua"
  done_requests=$(( done_requests + $(total_requests "$work/users-more.txt") ))
fi
rss_kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$server_pid/status")
row "console: server RSS after load" "$(awk -v k="$rss_kb" 'BEGIN { printf "%.1f", k / 1024 }')" "MB" "< 100 MB" "after $done_requests requests"

# Slowloris: one local process holds 600 slow or silent connections (silent, half a request line, or a
# header trickled a byte a second; each closed one is reopened). Measured in this run against the same
# console without them: wrk's p99 on GET /api/auth/me (4 kept-alive connections), and the slowest of
# 50 fresh connections each sending GET / as a browser would (the target: answered within a second).
cat > "$work/slowloris.py" <<'PY'
import signal, socket, sys, time
port, count, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stopped when its round is measured
starts = [b"", b"GET /index.ht", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "]
def opened(i):
    s = socket.create_connection(("127.0.0.1", port)); s.setblocking(False)
    if starts[i % 3]: s.send(starts[i % 3])
    return s
conns = [opened(i) for i in range(count)]
print("holding", flush=True)
reopened, end = 0, time.time() + seconds
try:
    while time.time() < end:
        for i, s in enumerate(conns):
            try:
                if i % 3 == 2: s.send(b"a")
                if s.recv(1) == b"": raise ConnectionError
            except BlockingIOError:
                pass
            except OSError:
                s.close(); conns[i] = opened(i); reopened += 1
        time.sleep(1)
finally:
    print("reopened", reopened, flush=True)
PY
cat > "$work/fresh.py" <<'PY'
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
worst = 0.0
for _ in range(n):
    t = time.time()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % port)
        ok = s.recv(12).startswith(b"HTTP/1.1 200")
        s.close()
    except OSError:
        ok = False
    worst = max(worst, (time.time() - t) * 1000 if ok else 5000.0)
    time.sleep(0.05)
print("%.1f" % worst)
PY
port=${url##*:}; port=${port%/}
cat > "$work/me.lua" <<'LUA'
wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
LUA
# Alternating pairs (paired_ratio): without, then with the 600 connections; each round's slowest fresh GET / is kept.
: > "$work/fresh-quiet.all"
: > "$work/fresh-loris.all"
: > "$work/slowloris.all"
me_quiet() {
  wrk -t1 -c4 -d5s --latency -s "$work/me.lua" "$url/api/auth/me" > "$work/me-quiet.txt"
  python3 "$work/fresh.py" "$port" 50 >> "$work/fresh-quiet.all"
  p99_ms "$work/me-quiet.txt"
}
me_loris() {
  local pid
  python3 "$work/slowloris.py" "$port" 600 60 > "$work/slowloris.out" &
  pid=$!
  for _ in $(seq 100); do grep -q holding "$work/slowloris.out" 2>/dev/null && break; sleep 0.1; done
  sleep 2
  wrk -t1 -c4 -d5s --latency -s "$work/me.lua" "$url/api/auth/me" > "$work/me-loris.txt"
  python3 "$work/fresh.py" "$port" 50 >> "$work/fresh-loris.all"
  awk '/Non-2xx/ { n += $NF } END { print "non-2xx", n + 0 }' "$work/me-loris.txt" >> "$work/slowloris.all"
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  tail -1 "$work/slowloris.out" >> "$work/slowloris.all"
  p99_ms "$work/me-loris.txt"
}
read -r loris_r loris_lo loris_hi loris_p99 _ _ quiet_p99 _ _ < <(paired_ratio me_loris me_quiet)
# median and range of the rounds' slowest fresh GET /
fresh_stats() { sort -n "$1" | awk '{ a[NR] = $1 } END { if (NR) printf "%s (range %s-%s)", a[int((NR + 1) / 2)], a[1], a[NR]; else print "n/a" }'; }
fresh_loris=$(fresh_stats "$work/fresh-loris.all")
fresh_quiet=$(fresh_stats "$work/fresh-quiet.all")
loris_non2xx=$(awk '$1 == "non-2xx" { n += $2 } END { print n + 0 }' "$work/slowloris.all")
reopened=$(awk '$1 == "reopened" { n += $2 } END { print n + 0 }' "$work/slowloris.all")
row "console: GET /api/auth/me p99, 600 slowloris connections vs none" "$(spread "$loris_r" "$loris_lo" "$loris_hi")" "ratio" "< 3" \
  "medians: $loris_p99 ms vs $quiet_p99 ms; non-2xx with: $loris_non2xx; reopened $reopened; no limit per address; $(pairs_note)"
row "console: slowest fresh GET / among 50, 600 slowloris connections" "${fresh_loris%% *}" "ms" "< 1000 ms" \
  "median of ${BENCH_PAIRS:-5} rounds ${fresh_loris#* }; without them: $fresh_quiet ms"
