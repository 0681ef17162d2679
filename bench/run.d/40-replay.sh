#!/usr/bin/env bash
# The incident replay at full length (docs/incident.md): 60 s of the story's load with the
# blackholed push host, after a 60 s baseline of the same load without the fault. Prints the
# table, the fault/baseline p99 ratio and the verdicts; the chart is in $BUILD_DIR/replay-bench/.
# Env: BUILD_DIR (default build), REPLAY_FAULT (default blackhole), REPLAY_DURATION (default 60).
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir="${BUILD_DIR:-build}"
if [ ! -x "$build_dir/bulkhead" ]; then
  echo "40-replay: $build_dir/bulkhead missing (run make build)" >&2
  exit 1
fi
exec "$build_dir/bulkhead" replay --baseline --no-progress \
  --fault "${REPLAY_FAULT:-blackhole}" --duration "${REPLAY_DURATION:-60}" \
  --out "$build_dir/replay-bench"
