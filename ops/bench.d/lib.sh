# Helpers for benchmark scripts (sourced).

# median_ms N CMD...: runs CMD N times, prints the median wall time in milliseconds.
median_ms() {
  local n=$1; shift
  local times=()
  for _ in $(seq "$n"); do
    local start end
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true  # timing, not verdicts: health exits 1 or 2 on findings
    end=$(date +%s%N)
    times+=( $(( (end - start) / 1000 )) )
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] / 1000 }'
}

# ratio A B: A / B with two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.2f", a / b }'; }

# row METRIC VALUE UNIT TARGET NOTE
row() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5"; }

# Console load helpers (wrk), shared by 50-console.sh and 70-postgres.sh.

# start_console STORE DIR: starts `gatehouse serve` on STORE (output in DIR/serve.out, DIR/serve.err) and sets
# server_pid and url once it prints its address; returns 1 (with the server's stderr) when it exits or prints none.
start_console() {
  "$GATEHOUSE_BIN" serve --store "$1" --listen 127.0.0.1:0 --quiet > "$2/serve.out" 2> "$2/serve.err" &
  server_pid=$!
  url=""
  for _ in $(seq 200); do
    url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$2/serve.out" | head -1 || true)
    [ -n "$url" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || { cat "$2/serve.err" >&2; return 1; }
    sleep 0.05
  done
  echo "gatehouse serve printed no URL" >&2
  return 1
}

# console_token URL PASSWORD_FILE USER: logs in with curl and prints the access token (never shown elsewhere).
console_token() {
  python3 -c 'import json,sys; print(json.dumps({"username": sys.argv[2], "password": open(sys.argv[1]).read().strip()}))' "$2" "$3" \
    | curl -sf -H 'Content-Type: application/json' --data-binary @- "$1/api/auth/login" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])'
}

# write_users_lua FILE: a wrk script rotating through the ids in $IDS_FILE with $TOKEN as bearer token.
write_users_lua() {
  cat > "$1" <<'LUA'
-- Rotates through the user ids, with the bench admin's bearer token on every request.
local ids = {}
for line in io.lines(os.getenv("IDS_FILE")) do ids[#ids + 1] = line end
wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
local counter = math.random(#ids)
request = function()
  counter = counter % #ids + 1
  return wrk.format("GET", "/api/users/" .. ids[counter])
end
LUA
}

requests_per_second() { awk '/^Requests\/sec:/ { print int($2) }' "$1"; }
total_requests() { awk '/requests in/ { print $1 }' "$1"; }
non_2xx() { awk '/Non-2xx/ { print $NF }' "$1"; }
# The 99th percentile in milliseconds (wrk prints us, ms or s).
p99_ms() {
  awk '$1 == "99%" { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
         if (u == "us") v /= 1000; else if (u == "s") v *= 1000; else if (u == "m") v *= 60000; printf "%.2f", v }' "$1"
}
