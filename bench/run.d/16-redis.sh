#!/usr/bin/env bash
# The Redis store end to end, side by side with memory: and sqlite: in the same run.
# 1. Starts its own redis-server (no persistence) on a free loopback port in a temp dir; a trap
#    stops it on every exit.
# 2. bench_noop (PUSHB, then FETCH+ACK) on memory:, sqlite: and redis:// with pipeline 32 (the
#    issue's figure, bench_noop's default) and pipeline 1; then redis:// with two nodes. For every
#    run it samples the CPU seconds of redis-server (/proc/PID/stat) and of the bulkhead node(s)
#    (bench_noop's own rusage of its children), as a share of one core over the run's wall time:
#    the process near 100 % is what bounds the run.
# 3. Memory: pushes N Mastodon-sized jobs (one node, --push-only), reads used_memory and
#    MEMORY USAGE of the namespace's keys, deletes the jobs and reads used_memory again: bytes per
#    queued job and their ratio to the job's JSON size.
# Env: BUILD_DIR (default build), BENCH_REDIS_JOBS (default 100000), BENCH_NOOP_CONNECTIONS (4),
#      BENCH_REDIS_MEMORY_JOBS (default 100000), BENCH_REDIS_ARG_BYTES (default "230 330 430":
#      job JSON of about 300, 400 and 500 bytes, the size of Mastodon's Sidekiq jobs),
#      BENCH_REDIS_ROUNDS (default 1: the redis one-node runs, repeated; the summary takes the
#      median), BASE_BUILD_DIR (optional: a build of an earlier commit, whose redis runs and memory
#      figures are interleaved with this build's, for before/after ratios in the same run).
#      Other processes share the cores: the load average is printed before and after.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib.sh
build_dir="${BUILD_DIR:-build}"
bench="$build_dir/bench_noop"
jobs="${BENCH_REDIS_JOBS:-100000}"
conns="${BENCH_NOOP_CONNECTIONS:-4}"
mem_jobs="${BENCH_REDIS_MEMORY_JOBS:-100000}"
arg_bytes="${BENCH_REDIS_ARG_BYTES:-230 330 430}"
rounds="${BENCH_REDIS_ROUNDS:-1}"
base_dir="${BASE_BUILD_DIR:-}"
if [ ! -x "$bench" ] || [ ! -x "$build_dir/bulkhead" ]; then
  echo "16-redis: $bench or $build_dir/bulkhead missing (run make build)" >&2
  exit 1
fi
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  echo "16-redis: redis-server or redis-cli missing (Debian: redis-server, redis-tools)" >&2
  exit 1
fi

tmp="$(mktemp -d /tmp/bench-redis-run.XXXXXX)"
redis_pid=""
cleanup() {
  if [ -n "$redis_pid" ] && kill -0 "$redis_pid" 2>/dev/null; then
    kill "$redis_pid"
    wait "$redis_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
(cd "$tmp" && exec redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
  --dir "$tmp" --logfile "$tmp/redis.log") &
redis_pid=$!
rcli() { redis-cli -h 127.0.0.1 -p "$port" "$@"; }
for _ in $(seq 1 100); do
  rcli ping >/dev/null 2>&1 && break
  sleep 0.05
done
rcli ping >/dev/null || { echo "16-redis: redis-server did not start" >&2; cat "$tmp/redis.log" >&2; exit 1; }
redis_url="redis://127.0.0.1:$port"
echo "redis-server $(redis-server --version | awk '{ print $3 }') pid $redis_pid on $redis_url" \
  "(no persistence); $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

clk_tck="$(getconf CLK_TCK)"
cpu_seconds() {  # cpu_seconds PID: user + system CPU seconds so far
  awk -v t="$clk_tck" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / t }' "/proc/$1/stat"
}

declare -A rate rates
run() {  # [RUN_CONNS=C] [RUN_BENCH=path] run <label> <store> <bench_noop args...>
  local label="$1" store="$2" c="${RUN_CONNS:-$conns}" bench="${RUN_BENCH:-$bench}"
  shift 2
  echo "--- $label"
  local out redis_before redis_after
  rcli flushall >/dev/null
  rcli config resetstat >/dev/null
  redis_before="$(cpu_seconds "$redis_pid")"
  if ! out="$("$bench" --jobs "$jobs" --connections "$c" --store "$store" "$@" 2>&1)"; then
    echo "$out"
    echo "16-redis: $label FAILED" >&2
    return 1
  fi
  redis_after="$(cpu_seconds "$redis_pid")"
  echo "$out"
  rate[$label]="$(awk '$1 == "jobs_per_second" { print $2 }' <<<"$out")"
  rates[$label]+="${rate[$label]} "
  # Share of one core over the run's wall time (push + fetch/ack).
  # The line is "cpu: bench client C s, server[s (all nodes)] S s, wall W s".
  # Then the CPU each job cost in all three processes, and the rate the machine's cores allow at
  # that cost if nothing else ran: a rate far below it means the processes waited (round trips)
  # or other work had the cores.
  awk -v rb="$redis_before" -v ra="$redis_after" -v redis="$([[ $store == redis* ]] && echo 1)" \
    -v n="$jobs" -v cores="$(nproc)" '
    /^cpu: / { client = $4; wall = $(NF - 1); srv = $(NF - 4) }
    END {
      if (wall <= 0) exit
      r = redis ? ra - rb : 0
      printf "cpu share of one core over %.2f s: bench client %.0f %%, bulkhead %.0f %%", wall, 100 * client / wall, 100 * srv / wall
      if (redis) printf ", redis-server %.0f %%", 100 * r / wall
      printf "\ncpu per job: bench client %.1f us, bulkhead %.1f us", 1e6 * client / n, 1e6 * srv / n
      if (redis) printf ", redis-server %.1f us", 1e6 * r / n
      t = (client + srv + r) / n
      printf "; in all %.1f us => at most %.0f jobs/s on %d cores\n", 1e6 * t, cores / t, cores
    }' <<<"$out" | sed 's/^/  /'
  # bulkhead's figures include its start and stop; redis-server's cover the whole bench_noop.
  if [[ $store == redis* ]]; then
    # Time redis-server spent running the scripts (every job step is one EVALSHA; the commands
    # they call, PUBLISH included, are counted inside it), per job: what one core of redis-server
    # allows at most, whatever bulkhead does.
    rcli info commandstats | tr -d '\r' | awk -v n="$jobs" -F'[:=,]' '
      $1 ~ /^cmdstat_/ { calls[$1] = $3; usec[$1] = $5 }
      END {
        e = usec["cmdstat_evalsha"]
        printf "  redis-server: EVALSHA %.2f per job at %.1f us each (PUBLISH %.2f per job, inside);", calls["cmdstat_evalsha"] / n, e / calls["cmdstat_evalsha"], calls["cmdstat_publish"] / n
        printf " script time %.1f us per job => at most %.0f jobs/s on one core of redis-server\n", e / n, n * 1e6 / e
      }'
  fi
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "n/a" }'; }

status=0
run memory-p32 memory: --pipeline 32 || status=1
for _ in $(seq 1 "$rounds"); do
  if [ -n "$base_dir" ]; then
    RUN_BENCH="$base_dir/bench_noop" run base-redis-p32 "$redis_url" --pipeline 32 || status=1
    RUN_CONNS=$((4 * conns)) RUN_BENCH="$base_dir/bench_noop" run base-redis-p32-c4x "$redis_url" \
      --pipeline 32 || status=1
  fi
  run redis-p32 "$redis_url" --pipeline 32 || status=1
  RUN_CONNS=$((4 * conns)) run redis-p32-c4x "$redis_url" --pipeline 32 || status=1
  run sqlite-p32 "sqlite:$tmp/p32.db" --pipeline 32 || status=1
  rm -f "$tmp"/p32.db*
done
for l in redis-p32 redis-p32-c4x sqlite-p32 base-redis-p32 base-redis-p32-c4x; do
  if [ -n "${rates[$l]:-}" ]; then rate[$l]="$(median "${rates[$l]}")"; fi
done
run redis-p32-2nodes "$redis_url" --pipeline 32 --nodes 2 || status=1
# A node answers each connection's FETCHes one at a time (a FETCH is the session's barrier), so
# the FETCHes in flight to Redis are at most the connections: the same with 4x the connections.
RUN_CONNS=$((4 * conns)) run redis-p32-c4x-2nodes "$redis_url" --pipeline 32 --nodes 2 || status=1
run memory-p1 memory: --pipeline 1 || status=1
run sqlite-p1 "sqlite:$tmp/p1.db" --pipeline 1 || status=1
run redis-p1 "$redis_url" --pipeline 1 || status=1

echo "--- summary (jobs_per_second end to end, $jobs jobs, $conns connections)"
for p in p32 p1; do
  m="${rate[memory-$p]:-}" s="${rate[sqlite-$p]:-}" r="${rate[redis-$p]:-}"
  echo "pipeline ${p#p}: memory ${m:-?}, sqlite ${s:-?}, redis ${r:-?};" \
    "redis/sqlite $(ratio "$r" "$s"), redis/memory $(ratio "$r" "$m")"
done
for x in "" -c4x; do
  r1="${rate[redis-p32$x]:-}" r2="${rate[redis-p32$x-2nodes]:-}"
  echo "pipeline 32, redis, $([ -z "$x" ] && echo "$conns" || echo $((4 * conns))) connections:" \
    "one node ${r1:-?}, two nodes ${r2:-?}; two/one $(ratio "$r2" "$r1")"
done
if [ -n "$base_dir" ]; then
  for x in "" -c4x; do
    echo "pipeline 32, one node, $([ -z "$x" ] && echo "$conns" || echo $((4 * conns))) connections," \
      "medians of $rounds: this build ${rate[redis-p32$x]:-?}, base ${rate[base-redis-p32$x]:-?};" \
      "this/base $(ratio "${rate[redis-p32$x]:-}" "${rate[base-redis-p32$x]:-}")"
  done
fi
echo "targets: redis one node >= 50000 (pipeline 32), two nodes >= 1.6x one where the cores allow"

# memory <arg bytes>: pushes $mem_jobs jobs with one string argument of that size, then measures.
memory() {  # [RUN_BENCH=path] memory <arg bytes>
  local arg="$1" out bench="${RUN_BENCH:-$bench}"
  echo "--- memory: $mem_jobs queued jobs in redis, --arg-bytes $arg (one node, --push-only)"
  rcli flushall >/dev/null
  if ! out="$("$bench" --jobs "$mem_jobs" --connections "$conns" --store "$redis_url" --push-only \
    --arg-bytes "$arg" 2>&1)"; then
    echo "$out"
    echo "16-redis: memory measurement FAILED" >&2
    return 1
  fi
  grep -E '^(push|left queued):' <<<"$out"
  local json_bytes used_with used_without jobs_usage queue_usage one_jid stored header hlen llen
  local jobs_key='{bulkhead}:jobs' queue_key='{bulkhead}:q:bench'
  json_bytes="$(awk '$1 == "push_jobs_per_second" { sub(/.*job_json_bytes=/, ""); print }' <<<"$out")"
  used_with="$(rcli info memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }')"
  jobs_usage="$(rcli memory usage "$jobs_key" samples 0)"
  queue_usage="$(rcli memory usage "$queue_key" samples 0)"
  one_jid="$(rcli lindex "$queue_key" 0)"
  stored="$(rcli hstrlen "$jobs_key" "$one_jid")"
  header="$(rcli hget "$jobs_key" "$one_jid" | head -n 1 | wc -c)"  # with its newline
  hlen="$(rcli hlen "$jobs_key")"
  llen="$(rcli llen "$queue_key")"
  rcli del "$jobs_key" "$queue_key" >/dev/null
  used_without="$(rcli info memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }')"
  echo "keys: $jobs_key hash of $hlen jobs, MEMORY USAGE $jobs_usage bytes;" \
    "$queue_key list of $llen jids, MEMORY USAGE $queue_usage bytes"
  echo "one job: JSON pushed $json_bytes bytes; value stored $stored bytes = header line" \
    "$header + the payload as stored $((stored - header)) (the server adds enqueued_at and" \
    "created_at; layout 2 leaves out what the header and the hash field hold)"
  awk -v n="$hlen" -v with="$used_with" -v without="$used_without" -v ju="$jobs_usage" \
    -v qu="$queue_usage" -v json="$json_bytes" -v kept="$((stored - header))" 'BEGIN {
      per = (with - without) / n
      printf "used_memory with the jobs %d, after deleting both keys %d: %.1f bytes per queued job (MEMORY USAGE of both keys: %.1f)\n", with, without, per, (ju + qu) / n
      printf "ratio per job: %.2f x the JSON pushed (%d bytes), %.2f x the payload as stored (%d bytes); target <= 1.5\n", per / json, json, per / kept, kept
    }'
}
for arg in $arg_bytes; do
  if [ -n "$base_dir" ]; then
    echo "(base build)"
    RUN_BENCH="$base_dir/bench_noop" memory "$arg" || status=1
  fi
  memory "$arg" || status=1
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
