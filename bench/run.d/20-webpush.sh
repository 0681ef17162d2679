#!/usr/bin/env bash
# Web Push encoder throughput (encrypt + VAPID sign per message), bulkhead vs npm web-push on this
# machine. Rates are per CPU-second of one thread, i.e. per core. Last line: the ratio ours/npm.
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
  --benchmark_min_time="${WEBPUSH_BENCH_MIN_TIME:-1}" --benchmark_out="$out" --benchmark_out_format=json
node bench/webpush_baseline.mjs "${WEBPUSH_BASELINE_SECONDS:-3}" | tee -a /dev/stderr | tail -1 > "$out.npm"
node - "$out" "$out.npm" <<'JS'
const fs = require('fs');
const ours = JSON.parse(fs.readFileSync(process.argv[2], 'utf8')).benchmarks;
const npm = Number(fs.readFileSync(process.argv[3], 'utf8').trim().split(/\s+/).pop());
fs.unlinkSync(process.argv[3]);
const rate = (name) => ours.find((b) => b.name === name).items_per_second;
const on = rate('BM_WebPushBuildRequest/jwt_cache:1');
const off = rate('BM_WebPushBuildRequest/jwt_cache:0');
const target = 10000;
console.log(`bulkhead encrypt+sign, JWT cache on : ${on.toFixed(0)}/s per core ${on >= target ? '(>= 10k target)' : '(BELOW 10k target)'}`);
console.log(`bulkhead encrypt+sign, JWT cache off: ${off.toFixed(0)}/s per core ${off >= target ? '(>= 10k target)' : '(BELOW 10k target)'}`);
console.log(`npm web-push generateRequestDetails : ${npm.toFixed(0)}/s per core`);
console.log(`ratio ours/npm: ${(on / npm).toFixed(2)}x with JWT cache, ${(off / npm).toFixed(2)}x without (like-for-like)`);
JS
