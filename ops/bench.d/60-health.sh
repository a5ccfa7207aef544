#!/usr/bin/env bash
# The scheduled health run (issue 9) on the benchmark store, read-only (no --record). Its floor is SQLite's own
# PRAGMA quick_check over the whole file, measured in the same run as the baseline.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

health=$(median_ms 3 "$GATEHOUSE_BIN" health --store "$BENCH_STORE")
quick=$(median_ms 3 "$SQLITE3" "$BENCH_STORE" "PRAGMA quick_check")
size=$(du -m "$BENCH_STORE" | cut -f1)
row "gatehouse health, full run (median of 3)" "$health" "ms" "< 2000 ms" "sqlite3 quick_check alone: $quick ms on a $size MB store; ratio $(ratio "$health" "$quick")"
deep=$(median_ms 1 "$GATEHOUSE_BIN" health --deep --store "$BENCH_STORE")
row "gatehouse health --deep (integrity_check)" "$deep" "ms" "" "beyond the target by design"
