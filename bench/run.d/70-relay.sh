#!/usr/bin/env bash
# The push relay (docs/relay.md) against mastodon/webpush-apn-relay's design rebuilt in Node
# (bench/relay_bench.mjs): accepted messages/s and the 201 latency while the fake APNs answers in
# 100 ms and while it stalls, then bulkhead's forwards/s over HTTP/2. Ratios against the baseline
# of the same run on the last lines. RELAY_BENCH_SECONDS (20) per relay and mode, 64 senders,
# RELAY_BENCH_FORWARD (20000) messages forwarded.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${BUILD_DIR:-build}/bulkhead"
if [ ! -x "$bin" ]; then
  echo "missing $bin: run 'make build' first" >&2
  exit 1
fi
NODE_PATH=tests/node_modules node bench/relay_bench.mjs "$PWD/$bin" "${RELAY_BENCH_SECONDS:-20}" 64 \
  "${RELAY_BENCH_FORWARD:-20000}"
