// Runs one nemesis scenario: a redis-server, `nodes` bulkhead nodes each reaching it through its
// own fault proxy (lib/proxy.mjs), load from several recording clients on every node (producers,
// workers, a batch client, a unique-job client, a cron entry), the scenario's faults in the
// middle, then a drain; writes the history (JSONL) and returns the checker's report.
//
//   const report = await runScenario(t, SCENARIOS.partition, { mode: 'short', outDir });
import fs from 'node:fs';
import path from 'node:path';

import { cleanupStack, startServer, waitFor } from '../../interop/lib/server.mjs';
import { sentinelField, startRedis, startSentinel, waitForSentinels } from '../../cluster/lib/redis.mjs';
import { check } from './checker.mjs';
import { Batcher, History, now, Producer, UniquePusher, Worker } from './clients.mjs';
import { ProxyGroup, sentinelRewrite, startProxy } from './proxy.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Timings per mode. `short` is `make test`'s (seconds per scenario, liveness timings shortened as
// tests/cluster does); `full` is `make nemesis`'s (the production liveness defaults: heartbeat
// 5 s, expiry 15 s, reaper 5 s; the fault lengths of docs/reliability.md). The Redis stall stays
// shorter than the heartbeat's expiry in both (0.7 of 1 s, 10 of 15 s): a longer one makes every
// node look dead when Redis resumes, a different fault whose window docs/operations.md states
// ("Windows the nemesis measured": a Redis stall longer than the heartbeat TTL).
export const MODES = {
  short: {
    liveness: 'redis_heartbeat_ms = 200\nredis_heartbeat_ttl_ms = 1000\nredis_reap_ms = 200\n',
    loadBeforeMs: 1_500, loadAfterMs: 1_500, drainMs: 20_000,
    cutMs: 3_000, stopNodeMs: 3_000, stallRedisMs: 700,
  },
  full: {
    liveness: '',
    loadBeforeMs: 5_000, loadAfterMs: 10_000, drainMs: 120_000,
    cutMs: 30_000, stopNodeMs: 60_000, stallRedisMs: 10_000,
  },
};

const THROTTLE = { queue: 'thr', limit: 3 };
const UNIQUE_FOR_S = 30;
const CRON_EVERY_S = 1;

// With Sentinel, durability "replicated": a job is answered +OK once a replica holds it (the
// promise that survives a fail-over; docs/operations.md).
function nodeConfig(mode, scenario) {
  const durability = scenario.sentinel ? 'durability = "replicated"\nredis_wait_timeout_ms = 1000\n' : '';
  return `redis_namespace = "nemesis"\n${durability}${MODES[mode].liveness}
[throttles]
${THROTTLE.queue} = { concurrency = ${THROTTLE.limit}, timeout = 60 }

[[cron]]
  schedule = "@every ${CRON_EVERY_S}s"
  name = "tick"
  [cron.job]
    type = "Tick"
`;
}

// Debian's libfaketime (package faketime) shifting the wall clock only. The Release binary links
// jemalloc, which libfaketime cannot start beside (wolfcw/libfaketime/issues/130: jemalloc's first
// clock_gettime() re-enters libfaketime's set-up through calloc). Preloaded first, glibc's
// libc_malloc_debug.so (malloc, free, ...) and libstdc++ (operator new and delete, which jemalloc
// also exports) give that one node glibc's allocator throughout, so that libfaketime can start.
const LIB = '/usr/lib/x86_64-linux-gnu';
const PRELOAD = [`${LIB}/libc_malloc_debug.so.0`, `${LIB}/libstdc++.so.6`, `${LIB}/faketime/libfaketime.so.1`];

function fakeTimeEnv(offset) {
  for (const f of PRELOAD) {
    if (!fs.existsSync(f)) throw new Error(`${f} is missing: install Debian's faketime, libc6 and libstdc++6 (scripts/setup)`);
  }
  return { LD_PRELOAD: PRELOAD.join(':'), FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' };
}

// Every pushed-OK job ACKed and every due batch callback run, per the history so far.
function drained(history) {
  const r = check(history.ops);
  return r.lost.length === 0 && r.batches.missing.length === 0 ? r : null;
}

function startLoad(history, nodes, p) {
  const common = { replyTimeoutMs: p.stopNodeMs + 20_000, ackGiveUpMs: p.drainMs, pushGiveUpMs: p.drainMs };
  const workers = [];
  const producers = [];
  for (const node of nodes) {
    for (let i = 0; i < 3; i += 1) {
      workers.push(new Worker(history, `w-${node.label}${i}`, node, { ...common, queues: [THROTTLE.queue, 'default'], workMs: 10 }).run());
    }
    producers.push(new Producer(history, `p-${node.label}`, node, { ...common, everyMs: 10, throttledEvery: 4, throttledQueue: THROTTLE.queue }).run());
    producers.push(new UniquePusher(history, `u-${node.label}`, node, { ...common, everyMs: 50, keys: 3, uniqueFor: UNIQUE_FOR_S }).run());
  }
  producers.push(new Batcher(history, 'b', nodes[nodes.length - 1], { ...common, everyMs: 100, members: 3 }).run());
  return { workers, producers };
}

// scenario: {name, nodes, persistent, skewNode, fault(ctx)}; ctx: {history, redis, nodes,
// proxies, p (the mode's timings)}.
const MASTER = 'nemesis';

// One redis-server; node i reaches it through its own proxy.
async function startSingleStore(defer, scenario, count) {
  const redis = await startRedis(defer, { persistent: scenario.persistent ?? false });
  defer(() => redis.proc?.kill('SIGCONT'));
  const links = [];
  for (let i = 0; i < count; i += 1) {
    const proxy = await startProxy(defer, redis.port);
    links.push({ url: `redis://${proxy.endpoint}`, group: new ProxyGroup([proxy]) });
  }
  return { redis, links };
}

// A primary, two replicas and three redis-sentinels (as tests/cluster/failover.test.mjs); node i
// reaches each of them through its own proxy, the Sentinels' answers rewritten to name node i's
// proxies (proxy.mjs sentinelRewrite).
async function startSentinelStore(defer, scenario, count) {
  const redis = await startRedis(defer);
  const replicas = [await startRedis(defer, { replicaOf: redis }), await startRedis(defer, { replicaOf: redis })];
  const sentinels = [];
  for (let i = 0; i < 3; i += 1) sentinels.push(await startSentinel(defer, { primary: redis, master: MASTER }));
  await waitForSentinels(sentinels, MASTER, replicas.length);
  const links = [];
  for (let i = 0; i < count; i += 1) {
    const ports = new Map();
    const proxies = [];
    for (const r of [redis, ...replicas]) {
      const proxy = await startProxy(defer, r.port);
      ports.set(r.port, proxy.port);
      proxies.push(proxy);
    }
    const sproxies = [];
    for (const s of sentinels) sproxies.push(await startProxy(defer, s.port, { rewrite: sentinelRewrite(ports) }));
    links.push({
      url: `redis-sentinel://${sproxies.map((p) => p.endpoint).join(',')}/${MASTER}`,
      group: new ProxyGroup([...proxies, ...sproxies]),
    });
  }
  return { redis, replicas, sentinels, links, sentinelField: (port, field) => sentinelField(port, MASTER, field) };
}

// scenario: {name, nodes, persistent, sentinel, skewNode, skew, fault(ctx)}; ctx: {history,
// redis (the primary), nodes, proxies (per node, a ProxyGroup of its links), p (the mode's
// timings), and with sentinel: replicas, sentinels, sentinelField}.
export async function runScenario(t, scenario, { mode = 'short', outDir }) {
  const p = MODES[mode];
  const defer = cleanupStack(t);
  const history = new History();
  const count = scenario.nodes ?? 3;
  const store = scenario.sentinel ? await startSentinelStore(defer, scenario, count) : await startSingleStore(defer, scenario, count);
  const nodes = [];
  for (let i = 0; i < count; i += 1) {
    const skew = scenario.skewNode === i ? scenario.skew : null;
    const node = await startServer(defer, {
      store: store.links[i].url,
      config: nodeConfig(mode, scenario),
      ...(skew ? { env: fakeTimeEnv(skew) } : {}),
    });
    defer(() => node.proc?.kill('SIGCONT'));
    node.label = String.fromCharCode(97 + i);
    nodes.push(node);
  }
  const proxies = store.links.map((l) => l.group);
  const meta = history.record({
    op: 'meta', scenario: scenario.name, mode, nodes: nodes.length, throttles: { [THROTTLE.queue]: THROTTLE.limit },
    unique_for: UNIQUE_FOR_S, cron_jobtype: 'Tick', cron_every_s: CRON_EVERY_S, start: now(), end: null,
  });
  const load = startLoad(history, nodes, p);
  try {
    await sleep(p.loadBeforeMs);
    await scenario.fault({ ...store, history, nodes, proxies, p });
    await sleep(p.loadAfterMs);
  } finally {
    await Promise.all(load.producers.map((x) => x.stop()));
  }
  let drainError = null;
  try {
    await waitFor(() => drained(history), { timeout: p.drainMs, interval: 200, message: 'every +OK job ACKed and every due batch callback run' });
  } catch (e) {
    drainError = e.message;
  }
  await Promise.all(load.workers.map((x) => x.stop({ now: true })));
  meta.end = now();
  for (const f of history.ops) if (f.op === 'fault' && f.t1 === null) f.t1 = meta.end;
  if (outDir) {
    fs.mkdirSync(outDir, { recursive: true });
    history.write(path.join(outDir, `${scenario.name}.jsonl`));
  }
  const report = check(history.ops);
  report.drainError = drainError;
  report.nodeLogs = nodes.map((n) => n.stderr);
  return report;
}
