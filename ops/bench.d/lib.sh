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
