#!/usr/bin/env bash
# Transport isolation: deliveries/s to a healthy local HTTPS host, alone and while N connections
# (default 10,000) are held open to a host that never answers; prints both rates and their ratio
# (target >= 0.95). Env: BUILD_DIR (default build), BENCH_TRANSPORT_STUCK (10000),
# BENCH_TRANSPORT_SECONDS (2), BENCH_TRANSPORT_ROUNDS (2), BENCH_TRANSPORT_WINDOW (32),
# BENCH_TRANSPORT_CYCLES (3: alone/stuck pairs; the ratio is the median of the pairs).
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir="${BUILD_DIR:-build}"
bench="$build_dir/transport_bench"
if [ ! -x "$bench" ]; then
  echo "30-transport: $bench missing (run make build)" >&2
  exit 1
fi
# Each stuck connection is a descriptor here and one in the stuck-host process; the benchmark
# raises its soft limit to the hard one itself and shrinks N to fit if the hard limit is lower.
echo "fd limits: soft $(ulimit -Sn), hard $(ulimit -Hn)"
out="$("$bench" --stuck "${BENCH_TRANSPORT_STUCK:-10000}" --seconds "${BENCH_TRANSPORT_SECONDS:-2}" \
  --rounds "${BENCH_TRANSPORT_ROUNDS:-2}" --cycles "${BENCH_TRANSPORT_CYCLES:-3}" \
  --window "${BENCH_TRANSPORT_WINDOW:-32}" 2>&1)" || { echo "$out"; echo "30-transport: FAILED" >&2; exit 1; }
echo "$out"
ratio="$(awk '$1 == "transport_ratio" { print $2 }' <<<"$out")"
if awk -v r="$ratio" 'BEGIN { exit !(r < 0.95) }'; then
  echo "30-transport: ratio $ratio below target 0.95" >&2
fi
