#!/usr/bin/env bash
# RAM, disk and reopen time per queued job on the sqlite: store (bench/store_memory_main.cc)
# beside a redis-server holding the same jobs in Sidekiq's layout (LPUSH of the job JSON onto
# queue:push), in the same run. Redis: used_memory and RSS growth per job after the pushes.
# Env: BUILD_DIR (default build), BENCH_STORE_MEMORY_JOBS (default 1000000).
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir="${BUILD_DIR:-build}"
bench="$build_dir/store_memory"
if [ ! -x "$bench" ]; then
  echo "19-store-memory: $bench missing (run make build)" >&2
  exit 1
fi
jobs="${BENCH_STORE_MEMORY_JOBS:-1000000}"
work="$(mktemp -d)"
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
echo "sqlite: $("$bench" --jobs "$jobs" --dir "$work/sqlite" 2>/dev/null | tail -1)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
redis-server --port "$port" --save '' --appendonly no --daemonize yes --dir "$work" \
  --logfile "$work/redis.log" >/dev/null
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
info() { redis-cli -p "$port" info memory | tr -d '\r' | awk -F: -v k="$1" '$1==k {print $2}'; }
used0="$(info used_memory)"; rss0="$(info used_memory_rss)"
# The same 134-byte JSON per job as store_memory's default (jid: 24 hex digits).
python3 - "$jobs" <<'PY' | redis-cli -p "$port" --pipe >/dev/null
import sys
n = int(sys.argv[1])
out = sys.stdout
for i in range(n):
    jid = "%024x" % ((i * 2654435761) % (1 << 96))
    args = "[%d,\"%s\"]" % (100000 + i % 900000, "x" * 26)
    job = ('{"jid":"%s","jobtype":"Web::PushNotificationWorker","args":%s,"queue":"push"}'
           % (jid, args))
    out.write("*3\r\n$5\r\nLPUSH\r\n$10\r\nqueue:push\r\n$%d\r\n%s\r\n" % (len(job), job))
PY
len="$(redis-cli -p "$port" llen queue:push)"
used1="$(info used_memory)"; rss1="$(info used_memory_rss)"
python3 -c "
n=$len
print('redis: {\"jobs\":%d,\"used_memory_per_job\":%.1f,\"rss_bytes_per_job\":%.1f}' % (n, ($used1-$used0)/n, ($rss1-$rss0)/n))"
