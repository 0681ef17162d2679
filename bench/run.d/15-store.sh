#!/usr/bin/env bash
# Store operation cost against the backlog (1,000 vs 1,000,000 waiting jobs), with the ratio.
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir="${BUILD_DIR:-build}"
bench="$build_dir/store_bench"
if [ ! -x "$bench" ]; then
  echo "15-store: $bench missing (run make build)" >&2
  exit 1
fi
out="$("$bench" --benchmark_format=json)"
echo "$out" | python3 -c '
import json, sys
runs = {b["name"]: b for b in json.load(sys.stdin)["benchmarks"]}
for name in ("BM_PushFetchAck", "BM_DueScheduledScan", "BM_JidIndexChurn"):
    small = runs[name + "/1000"]["real_time"]
    big = runs[name + "/1000000"]["real_time"]
    print("%s: %.3f us/op at 1k backlog, %.3f us/op at 1M; ratio 1M/1k = %.2f" % (name, small, big, big / small))
'
