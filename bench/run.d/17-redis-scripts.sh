#!/usr/bin/env bash
# The Redis store's scripts, counted exactly: instructions redis-server runs per job (valgrind
# callgrind; no timing, so no noise from the machine), this checkout's scripts against an earlier
# commit's in the same run.
#
# bench/redis_script_cost.py drives redis-server as one node under bench_noop does (push.lua in
# calls of 256; fetch.lua in calls of 32 with 128 jobs in flight, each call's jobs acknowledged in
# one ack.lua call). A job's cost is the difference between 9,000 and 3,000 jobs, so the start,
# the script loads and the shutdown cancel out; push alone is measured the same way. Runs agree
# within about 1 % (redis-server seeds its hash tables at random); compare within one run.
# Environment: BENCH_SCRIPTS_BASE (default aba0100: the scripts before the ACK named its
# reservation), BENCH_SCRIPTS_JOBS (default "3000 9000").
set -euo pipefail
cd "$(dirname "$0")/../.."
base_rev="${BENCH_SCRIPTS_BASE:-aba0100}"
read -r small big <<<"${BENCH_SCRIPTS_JOBS:-3000 9000}"
for tool in valgrind redis-server redis-cli python3 git; do
  command -v "$tool" >/dev/null || { echo "17-redis-scripts: $tool missing" >&2; exit 1; }
done

tmp="$(mktemp -d /tmp/bench-redis-scripts.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/base"
if ! git archive "$base_rev" src/bulkhead/store/redis_scripts | tar -x -C "$tmp/base"; then
  echo "17-redis-scripts: cannot read the scripts of $base_rev (BENCH_SCRIPTS_BASE)" >&2
  exit 1
fi
base_dir="$tmp/base/src/bulkhead/store/redis_scripts"
this_dir="src/bulkhead/store/redis_scripts"

# instructions <scripts dir> <jobs> [--push-only]: redis-server's instructions for the whole run.
instructions() {
  local port out pid
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  out="$tmp/callgrind.$port"
  valgrind --tool=callgrind --callgrind-out-file="$out" redis-server --bind 127.0.0.1 \
    --port "$port" --save "" --appendonly no --dir "$tmp" >"$tmp/valgrind.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  if ! python3 bench/redis_script_cost.py "$port" "$1" "$2" "${3:-}"; then
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    wait "$pid" || true
    return 1
  fi
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  wait "$pid" || true
  awk '$1 == "summary:" || $1 == "totals:" { print $2; exit }' "$out"
}

# per_job <scripts dir> [--push-only]: instructions per job, big run minus small run.
per_job() {
  local a b
  a="$(instructions "$1" "$small" "${2:-}")" && b="$(instructions "$1" "$big" "${2:-}")" || return 1
  echo $(((b - a) / (big - small)))
}

echo "redis-server $(redis-server --version | sed -E 's/.*v=([^ ]+).*/\1/'), valgrind callgrind;" \
  "per job: ($big jobs - $small jobs) / $((big - small))"
status=0
declare -A cost
for who in base this; do
  dir="$this_dir"
  [ "$who" = base ] && dir="$base_dir"
  cost[$who-push]="$(per_job "$dir" --push-only)" || { echo "17-redis-scripts: $who push FAILED" >&2; status=1; }
  cost[$who-all]="$(per_job "$dir")" || { echo "17-redis-scripts: $who FAILED" >&2; status=1; }
done
[ "$status" = 0 ] || exit 1
for who in base this; do
  label="$who"
  [ "$who" = base ] && label="base ($base_rev)"
  push="${cost[$who-push]}" all="${cost[$who-all]}"
  echo "$label: push $push, fetch + ack $((all - push)), in all $all instructions per job"
done
python3 -c 'import sys; b, t = map(int, sys.argv[1:]); print("this/base %.3f (in all)" % (t / b))' \
  "${cost[base-all]}" "${cost[this-all]}"
