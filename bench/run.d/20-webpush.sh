#!/usr/bin/env bash
# Web Push encoder throughput (encrypt + VAPID sign per message), bulkhead vs npm web-push on this
# machine. Rates are per CPU-second of one thread, i.e. per core; each benchmark runs
# WEBPUSH_BENCH_REPETITIONS times (default 3) and the median is compared (best shown too, since a
# busy machine only ever makes the numbers worse). Last line: the ratio ours/npm.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${BUILD_DIR:-build}/webpush_bench"
if [ ! -x "$bin" ]; then
  echo "missing $bin: run 'make build' first" >&2
  exit 1
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" --benchmark_filter='^BM_(WebPushBuildRequest/jwt_cache:[01]$|WebPushFromJson|WebPushEncryptOnly|VapidSignUncached)' \
  --benchmark_min_time="${WEBPUSH_BENCH_MIN_TIME:-1}" \
  --benchmark_repetitions="${WEBPUSH_BENCH_REPETITIONS:-3}" --benchmark_display_aggregates_only=true \
  --benchmark_out="$out" --benchmark_out_format=json
node bench/webpush_baseline.mjs "${WEBPUSH_BASELINE_SECONDS:-3}" | tee -a /dev/stderr | tail -1 > "$out.npm"
node - "$out" "$out.npm" <<'JS'
const fs = require('fs');
const ours = JSON.parse(fs.readFileSync(process.argv[2], 'utf8')).benchmarks;
const npm = Number(fs.readFileSync(process.argv[3], 'utf8').trim().split(/\s+/).pop());
fs.unlinkSync(process.argv[3]);
const runs = (name) => ours.filter((b) => b.run_name === name && b.run_type === 'iteration')
  .map((b) => b.items_per_second).sort((a, b) => a - b);
const median = (xs) => xs[Math.floor(xs.length / 2)];
const onRuns = runs('BM_WebPushBuildRequest/jwt_cache:1');
const offRuns = runs('BM_WebPushBuildRequest/jwt_cache:0');
const on = median(onRuns);
const off = median(offRuns);
const target = 10000;
const verdict = (x) => (x >= target ? '(>= 10k target)' : '(BELOW 10k target)');
console.log(`bulkhead encrypt+sign, JWT cache on : ${on.toFixed(0)}/s per core median, ${onRuns.at(-1).toFixed(0)} best ${verdict(on)}`);
console.log(`bulkhead encrypt+sign, JWT cache off: ${off.toFixed(0)}/s per core median, ${offRuns.at(-1).toFixed(0)} best ${verdict(off)}`);
console.log(`npm web-push generateRequestDetails : ${npm.toFixed(0)}/s per core`);
console.log(`ratio ours/npm: ${(on / npm).toFixed(2)}x with JWT cache, ${(off / npm).toFixed(2)}x without (like-for-like)`);
JS
