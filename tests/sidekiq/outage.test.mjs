// The application's Redis stopped (SIGTERM; it keeps its data in an append-only file) and started
// again while jobs are being pushed and taken: bulkhead keeps serving its own jobs and says the
// bridge is down (INFO, /metrics, /healthz's detail, one log line), the bridge comes back by
// itself, and every job is taken exactly once.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { startRedis } from '../cluster/lib/redis.mjs';
import { RawConn } from '../interop/lib/fwp.mjs';
import { cleanupStack, waitFor } from '../interop/lib/server.mjs';
import { bridgeInfo, sidekiqPush, startBridged } from './lib/sidekiq.mjs';

const bulk = (from, n) => ({
  class: 'Work', queue: 'work', args: Array.from({ length: n }, (_, i) => [from + i]),
});

test('the application\'s Redis stopped and started mid-run: nothing lost; the bridge reports ' +
  'down, then up', async (t) => {
  const defer = cleanupStack(t);
  const redis = await startRedis(defer, { persistent: true });
  const server = await startBridged(defer, redis, { sidekiq: 'queues = ["work"]\n' });
  await sidekiqPush(redis, { push_bulk: [bulk(0, 3000)] });
  await waitFor(async () => (await bridgeInfo(server)).taken === 3000,
    { timeout: 30_000, message: 'the first 3,000 taken' });
  await sidekiqPush(redis, { push_bulk: [bulk(3000, 2000)] });
  await redis.stop();

  await waitFor(async () => !(await bridgeInfo(server)).up, { message: 'the bridge down' });
  const health = await fetch(`${server.httpBase}/healthz`);
  assert.equal(health.status, 200, 'bulkhead itself is healthy');
  assert.match(await health.text(), /^ok\nsidekiq bridge down: .+/);
  assert.match(await (await fetch(`${server.httpBase}/metrics`)).text(),
    /^bulkhead_sidekiq_bridge_up 0$/m);
  // bulkhead's own jobs go on.
  const conn = await RawConn.open(server.port);
  defer(() => conn.destroy());
  await conn.hello();
  assert.deepEqual(await conn.call('PUSH {"jid":"own-job-0001","jobtype":"x","queue":"own","args":[]}'),
    { type: '+', text: 'OK' });
  assert.equal(JSON.parse((await conn.call('FETCH own')).text).jid, 'own-job-0001');

  await redis.start();
  await waitFor(async () => (await bridgeInfo(server)).up, { timeout: 20_000, message: 'up again' });
  await sidekiqPush(redis, { push_bulk: [bulk(5000, 1000)] });
  let seen;
  await waitFor(async () => {
    const info = await server.httpInfo();
    seen = { stored: info.faktory.queues.work, waiting: Number(await redis.cli('LLEN', 'queue:work')),
      bridge: info.sidekiq };
    return seen.stored === 6000 && seen.waiting === 0;
  }, { timeout: 30_000, message: 'all 6,000 jobs in the store' }).catch((e) => {
    throw new Error(`${e.message}: ${JSON.stringify(seen)}\n${server.stderr.slice(-3000)}`);
  });
  const info = await bridgeInfo(server);
  assert.equal(info.taken, 6000, 'each taken once');
  assert.equal(Number(await redis.cli('LLEN', 'bulkhead:bridge:taking:' + info.node)), 0);
  const lost = server.stderr.match(/sidekiq redis: the connection to .* was lost/g) ?? [];
  const back = server.stderr.match(/sidekiq redis: the connection to .* is back/g) ?? [];
  assert.equal(lost.length, 1, 'one line when it went away');
  assert.equal(back.length, 1, 'one line when it came back');
  assert.match(await (await fetch(`${server.httpBase}/metrics`)).text(),
    /^bulkhead_sidekiq_bridge_up 1$/m);
});
