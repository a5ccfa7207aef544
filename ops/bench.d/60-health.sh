#!/usr/bin/env bash
# The scheduled health run (issue 9) on the benchmark store, read-only (no --record). Its baselines are SQLite's own
# PRAGMA quick_check, over the whole file and over the one table the run's integrity sweep checks, in the same run.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

# One unmeasured run of each first, as the other scripts do: the console benchmark before this one read a copy
# of the store, and the first run would measure the disk instead of the check.
"$GATEHOUSE_BIN" health --store "$BENCH_STORE" > /dev/null 2>&1 || true
"$SQLITE3" "$BENCH_STORE" "PRAGMA quick_check" > /dev/null
# Alternating pairs (paired_ratio): sqlite3's quick_check of the whole file, then a health run.
health_run() { wall_ms "$GATEHOUSE_BIN" health --store "$BENCH_STORE"; }
quick_run() { wall_ms "$SQLITE3" "$BENCH_STORE" "PRAGMA quick_check"; }
read -r health_r health_r_lo health_r_hi health health_lo health_hi quick _ _ < <(paired_ratio health_run quick_run)
size=$(du -m "$BENCH_STORE" | cut -f1)
row "gatehouse health, full run" "$health" "ms" "< 2000 ms" "median of ${BENCH_PAIRS:-5} (range $health_lo-$health_hi)"
row "gatehouse health / sqlite3 quick_check of the whole file" "$(spread "$health_r" "$health_r_lo" "$health_r_hi")" "ratio" "" "quick_check of the $size MB file: $quick ms; $(pairs_note)"
# What the sweep covered: the tables this run checked (the newest timestamps among the samples), and its summary.
swept=$("$GATEHOUSE_BIN" health --store "$BENCH_STORE" --json 2>/dev/null | python3 -c '
import json, sys
for check in json.load(sys.stdin)["checks"]:
    if check["id"] == "store.integrity":
        samples = [s for s in check.get("samples", []) if "table" in s.get("labels", {})]
        newest = max((s["value"] for s in samples), default=None)
        tables = [s["labels"]["table"] for s in samples if s["value"] == newest]
        print(",".join(tables) + "|" + check.get("summary", ""))
' || true)
tables=${swept%%|*}
first=${tables%%,*}
if [ -n "$first" ]; then
  table_quick=$(median_ms 3 "$SQLITE3" "$BENCH_STORE" "PRAGMA quick_check('$first')")
  row "health: quick_check sweep, this run" "$table_quick" "ms" "" "sqlite3 quick_check('$first') alone; the run: ${swept#*|}"
fi
deep=$(median_ms 1 "$GATEHOUSE_BIN" health --deep --store "$BENCH_STORE")
row "gatehouse health --deep (integrity_check)" "$deep" "ms" "" "the whole file at once: beyond the target by design"

# Cold: the page cache dropped first, as after a reboot or with a store larger than memory (as root only: writing
# /proc/sys/vm/drop_caches). Issue 29's `status` target is for a cold store.
if [ -w /proc/sys/vm/drop_caches ]; then
  cold_ms() { sync; echo 3 > /proc/sys/vm/drop_caches; wall_ms "$@"; }
  row "gatehouse status, cold cache" "$(cold_ms "$GATEHOUSE_BIN" status --store "$BENCH_STORE")" ms "< 1000 ms" "the page cache dropped first; one run"
  row "gatehouse health, cold cache" "$(cold_ms "$GATEHOUSE_BIN" health --store "$BENCH_STORE")" ms "" "the page cache dropped first; one run"
fi
