// Jobs the bridge cannot take — not JSON, a delivery whose arguments PUSH would refuse, a job over
// sidekiq.max_job_bytes, a class name with a control character — go to Sidekiq's own dead set with
// the reason, counted, and the bridge keeps taking the jobs after them.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { startRedis } from '../cluster/lib/redis.mjs';
import { cleanupStack, waitFor } from '../interop/lib/server.mjs';
import { bridgeInfo, sidekiqPush, startBridged } from './lib/sidekiq.mjs';

test('bad input goes to Sidekiq\'s dead set with its reason; the bridge keeps taking', async (t) => {
  const defer = cleanupStack(t);
  const redis = await startRedis(defer);
  const server = await startBridged(defer, redis, { sidekiq: 'max_job_bytes = 4096\n' });
  await redis.cli('LPUSH', 'queue:bulkhead', 'this is { not JSON');
  await sidekiqPush(redis, {
    push: [
      { class: 'webpush', queue: 'bulkhead', args: [{ subscription: { endpoint: 'https://push.example/1' } }] },
      { class: 'Big', queue: 'bulkhead', args: ['x'.repeat(10_000)] },
      { class: 'Evil\u0007Class', queue: 'bulkhead', args: [] },
      { class: 'Good', queue: 'bulkhead', args: [1] },
    ],
  });
  await waitFor(async () => Number(await redis.cli('ZCARD', 'dead')) === 4,
    { timeout: 20_000, message: 'four entries in Sidekiq\'s dead set' });
  await waitFor(async () => (await server.httpInfo()).faktory.queues.bulkhead === 1,
    { message: 'the good job taken' });
  const entries = (await redis.cli('ZRANGE', 'dead', '0', '-1')).split('\n').map((l) => JSON.parse(l));
  const byClass = Object.fromEntries(entries.map((e) => [e.class, e]));
  for (const e of entries) {
    assert.equal(e.error_class, 'Bulkhead::RefusedJob');
    assert.equal(typeof e.failed_at, 'number');
  }
  assert.match(byClass['Bulkhead::UnreadableJob'].error_message, /^not JSON: /);
  assert.deepEqual(byClass['Bulkhead::UnreadableJob'].args, ['this is { not JSON'], 'kept whole');
  assert.match(byClass.webpush.error_message, /^webpush: .*keys/);
  assert.match(byClass.Big.error_message, /bytes; at most 4096 are taken \(sidekiq\.max_job_bytes\)$/);
  assert.equal(byClass['Evil\u0007Class'].error_message, 'class holds a control character');
  const info = await bridgeInfo(server);
  assert.equal(info.dead, 4);
  assert.equal(info.taken, 1);
  assert.equal(Number(await redis.cli('LLEN', `bulkhead:bridge:taking:${info.node}`)), 0);
  assert.match(await (await fetch(`${server.httpBase}/metrics`)).text(),
    /^bulkhead_sidekiq_dead_total 4$/m);
  // And after them, the bridge goes on taking.
  await sidekiqPush(redis, { push: [{ class: 'Later', queue: 'bulkhead', args: [] }] });
  await waitFor(async () => (await server.httpInfo()).faktory.queues.bulkhead === 2,
    { message: 'a later job taken' });
});
