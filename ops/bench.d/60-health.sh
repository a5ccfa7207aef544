#!/usr/bin/env bash
# The scheduled health run (issue 9) on the benchmark store, read-only (no --record). Its baselines are SQLite's own
# PRAGMA quick_check, over the whole file and over the one table the run's integrity sweep checks, in the same run.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

# One unmeasured run of each first, as the other scripts do: the console benchmark before this one read a copy
# of the store, and the first run would measure the disk instead of the check.
"$GATEHOUSE_BIN" health --store "$BENCH_STORE" > /dev/null 2>&1 || true
"$SQLITE3" "$BENCH_STORE" "PRAGMA quick_check" > /dev/null
health=$(median_ms 5 "$GATEHOUSE_BIN" health --store "$BENCH_STORE")
quick=$(median_ms 3 "$SQLITE3" "$BENCH_STORE" "PRAGMA quick_check")
size=$(du -m "$BENCH_STORE" | cut -f1)
row "gatehouse health, full run (median of 5)" "$health" "ms" "< 2000 ms" "sqlite3 quick_check of the whole $size MB file: $quick ms; ratio $(ratio "$health" "$quick")"
# What the sweep covered: the tables of this run, of all.
swept=$("$GATEHOUSE_BIN" health --store "$BENCH_STORE" --json 2>/dev/null | python3 -c '
import json, sys
for check in json.load(sys.stdin)["checks"]:
    if check["id"] == "store.integrity":
        print(check["summary"].split(" (")[0].replace("PRAGMA quick_check: ok on ", ""), "|", check["summary"].split("(")[1].split(";")[0])
' || true)
tables=${swept%% |*}
first=${tables%%,*}
table_quick=$(median_ms 3 "$SQLITE3" "$BENCH_STORE" "PRAGMA quick_check('$first')")
row "health: quick_check sweep, this run" "$table_quick" "ms" "" "sqlite3 quick_check('$first') alone; the run checked ${swept##*| }"
deep=$(median_ms 1 "$GATEHOUSE_BIN" health --deep --store "$BENCH_STORE")
row "gatehouse health --deep (integrity_check)" "$deep" "ms" "" "the whole file at once: beyond the target by design"
