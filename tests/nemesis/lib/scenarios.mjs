// The nemesis scenarios: each a fault (or faults) run in the middle of the load (lib/run.mjs),
// recorded as a window in the history. Lengths come from the mode (run.mjs MODES).
import { waitFor } from '../../interop/lib/server.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export const SCENARIOS = {
  // Node a cut from Redis (every byte held both ways) longer than the heartbeat's expiry while
  // its workers hold reservations; the others reap them; then the cut heals and what node a had
  // sent (ACKs among it) reaches Redis late.
  partition: {
    name: 'partition',
    fault: ({ history, proxies, p }) => history.fault('node a cut from redis', async () => {
      proxies[0].blackhole();
      await sleep(p.cutMs);
      proxies[0].heal();
    }),
  },
  // Node a SIGSTOPped past its heartbeat's expiry, then resumed.
  'pause-node': {
    name: 'pause-node',
    fault: ({ history, nodes, p }) => history.fault('node a SIGSTOP', async () => {
      nodes[0].proc.kill('SIGSTOP');
      await sleep(p.stopNodeMs);
      nodes[0].proc.kill('SIGCONT');
    }),
  },
  // redis-server SIGSTOPped: every node's commands wait on it.
  'redis-stall': {
    name: 'redis-stall',
    fault: ({ history, redis, p }) => history.fault('redis SIGSTOP', async () => {
      redis.proc.kill('SIGSTOP');
      await sleep(p.stallRedisMs);
      redis.proc.kill('SIGCONT');
    }),
  },
  // redis-server killed (SIGKILL) and started again from its append-only file (appendfsync
  // always: everything it answered is in the file).
  'redis-restart': {
    name: 'redis-restart',
    persistent: true,
    fault: ({ history, redis }) => history.fault('redis kill -9, restart from AOF', async () => {
      await redis.kill9();
      await redis.start();
    }),
  },
  // Node c's wall clock 5 minutes ahead (libfaketime; its monotonic clock untouched, run.mjs)
  // for the whole run: the window is the run.
  'clock-ahead': {
    name: 'clock-ahead',
    skewNode: 2,
    skew: '+5m',
    fault: async ({ history, p }) => {
      // Open until the run's end (run.mjs closes it).
      history.record({ op: 'fault', name: 'node c clock +5 min', t0: history.ops[0].start, t1: null });
      await sleep(p.cutMs);
    },
  },
  // Sentinel: node a cut from every Redis and Sentinel; the primary killed (SIGKILL); the
  // Sentinels promote a replica while node a is away; then node a's links heal.
  'sentinel-cut': {
    name: 'sentinel-cut',
    sentinel: true,
    fault: ({ history, redis, sentinels, sentinelField, proxies, p }) => history.fault('node a cut; primary kill -9; fail-over', async () => {
      proxies[0].blackhole();
      await redis.kill9();
      await waitFor(async () => (await sentinelField(sentinels[0].port, 'port')) !== String(redis.port),
        { timeout: 30_000, message: 'the sentinels promoting a replica' });
      await sleep(p.cutMs);
      proxies[0].heal();
    }),
  },
  // Latency, then a trickle, then connection resets on node b's link to Redis.
  'slow-link': {
    name: 'slow-link',
    fault: ({ history, proxies, p }) => history.fault('node b link: 300 ms latency, trickle, reset', async () => {
      proxies[1].latency(300);
      await sleep(p.cutMs / 3);
      proxies[1].trickle(64, 20);
      await sleep(p.cutMs / 3);
      proxies[1].reset();
      proxies[1].heal();
      await sleep(p.cutMs / 3);
    }),
  },
};
