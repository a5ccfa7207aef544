#!/usr/bin/env bash
# Seeding the benchmark store (its time, rate and peak memory), and the CLI's cold start.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

fresh="$BENCH_DIR/seeding.sqlite"
rm -f "$fresh" "$fresh"-wal "$fresh"-shm "$fresh".key
/usr/bin/time -f '%e %M' -o "$BENCH_DIR/seed.time" \
  "$GATEHOUSE_BIN" demo seed --store "$fresh" --users "$BENCH_USERS" --seed 1 --json -q > "$BENCH_DIR/seed.json"
read -r seconds peak_kb < "$BENCH_DIR/seed.time"
rows=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sum(r[k] for k in ("users","accounts","sessions","syncUsers","workspaces","subscriptions","roles","verifications")))' "$BENCH_DIR/seed.json")
row "seed $BENCH_USERS users: wall time" "$seconds" "s" "< 60 s (1M users)" "$rows rows in all"
row "seed: rows per second" "$(awk -v r="$rows" -v s="$seconds" 'BEGIN { printf "%.0f", r / s }')" "rows/s" "" ""
row "seed: peak memory (RSS)" "$(awk -v k="$peak_kb" 'BEGIN { printf "%.1f", k / 1024 }')" "MB" "< 200 MB" ""
# The seeded store becomes the store the other benchmarks read.
rm -f "$BENCH_STORE" "$BENCH_STORE"-wal "$BENCH_STORE"-shm "$BENCH_STORE".key
"$SQLITE3" "$fresh" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
mv "$fresh" "$BENCH_STORE"
mv "$fresh".key "$BENCH_STORE".key
rm -f "$fresh"-wal "$fresh"-shm

version=$(median_ms 51 "$GATEHOUSE_BIN" --version)
baseline=$(median_ms 51 /bin/true)
row "gatehouse --version cold start (median of 51)" "$version" "ms" "< 20 ms" "/bin/true: $baseline ms"
status=$(median_ms 21 "$GATEHOUSE_BIN" status --store "$BENCH_STORE" --json)
row "gatehouse status on the store (median of 21)" "$status" "ms" "" "opens, checks migrations, counts"
