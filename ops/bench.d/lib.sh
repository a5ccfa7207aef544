# shellcheck shell=bash
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

# start_console STORE DIR [OPTION...]: starts `gatehouse serve` on STORE (output in DIR/serve.out, DIR/serve.err), with
# any further serve options, and sets server_pid and url once it prints its address; returns 1 (with the server's
# stderr) when it exits or prints none.
start_console() {
  local store=$1 dir=$2; shift 2
  "$GATEHOUSE_BIN" serve --store "$store" --listen 127.0.0.1:0 --quiet "$@" > "$dir/serve.out" 2> "$dir/serve.err" &
  server_pid=$!
  url=""
  # Up to 60 s: a store of 10,000,000 users opens as fast as a small one, but a shared machine may be slow.
  for _ in $(seq 1200); do
    url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$dir/serve.out" | head -1 || true)
    [ -n "$url" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || { cat "$dir/serve.err" >&2; return 1; }
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
non_2xx() { awk '/Non-2xx/ { n = $NF } END { print n + 0 }' "$1"; }
# The 99th percentile in milliseconds (wrk prints us, ms or s).
p99_ms() {
  awk '$1 == "99%" { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
         if (u == "us") v /= 1000; else if (u == "s") v *= 1000; else if (u == "m") v *= 60000; printf "%.2f", v }' "$1"
}

# Alternating pairs: a ratio of two figures measured one after the other on a shared machine says as much about
# the moment as about the code (static `/` against bare libmicrohttpd measured 0.82 and 0.60 in two runs). Every
# ratio row is therefore the median of BENCH_PAIRS (default 5) pairs, baseline then subject, alternating, each pair's
# ratio taken on its own, with the spread (min–max) beside it.

# wall_ms CMD...: runs CMD once (output discarded, exit status ignored: health exits 1 or 2 on findings) and prints
# its wall time in milliseconds.
wall_ms() {
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || true
  end=$(date +%s%N)
  awk -v ns=$(( end - start )) 'BEGIN { printf "%.2f", ns / 1000000 }'
}

# paired_ratio SUBJECT BASELINE: runs BASELINE then SUBJECT, BENCH_PAIRS times; each is one command (usually a
# function of the calling script) that prints one number (a time, a rate). Prints nine fields:
#   ratio ratio_min ratio_max subject subject_min subject_max baseline baseline_min baseline_max
# where ratio is the median of the pairs' subject / baseline and subject and baseline are the medians of their runs.
# Example:
#   show() { median_ms 5 "$GATEHOUSE_BIN" users show "$EMAIL"; }
#   shell() { median_ms 5 "$SQLITE3" -readonly "$BENCH_STORE" ".read show.sql"; }
#   read -r r r_lo r_hi ms _ _ base _ _ < <(paired_ratio show shell)
#   row "users show / sqlite3" "$(spread "$r" "$r_lo" "$r_hi")" x "<= 3" "$(pairs_note)"
paired_ratio() {
  local subject=$1 baseline=$2 pairs=${BENCH_PAIRS:-5} b s lines=""
  for _ in $(seq "$pairs"); do
    b=$($baseline)
    s=$($subject)
    lines+="$s $b"$'\n'
  done
  printf '%s' "$lines" | pair_stats
}

# pair_stats: reads "subject baseline" lines (one a pair) and prints paired_ratio's nine fields, for pairs whose runs
# give more than one figure each (run them, then pass each figure's column here).
pair_stats() {
  awk '
    function sort(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } }
    function med(a, n) { return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    NF == 2 { n++; s[n] = $1; b[n] = $2; if ($2 > 0) { m++; r[m] = $1 / $2 } }
    END {
      if (n == 0) { print "n/a n/a n/a n/a n/a n/a n/a n/a n/a"; exit }
      sort(s, n); sort(b, n)
      if (m > 0) { sort(r, m); printf "%.2f %.2f %.2f ", med(r, m), r[1], r[m] } else printf "n/a n/a n/a "
      printf "%s %s %s %s %s %s\n", fmt(med(s, n)), fmt(s[1]), fmt(s[n]), fmt(med(b, n)), fmt(b[1]), fmt(b[n])
    }
    function fmt(v) { return v >= 100 ? sprintf("%.0f", v) : sprintf("%.2f", v) }'
}

# spread MEDIAN MIN MAX: a median with its spread beside it, as the table shows it: "0.71 (0.60–0.82)".
spread() { printf '%s (%s–%s)' "$1" "$2" "$3"; }

# pairs_note: says how a paired figure was measured.
pairs_note() { echo "median of ${BENCH_PAIRS:-5} alternating pairs (baseline, subject), spread min–max"; }

# judge VALUE UNIT TARGET: "met" or "MISSED" when TARGET is a bound (`< 50 ms`, `<= 3`, `>= 0.70`, `< 10 min`), empty
# otherwise (`-`, `~1.5`, none). VALUE's first number is judged (a paired row reads "0.71 (0.60–0.82)": its median);
# a target in ms, s or min is converted to the row's unit when that is one of them.
judge() {
  awk -v value="$1" -v unit="$2" -v target="$3" 'BEGIN {
    scale["ms"] = 1; scale["s"] = 1000; scale["min"] = 60000
    if (!match(target, /^(<=|>=|<|>|≤|≥) *[0-9][0-9,]*(\.[0-9]+)?/)) exit
    bound = substr(target, 1, RLENGTH); rest = substr(target, RLENGTH + 1)
    op = bound; sub(/ *[0-9].*$/, "", op)
    limit = bound; sub(/^[^0-9]*/, "", limit); gsub(/,/, "", limit); limit += 0
    if (match(rest, /^ *(ms|s|min)([^a-z]|$)/)) {
      tunit = rest; sub(/^ */, "", tunit); sub(/[^a-z].*$/, "", tunit)
      if ((unit in scale) && (tunit in scale)) limit = limit * scale[tunit] / scale[unit]
    }
    v = value; gsub(/,/, "", v)
    if (!match(v, /^[0-9]+(\.[0-9]+)?/)) { print "no figure"; exit }
    v = substr(v, 1, RLENGTH) + 0
    ok = (op == "<") ? v < limit : (op == "<=" || op == "≤") ? v <= limit : (op == ">") ? v > limit : v >= limit
    print ok ? "met" : "MISSED"
  }'
}

# Store sizes. Every target was set at 1,000,000 users; a run above that (the documented 10,000,000-user run,
# BENCH_USERS=10000000) is judged against issue 29's targets instead: per-user lookups and the console within 1.2x of
# their 1M figures, `accounts check` < 15 s, `users duplicates` < 60 s and < 500 MB, health < 2 s, seed < 10 min.

# big_store: true when this run is above 1,000,000 users.
big_store() { [ "${BENCH_USERS:-1000000}" -gt 1000000 ]; }

# at_scale TARGET_1M TARGET_10M: the target this run is judged against.
at_scale() { if big_store; then echo "$2"; else echo "$1"; fi; }

# recorded_1m METRIC: METRIC's value in the 1,000,000-user section of ops/PERFORMANCE.md (written by the last 1M run),
# or nothing.
recorded_1m() {
  awk -v metric="$1" '
    $0 == "<!-- ops/bench 1000000 users: begin -->" { inside = 1; next }
    $0 == "<!-- ops/bench 1000000 users: end -->" { inside = 0 }
    inside && /^\|/ {
      split($0, cell, "|"); name = cell[2]; value = cell[3]
      gsub(/^ +| +$/, "", name); gsub(/,/, "", value); sub(/^ +/, "", value)
      if (name == metric && match(value, /^[0-9]+(\.[0-9]+)?/)) { print substr(value, 1, RLENGTH); exit }
    }' "${GATEHOUSE_ROOT:-.}/ops/PERFORMANCE.md" 2>/dev/null
}

# vs_1m METRIC lower|higher TARGET_1M: at 1M (or below) TARGET_1M; above, "within 1.2x of the 1M figure": METRIC's value
# in the 1,000,000-user section of ops/PERFORMANCE.md (written by the last 1M run), times 1.2 for a time (lower is
# better), divided by 1.2 for a rate. Without a recorded 1M figure the target says so and is not judged.
vs_1m() {
  local metric=$1 better=$2 small=$3 figure
  if ! big_store; then echo "$small"; return; fi
  figure=$(recorded_1m "$metric")
  if [ -z "$figure" ]; then echo "within 1.2x of 1M (no 1M figure recorded)"; return; fi
  if [ "$better" = lower ]; then
    awk -v f="$figure" 'BEGIN { printf "<= %.4g (1.2 x 1M: %s)", f * 1.2, f }'
  else
    awk -v f="$figure" 'BEGIN { printf ">= %.4g (1M: %s / 1.2)", f / 1.2, f }'
  fi
}
