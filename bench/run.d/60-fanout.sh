#!/usr/bin/env bash
# Delivery throughput at fan-out scale (bench/fanout/fanout.mjs): 20,000 signed activitypub
# deliveries to 1,000 HTTPS hosts and 50,000 webpush deliveries to 3 push services, inboxes
# answering after 50 ms, after 1 s, or 5 % of them never; bulkhead with today's caps and with the
# caps raised, Mastodon's way (Sidekiq + http.rb) and `openssl speed` in the same run; prints the
# ratios. `make bench-fanout` runs it alone (about 10-15 minutes on 2 cores).
#
# The hosts h0001.fanout.test ... are distinct names on distinct 127.x addresses: the benchmark
# runs in a private mount namespace (unshare -m, so root) whose /etc/hosts is the machine's plus
# those names, bind-mounted; bulkhead (getaddrinfo) and Ruby resolve through it with no change,
# and the machine's own /etc/hosts is never touched.
# Env: BUILD_DIR (default build) and the FANOUT_* settings listed in bench/fanout/fanout.mjs;
# FANOUT_MAIN, the script run in that namespace (default bench/fanout/fanout.mjs; `make
# bench-inflight` runs bench/fanout/inflight.mjs, 15,000 deliveries held in flight, with it).
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir="${BUILD_DIR:-build}"
if [ ! -x "$build_dir/bulkhead" ]; then
  echo "60-fanout: $build_dir/bulkhead missing (run make build-server)" >&2
  exit 1
fi
for tool in node ruby sidekiq redis-server redis-cli openssl unshare mount; do
  command -v "$tool" >/dev/null || { echo "60-fanout: $tool missing (make setup installs it)" >&2; exit 1; }
done
if [ ! -d tests/node_modules/faktory-worker ]; then
  echo "60-fanout: tests/node_modules missing (make setup installs it)" >&2
  exit 1
fi
if [ "$(id -u)" != 0 ]; then
  echo "60-fanout: needs root, for a private mount namespace with its own /etc/hosts (unshare -m)" >&2
  exit 1
fi
echo "fd limits: soft $(ulimit -Sn), hard $(ulimit -Hn)"

tmp="$(mktemp -d /tmp/bench-fanout.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
{
  cat /etc/hosts
  echo "# bulkhead fan-out benchmark"
  node --input-type=module -e "
    import { hostsFileLines, makeHosts } from './bench/fanout/topology.mjs';
    const h = makeHosts(Number(process.env.FANOUT_HOSTS || 1000), Number(process.env.FANOUT_PUSH_HOSTS || 3));
    process.stdout.write(hostsFileLines([...h.inboxes, ...h.pushes]));"
} >"$tmp/hosts"
ulimit -Sn "$(ulimit -Hn)"
BUILD_DIR="$build_dir" unshare -m --propagation private -- bash -c \
  'mount --bind "$1" /etc/hosts && exec node "$2"' _ "$tmp/hosts" "${FANOUT_MAIN:-bench/fanout/fanout.mjs}"
