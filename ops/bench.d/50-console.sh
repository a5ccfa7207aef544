#!/usr/bin/env bash
# The console under load (wrk, 32 connections): authenticated GET /api/users/{id} on ~1000 random
# users of the 1,000,000-user store (requests/s, p99), static GET / against a bare libmicrohttpd
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
loris_pid=""
cleanup() {
  [ -n "$loris_pid" ] && kill "$loris_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  [ -n "$bare_pid" ] && kill "$bare_pid" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT

start_console "$store" "$work" || exit 1

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
wrk_run "$work/static-console.txt" 5 "$url/"
wrk_run "$work/static-bare.txt" 5 "http://127.0.0.1:$bare_port/"
kill "$bare_pid" 2>/dev/null || true
bare_pid=""
console_static=$(requests_per_second "$work/static-console.txt")
bare_static=$(requests_per_second "$work/static-bare.txt")
row "console: static GET / at $connections connections" "$console_static" "req/s" "" "bare libmicrohttpd: $bare_static req/s"
row "console: static GET / vs bare libmicrohttpd" "$(ratio "$console_static" "$bare_static")" "ratio" ">= 0.70" "same run, same body ($(wc -c < "$GATEHOUSE_ROOT/Public/index.html") bytes)"

# Authenticated user detail.
wrk_run "$work/users.txt" "$seconds" "$url" -s "$work/users.lua"
rps=$(requests_per_second "$work/users.txt")
errors=$(non_2xx "$work/users.txt")
row "console: GET /api/users/{id}, $connections connections" "$rps" "req/s" ">= 5000" "1000 random users of $BENCH_USERS; non-2xx: ${errors:-0}"
row "console: GET /api/users/{id} p99 latency" "$(p99_ms "$work/users.txt")" "ms" "< 20 ms" "wrk --latency, ${seconds} s"

# Memory after about 1,000,000 requests (every request so far counts).
done_requests=$(( $(total_requests "$work/static-console.txt") + $(total_requests "$work/users.txt") ))
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
import socket, sys, time
port, count, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
starts = [b"", b"GET /index.ht", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "]
def opened(i):
    s = socket.create_connection(("127.0.0.1", port)); s.setblocking(False)
    if starts[i % 3]: s.send(starts[i % 3])
    return s
conns = [opened(i) for i in range(count)]
print("holding", flush=True)
reopened, end = 0, time.time() + seconds
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
wrk -t1 -c4 -d5s --latency -s "$work/me.lua" "$url/api/auth/me" > "$work/me-quiet.txt"
fresh_quiet=$(python3 "$work/fresh.py" "$port" 50)
python3 "$work/slowloris.py" "$port" 600 25 > "$work/slowloris.out" &
loris_pid=$!
for _ in $(seq 100); do grep -q holding "$work/slowloris.out" 2>/dev/null && break; sleep 0.1; done
sleep 2
wrk -t1 -c4 -d5s --latency -s "$work/me.lua" "$url/api/auth/me" > "$work/me-loris.txt"
fresh_loris=$(python3 "$work/fresh.py" "$port" 50)
wait "$loris_pid" || true
loris_pid=""
quiet_p99=$(p99_ms "$work/me-quiet.txt")
loris_p99=$(p99_ms "$work/me-loris.txt")
row "console: GET /api/auth/me p99, 600 slowloris connections vs none" "$(ratio "$loris_p99" "$quiet_p99")" "ratio" "< 3" \
  "same run: $loris_p99 ms vs $quiet_p99 ms; non-2xx with: $(non_2xx "$work/me-loris.txt"); $(tail -1 "$work/slowloris.out")"
row "console: slowest fresh GET / among 50, 600 slowloris connections" "$fresh_loris" "ms" "< 1000 ms" "without them: $fresh_quiet ms"
