#!/usr/bin/env bash
# No-op jobs end to end: bulkhead's SQLite store (bench_noop, durability "process"; 4 connections
# with 32 FETCHes in flight each, and without pipelining) beside a real Sidekiq 6 (Debian's
# ruby-sidekiq) on a redis-server, in the same run, alternating. Both are measured the same way: N
# jobs pushed first (PUSHB / push_bulk, 1000 per call), then run to the last one;
# jobs_per_second = N / (push time + run time).
# The Sidekiq side (bench/sidekiq_noop.rb): one process, then one per core (a Ruby process runs one
# thread at a time), each of BENCH_SIDEKIQ_CONCURRENCY threads (default 10, Sidekiq 6's own
# default), booted before the clock starts; the redis-server keeps no persistence (no RDB, no AOF:
# Sidekiq's best case; bulkhead's store survives kill -9). bulkhead without pipelining uses as many
# connections as the Sidekiq processes have threads in all (one job per round trip each).
# Env: BUILD_DIR (default build), BENCH_NOOP_SIDEKIQ_JOBS (default 100000), BENCH_NOOP_SIDEKIQ_ROUNDS
#      (default 3). Prints each round, the medians, and bulkhead/Sidekiq (the goal: 20x).
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib.sh
build_dir="${BUILD_DIR:-build}"
bench="$build_dir/bench_noop"
jobs="${BENCH_NOOP_SIDEKIQ_JOBS:-100000}"
rounds="${BENCH_NOOP_SIDEKIQ_ROUNDS:-3}"
cores="$(nproc)"
threads="${BENCH_SIDEKIQ_CONCURRENCY:-10}"
ruby_bench="$PWD/bench/sidekiq_noop.rb"
if [ ! -x "$bench" ] || [ ! -x "$build_dir/bulkhead" ]; then
  echo "11-noop-sidekiq: $bench or $build_dir/bulkhead missing (run make build)" >&2
  exit 1
fi
if ! command -v sidekiq >/dev/null || ! command -v redis-server >/dev/null; then
  echo "11-noop-sidekiq: sidekiq or redis-server missing (run make setup)" >&2
  exit 1
fi

tmp="$(mktemp -d /tmp/bench-noop-sidekiq.XXXXXX)"
redis_pid="" sidekiq_pids=()
stop_sidekiq() {
  local pid
  for pid in "${sidekiq_pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for pid in "${sidekiq_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  sidekiq_pids=()
}
cleanup() {
  stop_sidekiq
  if [ -n "$redis_pid" ]; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port="$(free_port)"
(cd "$tmp" && exec redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
  --dir "$tmp" --logfile "$tmp/redis.log") &
redis_pid=$!
export REDIS_URL="redis://127.0.0.1:$port/0"
for _ in $(seq 1 100); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  sleep 0.05
done
redis-cli -p "$port" ping >/dev/null || { echo "11-noop-sidekiq: redis-server did not start" >&2; exit 1; }
echo "no-op jobs, $jobs per run; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg);" \
  "redis-server $(redis-server --version | awk '{ sub(/^v=/, "", $3); print $3 }'), sidekiq $(ruby -e 'require "sidekiq"; print Sidekiq::VERSION')"

# Waits (at most `2`s seconds, checking every 10 ms) until command `1` succeeds.
wait_until() {
  local deadline=$((SECONDS + $2))
  until eval "$1"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.01
  done
}

declare -A sidekiq_rates
sidekiq_round() {  # sidekiq_round <processes>
  local procs="$1" dir="$tmp/run" push_s go out total last i
  rm -rf "$dir" && mkdir -p "$dir"
  redis-cli -p "$port" flushall >/dev/null
  out="$(ruby "$ruby_bench" push "$jobs" 2>"$tmp/push.log")"
  push_s="$(awk '$1 == "push_seconds" { print $2 }' <<<"$out")"
  for i in $(seq 1 "$procs"); do
    ruby "$ruby_bench" run "$i" "$dir" "$threads" 2>"$dir/log.$i" &
    sidekiq_pids+=($!)
  done
  wait_until "[ \$(ls $dir | grep -c '^ready\.') -eq $procs ]" 60 ||
    { echo "11-noop-sidekiq: Sidekiq processes did not boot:"; cat "$dir"/log.*; return 1; }
  local c0=0 c1=0 pid
  for pid in "${sidekiq_pids[@]}"; do c0="$(awk -v a="$c0" -v b="$(cpu "$pid")" 'BEGIN { print a + b }')"; done
  go="$EPOCHREALTIME"
  touch "$dir/go"
  # Done when the processes' counts add up to N (each rewrites its status every 5 ms once the
  # queue is empty).
  sum_counts() { cat "$dir"/status.* 2>/dev/null | awk '{ n += $1; if ($2 > t) t = $2 } END { printf "%d %.6f", n, t }'; }
  if ! wait_until "[ \"\$(sum_counts | cut -d' ' -f1)\" -ge $jobs ]" 600; then
    echo "11-noop-sidekiq: Sidekiq ran $(sum_counts | cut -d' ' -f1) of $jobs within 600 s"; cat "$dir"/log.*
    stop_sidekiq
    return 1
  fi
  read -r total last <<<"$(sum_counts)"
  for pid in "${sidekiq_pids[@]}"; do c1="$(awk -v a="$c1" -v b="$(cpu "$pid")" 'BEGIN { print a + b }')"; done
  stop_sidekiq
  awk -v n="$jobs" -v total="$total" -v p="$push_s" -v go="$go" -v last="$last" -v cpu="$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" \
    -v procs="$procs" -v threads="$threads" 'BEGIN {
      run = last - go
      printf "sidekiq: %d process(es) x %d threads: push %.0f jobs/s, run %.0f jobs/s (%.1f us of Sidekiq CPU per job), ran %d\n", procs, threads, n / p, n / run, 1e6 * cpu / n, total
      printf "jobs_per_second %.0f\n", n / (p + run)
    }' | tee "$tmp/sidekiq.out"
  sidekiq_rates[$procs]+="$(awk '$1 == "jobs_per_second" { print $2 }' "$tmp/sidekiq.out") "
}

declare -A bulkhead_rates
bulkhead_round() {  # bulkhead_round <label> <bench_noop args...>
  local label="$1" out
  shift
  rm -f "$tmp"/noop.db*
  if ! out="$("$bench" --jobs "$jobs" --store "sqlite:$tmp/noop.db" "$@" 2>&1)"; then
    echo "$out"
    echo "11-noop-sidekiq: bench_noop $label FAILED" >&2
    return 1
  fi
  echo "bulkhead sqlite $label: $(tail -n 1 <<<"$out")"
  bulkhead_rates[$label]+="$(awk '$1 == "jobs_per_second" { print $2 }' <<<"$(tail -n 1 <<<"$out")") "
}

status=0
for r in $(seq 1 "$rounds"); do
  echo "--- round $r (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  bulkhead_round pipeline-32 --connections 4 || status=1
  sidekiq_round 1 || status=1
  bulkhead_round pipeline-1 --pipeline 1 --connections "$((cores * threads))" || status=1
  sidekiq_round "$cores" || status=1
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.1f", a / b; else printf "n/a" }'; }
echo "--- summary (medians of $rounds rounds, jobs/s end to end)"
s1="$(median "${sidekiq_rates[1]:-}")" sn="$(median "${sidekiq_rates[$cores]:-}")"
echo "sidekiq, 1 process x $threads threads: $s1 (rounds: ${sidekiq_rates[1]% })"
echo "sidekiq, $cores processes x $threads threads: $sn (rounds: ${sidekiq_rates[$cores]% })"
for label in pipeline-32 pipeline-1; do
  b="$(median "${bulkhead_rates[$label]:-}")"
  echo "bulkhead sqlite $label: $b (rounds: ${bulkhead_rates[$label]% });" \
    "bulkhead/sidekiq: $(ratio "$b" "$s1") against 1 process, $(ratio "$b" "$sn") against $cores"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
