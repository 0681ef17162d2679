#!/usr/bin/env bash
# No-op jobs end to end (bench_noop: PUSHB, then FETCH+ACK, 4 connections, pipeline 32), counted in
# instructions instead of seconds: the server runs under valgrind's callgrind, and each of its
# threads' instructions are read from callgrind's per-thread totals. Unlike jobs per second, these
# counts barely move with the machine's speed or load, so a change's effect on the event loop
# shows even on a noisy machine. Per job = (count at 2N jobs - count at N jobs) / N, which removes
# start-up and shutdown. Printed for the event loop (the thread that serves every connection) and
# the SQLite writer, on the memory store (the in-run baseline) and on SQLite; with BASE_SERVER (the
# bulkhead binary of another build) the same for it, and this/base ratios.
# Timing under valgrind differs (the writer's batches, the reads ahead), so the writer's count
# moves by up to 10 % between runs; the loop's by about 1 %.
# Env: BUILD_DIR (default build), BENCH_INSTR_JOBS (N, default 10000), BASE_SERVER (optional).
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir="${BUILD_DIR:-build}"
bench="$build_dir/bench_noop"
jobs="${BENCH_INSTR_JOBS:-10000}"
base="${BASE_SERVER:-}"
for tool in valgrind callgrind_annotate; do
  if ! command -v "$tool" >/dev/null; then
    echo "13-noop-instructions: $tool missing (run make setup)" >&2
    exit 1
  fi
done
if [ ! -x "$bench" ] || [ ! -x "$build_dir/bulkhead" ]; then
  echo "13-noop-instructions: $bench or $build_dir/bulkhead missing (run make build)" >&2
  exit 1
fi
if [ -n "$base" ] && [ ! -x "$base" ]; then
  echo "13-noop-instructions: BASE_SERVER $base is not an executable" >&2
  exit 1
fi

tmp="$(mktemp -d /tmp/bench-noop-instr.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

# count <server> <store: memory|sqlite> <jobs>: prints "<loop> <writer>" instructions of one run.
count() {
  local server="$1" store="$2" n="$3" run="$tmp/run$RANDOM"
  mkdir -p "$run"
  printf '#!/bin/sh\nexec valgrind --tool=callgrind --separate-threads=yes --dump-instr=no --callgrind-out-file=%s/cg.%%p %s "$@"\n' \
    "$run" "$(realpath "$server")" >"$run/server"
  chmod +x "$run/server"
  local url="memory:"
  [ "$store" = sqlite ] && url="sqlite:$run/noop.db"
  if ! "$bench" --server "$run/server" --jobs "$n" --connections 4 --store "$url" \
    >"$run/bench.out" 2>&1; then
    cat "$run/bench.out" >&2
    echo "13-noop-instructions: bench_noop failed ($store, $n jobs)" >&2
    return 1
  fi
  # The event loop is the main thread (callgrind's thread 1); the writer is the thread whose
  # profile holds SqliteChangeLog's writer loop.
  local loop writer=0 f
  loop="$(awk '/^summary:/ { print $2; exit }' "$run"/cg.*-01)"
  for f in "$run"/cg.*-*; do
    if grep -q 'SqliteChangeLog::WriterLoop' "$f"; then
      writer="$(awk '/^summary:/ { print $2; exit }' "$f")"
    fi
  done
  echo "$loop $writer"
}

# per_job <label> <server> <store>: prints and records the loop's and the writer's per-job counts.
declare -A loop_per_job writer_per_job
per_job() {
  local label="$1" server="$2" store="$3" one two
  one="$(count "$server" "$store" "$jobs")" || return 1
  two="$(count "$server" "$store" $((2 * jobs)))" || return 1
  read -r l1 w1 <<<"$one"
  read -r l2 w2 <<<"$two"
  loop_per_job[$label]=$(((l2 - l1) / jobs))
  writer_per_job[$label]=$(((w2 - w1) / jobs))
  local writer="${writer_per_job[$label]}"
  [ "$store" = memory ] && writer="-"  # no writer thread
  printf '%-12s loop %6d instructions per job, writer %6s\n' "$label" "${loop_per_job[$label]}" \
    "$writer"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }'; }

echo "per job = (count at $((2 * jobs)) jobs - count at $jobs jobs) / $jobs; valgrind callgrind"
status=0
per_job this-memory "$build_dir/bulkhead" memory || status=1
per_job this-sqlite "$build_dir/bulkhead" sqlite || status=1
if [ -n "$base" ]; then
  per_job base-memory "$base" memory || status=1
  per_job base-sqlite "$base" sqlite || status=1
fi
echo "--- summary"
echo "sqlite/memory, the loop: $(ratio "${loop_per_job[this-sqlite]:-0}" "${loop_per_job[this-memory]:-0}")"
if [ -n "$base" ]; then
  echo "this/base on memory: loop $(ratio "${loop_per_job[this-memory]:-0}" \
    "${loop_per_job[base-memory]:-0}")"
  echo "this/base on sqlite: loop $(ratio "${loop_per_job[this-sqlite]:-0}" \
    "${loop_per_job[base-sqlite]:-0}"), writer $(ratio "${writer_per_job[this-sqlite]:-0}" \
    "${writer_per_job[base-sqlite]:-0}")"
fi
exit $status
