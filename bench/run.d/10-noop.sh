#!/usr/bin/env bash
# No-op jobs end to end (PUSHB, then FETCH+ACK over real sockets) through `bulkhead serve`, on the
# in-memory store (the in-run baseline) and on the durable SQLite store, without pipelining and
# with bench_noop's default pipeline depth. Prints each run's figures, then sqlite/memory ratios:
# the cost of durability measured against a baseline from the same run on the same machine.
# Env: BUILD_DIR (default build), BENCH_NOOP_JOBS (default 200000), BENCH_NOOP_CONNECTIONS (4).
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir="${BUILD_DIR:-build}"
bench="$build_dir/bench_noop"
jobs="${BENCH_NOOP_JOBS:-200000}"
conns="${BENCH_NOOP_CONNECTIONS:-4}"
if [ ! -x "$bench" ] || [ ! -x "$build_dir/bulkhead" ]; then
  echo "10-noop: $bench or $build_dir/bulkhead missing (run make build)" >&2
  exit 1
fi

declare -A rate
run() {  # run <label> <store> <pipeline args...>
  local label="$1" store="$2"
  shift 2
  echo "--- $label"
  local out
  if ! out="$("$bench" --jobs "$jobs" --connections "$conns" --store "$store" "$@" 2>&1)"; then
    echo "$out"
    echo "10-noop: $label FAILED" >&2
    return 1
  fi
  echo "$out"
  local last
  last="$(tail -n 1 <<<"$out")"
  rate[$label]="$(awk '$1 == "jobs_per_second" { print $2 }' <<<"$last")"
}

tmp="$(mktemp -d /tmp/bench-noop-run.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
status=0
run memory-p1 memory: --pipeline 1 || status=1
run sqlite-p1 "sqlite:$tmp/p1.db" --pipeline 1 || status=1
run memory-pdefault memory: || status=1
run sqlite-pdefault "sqlite:$tmp/pdefault.db" || status=1

echo "--- summary (jobs_per_second, end to end; ratio = sqlite / memory)"
for p in p1 pdefault; do
  m="${rate[memory-$p]:-}"
  s="${rate[sqlite-$p]:-}"
  if [ -n "$m" ] && [ -n "$s" ]; then
    ratio="$(awk -v s="$s" -v m="$m" 'BEGIN { printf "%.2f", s / m }')"
    echo "pipeline ${p#p}: memory $m, sqlite $s, sqlite/memory $ratio"
  else
    echo "pipeline ${p#p}: incomplete (memory '${m}', sqlite '${s}')"
  fi
done
exit $status
