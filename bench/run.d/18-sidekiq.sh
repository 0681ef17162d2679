#!/usr/bin/env bash
# The Sidekiq bridge taking a backlog from a Sidekiq queue into the SQLite store, side by side with
# PUSHB over the Faktory protocol into the same kind of store, in the same run.
# 1. Starts its own redis-server (the application's Redis; no persistence) on a free loopback port;
#    a trap stops it and bulkhead on every exit.
# 2. Bridge: starts `bulkhead serve` (sqlite: store in a temp dir, [sidekiq] taking from the queue
#    "bench"), writes N Sidekiq jobs as Sidekiq::Client writes them (class, args, retry, queue, a
#    24-hex jid, created_at and enqueued_at as floats; about the size of bench_noop's PUSHB jobs
#    with --arg-bytes) into a staging list and, in one MULTI, RENAMEs it to queue:bench and LPUSHes
#    the last job (as Sidekiq::Client does: it wakes the idle bridge), then polls
#    INFO (every 5 ms) until bulkhead's queue holds all N, taken and committed. The rate is N over
#    the time from the RENAME to that poll (the wake-up of the idle bridge included). CPU shares
#    of bulkhead and redis-server over that window come from /proc/PID/stat.
# 3. PUSHB: bench_noop --push-only with the same N into a fresh sqlite: store (4 connections), its
#    jobs' JSON as long as the Sidekiq jobs' (--arg-bytes).
# 4. Steps 2 and 3 alternate BENCH_SIDEKIQ_ROUNDS times (a fresh server and store each); prints
#    the medians and bridge/PUSHB. Target: the bridge >= 20000 jobs/s.
# Env: BUILD_DIR (default build), BENCH_SIDEKIQ_JOBS (default 100000), BENCH_SIDEKIQ_BATCH (the
#      sidekiq.batch setting, default 1000), BENCH_SIDEKIQ_ROUNDS (default 3). Other processes
#      share the cores: the load average is printed before and after.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib.sh
build_dir="${BUILD_DIR:-build}"
bench="$build_dir/bench_noop"
server="$build_dir/bulkhead"
jobs="${BENCH_SIDEKIQ_JOBS:-100000}"
batch="${BENCH_SIDEKIQ_BATCH:-1000}"
rounds="${BENCH_SIDEKIQ_ROUNDS:-3}"
if [ ! -x "$bench" ] || [ ! -x "$server" ]; then
  echo "18-sidekiq: $bench or $server missing (run make build)" >&2
  exit 1
fi

tmp="$(mktemp -d /tmp/bench-sidekiq-run.XXXXXX)"
redis_pid="" bulkhead_pid=""
cleanup() {
  for pid in "$bulkhead_pid" "$redis_pid"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill "$pid"
      wait "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port="$(free_port)"
(cd "$tmp" && exec redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
  --dir "$tmp" --logfile "$tmp/redis.log") &
redis_pid=$!
rcli() { redis-cli -h 127.0.0.1 -p "$port" "$@"; }
for _ in $(seq 1 100); do
  rcli ping >/dev/null 2>&1 && break
  sleep 0.05
done
rcli ping >/dev/null || { echo "18-sidekiq: redis-server did not start" >&2; exit 1; }
echo "redis-server $(redis-server --version | awk '{ print $3 }') on 127.0.0.1:$port; $(nproc) cores;" \
  "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# N jobs in Sidekiq's form (lib/sidekiq/client.rb), RESP for redis-cli --pipe, 1000 per RPUSH.
python3 - "$jobs" >"$tmp/jobs.resp" 2>"$tmp/last.json" <<'PY'
import json, sys
n = int(sys.argv[1])
def resp(*args):
    out = [f"*{len(args)}\r\n"]
    for a in args:
        b = a.encode()
        out.append(f"${len(b)}\r\n{a}\r\n")
    return "".join(out)
def job(i):
    return json.dumps({"class": "Noop", "args": [i, "x" * 40], "retry": True, "queue": "bench",
                       "jid": f"{i:024x}", "created_at": 1764720000.123456,
                       "enqueued_at": 1764720000.123789}, separators=(",", ":"))
# n - 1 jobs in the staging list; the last one is LPUSHed with the RENAME (below).
for first in range(0, n - 1, 1000):
    sys.stdout.write(resp("RPUSH", "bench:staging", *[job(i) for i in range(first, min(n - 1, first + 1000))]))
sys.stderr.write(job(n - 1))
PY
bridge_rates="" pushb_rates=""

# One round of the bridge: a fresh server and store, the backlog released at once.
bridge_round() {
  local fwp http
  fwp="$(free_port)" http="$(free_port)"
  rm -f "$tmp"/bridge.db*
  rcli del queue:bench bench:staging >/dev/null
  cat >"$tmp/bulkhead.toml" <<TOML
[sidekiq]
redis = "redis://127.0.0.1:$port/0"
queues = ["bench"]
batch = $batch
node = "bench"
TOML
  "$server" serve --listen "127.0.0.1:$fwp" --http "127.0.0.1:$http" --store "sqlite:$tmp/bridge.db" \
    --data-dir "$tmp" --config "$tmp/bulkhead.toml" --log-level warn 2>"$tmp/bulkhead.log" &
  bulkhead_pid=$!
  for _ in $(seq 1 200); do
    curl -sf "http://127.0.0.1:$http/api/info" 2>/dev/null | grep -q '"up":true' && break
    sleep 0.05
  done
  rcli --pipe <"$tmp/jobs.resp" >/dev/null
  job_bytes="$(rcli lindex bench:staging 0 | tr -d '\n' | wc -c)"
  echo "--- bridge: $jobs Sidekiq jobs of $job_bytes bytes, sidekiq.batch $batch, sqlite: store"
  local b0 r0 b1 r1 t0 t1
  b0="$(cpu "$bulkhead_pid")" r0="$(cpu "$redis_pid")"
  t0="$EPOCHREALTIME"
  # One step: the backlog appears, and an LPUSH (what Sidekiq::Client does) wakes the idle
  # bridge's BRPOPLPUSH (a RENAME alone wakes no blocked client).
  printf 'MULTI\nRENAME bench:staging queue:bench\nLPUSH queue:bench %s\nEXEC\n' \
    "$(sed 's/"/\\"/g' "$tmp/last.json" | sed 's/^/"/; s/$/"/')" | rcli >/dev/null
  # Polls INFO every 5 ms from then on until bulkhead's queue holds all N.
  python3 - "$http" "$jobs" "$port" "$t0" >"$tmp/timing" <<'PY'
import json, socket, sys, time, urllib.request
http, n, port, t0 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
first = last = None
def llen(key):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"LLEN {key}\r\n".encode())
    v = int(s.recv(64).decode().strip()[1:])
    s.close()
    return v
while time.time() - t0 < 600:
    info = json.load(urllib.request.urlopen(f"http://127.0.0.1:{http}/api/info"))
    taken = info["sidekiq"]["taken"]
    now = time.time()
    if first is None and taken > 0:
        first = now
    if taken >= n and info["faktory"]["queues"].get("bench", 0) == n:
        last = now
        break
    time.sleep(0.005)
if last is None:
    sys.exit("bridge: not done within 600 s")
print(f"{last - t0:.3f} {first - t0:.3f} {llen('queue:bench')} {llen('bulkhead:bridge:taking:bench')}")
PY
  t1="$EPOCHREALTIME"
  b1="$(cpu "$bulkhead_pid")" r1="$(cpu "$redis_pid")"
  local total first left inprogress rate
  read -r total first left inprogress <"$tmp/timing"
  rate="$(awk -v n="$jobs" -v w="$total" 'BEGIN { printf "%.0f", n / w }')"
  echo "taken $jobs in $total s from the RENAME (the first seen taken after $first s);" \
    "left in queue:bench $left, in progress $inprogress"
  awk -v w="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" -v n="$jobs" \
    -v b="$(awk -v a="$b0" -v c="$b1" 'BEGIN { print c - a }')" \
    -v r="$(awk -v a="$r0" -v c="$r1" 'BEGIN { print c - a }')" 'BEGIN {
      printf "  cpu share of one core over %.2f s: bulkhead %.0f %%, redis-server %.0f %%; per job: bulkhead %.1f us, redis-server %.1f us\n", w, 100 * b / w, 100 * r / w, 1e6 * b / n, 1e6 * r / n
    }'
  echo "bridge_jobs_per_second $rate"
  bridge_rates+="$rate "
  kill "$bulkhead_pid"
  wait "$bulkhead_pid" 2>/dev/null || true
  bulkhead_pid=""
}

# One round of PUSHB over the Faktory protocol, same N, the same kind of store. bench_noop's job is
# 71 bytes of JSON plus its argument: as long as the Sidekiq job.
pushb_round() {
  local arg=$((job_bytes > 71 ? job_bytes - 71 : 0)) out rate
  rm -f "$tmp"/pushb.db*
  echo "--- PUSHB: bench_noop --push-only, $jobs jobs, sqlite: store, --arg-bytes $arg"
  out="$("$bench" --jobs "$jobs" --connections 4 --store "sqlite:$tmp/pushb.db" --push-only \
    --arg-bytes "$arg" 2>&1)" || { echo "$out"; echo "18-sidekiq: PUSHB FAILED" >&2; return 1; }
  echo "$out" | tail -n 1
  rate="$(awk '$1 == "push_jobs_per_second" { print $2 }' <<<"$out")"
  pushb_rates+="$rate "
}

status=0
for _ in $(seq 1 "$rounds"); do
  bridge_round || status=1
  pushb_round || status=1
done
b="$(median "$bridge_rates")" p="$(median "$pushb_rates")"
echo "--- summary (medians of $rounds rounds): bridge $b jobs/s (rounds: ${bridge_rates% }), PUSHB" \
  "$p jobs/s (rounds: ${pushb_rates% }); bridge/PUSHB $(awk -v a="$b" -v b="$p" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "n/a" }');" \
  "target: bridge >= 20000"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
