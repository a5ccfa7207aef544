#!/usr/bin/env bash
# Seeding the benchmark store (its time, rate and peak memory), and the CLI's cold start.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

fresh="$BENCH_DIR/seeding-$BENCH_USERS.sqlite"
rm -f "$fresh" "$fresh"-wal "$fresh"-shm "$fresh".key
if ! /usr/bin/time -f '%e %M' -o "$BENCH_DIR/seed.time" \
  "$GATEHOUSE_BIN" demo seed --store "$fresh" --users "$BENCH_USERS" --seed 1 --json -q > "$BENCH_DIR/seed.json" 2> "$BENCH_DIR/seed.err"; then
  # A seed that stops part-way (a constraint it breaks, a full disk) leaves no
  # store to measure: say how far it got, and stop the run (ops/bench checks that BENCH_STORE exists).
  users=$("$SQLITE3" -readonly "$fresh" 'SELECT count(*) FROM "user"' 2>/dev/null || echo "?")
  row "seed $BENCH_USERS users: wall time" "FAILED" "s" "$(at_scale "< 60 s" "< 10 min")" \
    "stopped after $(tail -n 1 "$BENCH_DIR/seed.time") (s, KB): $users users written; $(tail -n 1 "$BENCH_DIR/seed.err" | tr '\t' ' ')"
  cat "$BENCH_DIR/seed.err" >&2
  exit 1
fi
read -r seconds peak_kb < <(tail -n 1 "$BENCH_DIR/seed.time")
rows=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sum(r[k] for k in ("users","accounts","sessions","syncUsers","workspaces","subscriptions","roles","verifications")))' "$BENCH_DIR/seed.json")
row "seed $BENCH_USERS users: wall time" "$seconds" "s" "$(at_scale "< 60 s" "< 10 min")" "$rows rows in all"
row "seed: rows per second" "$(awk -v r="$rows" -v s="$seconds" 'BEGIN { printf "%.0f", r / s }')" "rows/s" "" ""
row "seed: peak memory (RSS)" "$(awk -v k="$peak_kb" 'BEGIN { printf "%.1f", k / 1024 }')" "MB" "< 200 MB" ""
# The seeded store becomes the store the other benchmarks read.
rm -f "$BENCH_STORE" "$BENCH_STORE"-wal "$BENCH_STORE"-shm "$BENCH_STORE".key
"$SQLITE3" "$fresh" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
mv "$fresh" "$BENCH_STORE"
mv "$fresh".key "$BENCH_STORE".key
rm -f "$fresh"-wal "$fresh"-shm
row "store size on disk" "$(du -m "$BENCH_STORE" | cut -f1)" "MB" "" "$(awk -v b="$(stat -c %s "$BENCH_STORE")" -v n="$BENCH_USERS" 'BEGIN { printf "%.0f bytes per user", b / n }')"

version=$(median_ms 51 "$GATEHOUSE_BIN" --version)
baseline=$(median_ms 51 /bin/true)
row "gatehouse --version cold start (median of 51)" "$version" "ms" "< 20 ms" "/bin/true: $baseline ms"
# `status` counts from the engine's statistics where it can (issue 29: < 1 s at 10M); `--exact`, where this binary
# has it, counts every row.
status=$(median_ms 21 "$GATEHOUSE_BIN" status --store "$BENCH_STORE" --json)
row "gatehouse status on the store (median of 21)" "$status" "ms" "$(at_scale "" "< 1000 ms")" "opens, checks migrations, counts (warm cache)"
if "$GATEHOUSE_BIN" status --help 2>/dev/null | grep -q -- '--exact'; then
  exact=$(median_ms 5 "$GATEHOUSE_BIN" status --exact --store "$BENCH_STORE" --json)
  row "gatehouse status --exact (median of 5)" "$exact" "ms" "" "counts every table's rows (warm cache)"
fi
