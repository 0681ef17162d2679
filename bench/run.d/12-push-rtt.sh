#!/usr/bin/env bash
# A plain PUSH per round trip on one connection (no pipelining), as a producer calling
# client.push(job) in a loop: the memory store (in-run baseline), SQLite with durability
# "process" and with "power", each on a fresh `bulkhead serve`, in rounds (the order reversed every
# other round). Prints each rate, the round-trip percentiles, the server's CPU per PUSH by thread,
# and the median of the rounds' ratios against memory. Then
# commit_bench: the SQLite commit of one job (and without each part of its bookkeeping), the
# writer-thread hand-off ("power" still pays it), and the store's Push until durable.
# Env: BUILD_DIR (default build), BENCH_PUSH_RTT_JOBS (default 20000), BENCH_PUSH_RTT_ROUNDS (3).
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir="${BUILD_DIR:-build}"
bench="$build_dir/bench_push_rtt"
if [ ! -x "$bench" ] || [ ! -x "$build_dir/bulkhead" ] || [ ! -x "$build_dir/commit_bench" ]; then
  echo "12-push-rtt: $bench, $build_dir/commit_bench or $build_dir/bulkhead missing (run make build)" >&2
  exit 1
fi
"$bench" --jobs "${BENCH_PUSH_RTT_JOBS:-20000}" --rounds "${BENCH_PUSH_RTT_ROUNDS:-3}"
"$build_dir/commit_bench" --benchmark_min_time=1 2>&1 | grep -E '^(BM_|Benchmark|-)'
