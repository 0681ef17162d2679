// Faktory Enterprise's batches and job tracking with the real npm `faktory-worker` client:
// it has no batch or tracking API, so the commands go through `client.send([...])` (the raw reply
// string; an error line rejects with its text), and the members and callbacks run on a real
// faktory-worker Worker. docs/batches.md and docs/tracking.md are the contract.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import faktory from 'faktory-worker';

import { cleanupStack, startServer, waitFor } from './lib/server.mjs';

function newClient(defer, url) {
  const client = new faktory.Client({ url });
  defer(() => client.close());
  return client;
}

async function batchStatus(client, bid) {
  return JSON.parse(await client.send(['BATCH', 'STATUS', bid]));
}

test('a batch run by a real worker fires complete, then success, each exactly once', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer);
  const client = newClient(defer, server.url);

  const bid = await client.send(['BATCH', 'NEW', JSON.stringify({
    bid: '',
    description: 'interop batch',
    complete: { jid: 'interop-complete-01', jobtype: 'BatchComplete', args: ['c'], queue: 'default' },
    success: { jid: 'interop-success-001', jobtype: 'BatchSuccess', args: ['s'], queue: 'default' },
  })]);
  assert.match(bid, /^b-[A-Za-z0-9_-]{14}$/);
  assert.equal(await client.send(['BATCH', 'OPEN', bid]), bid);

  const members = [];
  for (let i = 0; i < 10; i += 1) {
    const job = client.job('Member', i);
    job.custom = { bid };
    members.push(await job.push());
  }
  let status = await batchStatus(client, bid);
  assert.equal(status.total, 10);
  assert.equal(status.pending, 10);
  assert.equal(status.parent_bid, undefined);
  assert.equal(await client.send(['BATCH', 'COMMIT', bid]), 'OK');

  const runs = new Map();
  const callbacks = [];
  let failedOnce = false;
  const worker = new faktory.Worker({
    url: server.url,
    concurrency: 3,
    registry: {
      Member: async (i) => {
        runs.set(i, (runs.get(i) ?? 0) + 1);
        if (i === 3 && !failedOnce) {
          failedOnce = true;
          const e = new Error('first attempt fails');
          e.code = 'Flaky';
          throw e;
        }
      },
      BatchComplete: (arg) => async ({ job }) => { callbacks.push({ cb: 'complete', arg, custom: job.custom }); },
      BatchSuccess: (arg) => async ({ job }) => { callbacks.push({ cb: 'success', arg, custom: job.custom }); },
    },
  });
  defer(() => worker.stop());
  await worker.work();

  // Every member ran once (member 3 failed): complete fires; success waits for member 3.
  await waitFor(async () => callbacks.some((c) => c.cb === 'complete'),
    { timeout: 20_000, message: 'the complete callback ran' });
  status = await batchStatus(client, bid);
  assert.equal(status.pending, 1);
  assert.equal(status.failed, 1);
  assert.equal(status.success_st, '');
  assert.ok(!callbacks.some((c) => c.cb === 'success'), 'success waits for the failed member');

  // Its retry (requeued now rather than after the backoff) succeeds: success fires.
  await client.retries.requeue();
  await waitFor(async () => {
    const s = await batchStatus(client, bid);
    return s.complete_st === '2' && s.success_st === '2' && s;
  }, { timeout: 20_000, message: 'STATUS: both callbacks finished' });
  status = await batchStatus(client, bid);
  assert.equal(status.pending, 0);
  assert.equal(status.failed, 0, 'the member that succeeded on retry left `failed`');
  assert.equal(status.total, 10);

  // Each callback exactly once, with Faktory's custom._bid / custom._cb.
  const info = await client.info();
  assert.equal(info.faktory.total_processed, 10 + 1 + 2, 'ten members, one retry, two callbacks');
  assert.deepEqual(callbacks.map((c) => c.cb), ['complete', 'success']);
  assert.deepEqual(callbacks[0].custom, { _bid: bid, _cb: 'complete' });
  assert.deepEqual(callbacks[1].custom, { _bid: bid, _cb: 'success' });
  assert.equal(callbacks[1].arg, 's');
  for (let i = 0; i < 10; i += 1) assert.equal(runs.get(i), i === 3 ? 2 : 1, `member ${i}`);
  assert.deepEqual(info.faktory.tasks.batch, { created: 1, closed: 1, expired: 0, successful: 1 });
});

test('batch errors reach the client as rejections naming the problem', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer);
  const client = newClient(defer, server.url);
  await assert.rejects(client.send(['BATCH', 'STATUS', 'b-nosuchbatch0001']), /No such batch b-nosuchbatch0001/);
  await assert.rejects(client.send(['BATCH', 'COMMIT', 'b-nosuchbatch0001']), /No such batch b-nosuchbatch0001/);
  await assert.rejects(client.send(['BATCH', 'NEW', '{"description":"x"}']),
    /BATCH NEW needs a success or complete callback job/);
  const job = client.job('Member', 1);
  job.custom = { bid: 'b-nosuchbatch0001' };
  await assert.rejects(job.push(), /No such batch b-nosuchbatch0001/);
  await assert.rejects(client.send(['TRACK', 'SET', '{"percent":5}']), /TRACK SET needs a jid/);
});

test('a tracked job reports its progress and state through TRACK SET / TRACK GET', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer);
  const client = newClient(defer, server.url);
  const trackGet = async (jid) => JSON.parse(await client.send(['TRACK', 'GET', jid]));

  const job = client.job('Report', 'q3');
  job.custom = { track: 1 };
  const jid = await job.push();
  let st = await trackGet(jid);
  assert.equal(st.state, 'enqueued');
  assert.equal(st.percent, undefined);

  const seenWhileWorking = [];
  const worker = new faktory.Worker({
    url: server.url,
    concurrency: 1,
    registry: {
      Report: () => async ({ job: running }) => {
        const reserveUntil = new Date(Date.now() + 3600_000).toISOString();
        assert.equal(await client.send(['TRACK', 'SET', JSON.stringify({
          jid: running.jid, percent: 50, desc: 'Halfway', reserve_until: reserveUntil,
        })]), 'OK');
        seenWhileWorking.push(await trackGet(running.jid));
      },
    },
  });
  defer(() => worker.stop());
  await worker.work();
  await waitFor(async () => (await trackGet(jid)).state === 'success',
    { timeout: 20_000, message: 'TRACK GET: success' });
  assert.equal(seenWhileWorking.length, 1);
  assert.equal(seenWhileWorking[0].state, 'working');
  assert.equal(seenWhileWorking[0].percent, 50);
  assert.equal(seenWhileWorking[0].desc, 'Halfway');
  st = await trackGet(jid);
  assert.equal(st.percent, 50);
  assert.match(st.updated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  assert.deepEqual(await trackGet('never-pushed-01'), { jid: 'never-pushed-01', state: 'unknown', updated_at: '' });
});

test('kill -9 right after the last member\'s ACK: after a restart the callback is there, once', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer, { store: 'sqlite' });
  let client = new faktory.Client({ url: server.url });
  const bid = await client.send(['BATCH', 'NEW', JSON.stringify({
    success: { jid: 'crash-success-001', jobtype: 'BatchSuccess', args: [] },
  })]);
  for (let i = 0; i < 20; i += 1) {
    const job = client.job('Member', i);
    job.custom = { bid };
    await job.push();
  }
  assert.equal(await client.send(['BATCH', 'COMMIT', bid]), 'OK');
  for (let i = 0; i < 20; i += 1) {
    const job = await client.fetch('default');
    assert.ok(job, `FETCH ${i}`);
    await client.ack(job.jid);  // +OK: durable, with the batch's counting and the callback's push
  }
  await client.close();
  await server.kill9();
  await server.restart();
  client = new faktory.Client({ url: server.url });
  defer(() => client.close());

  const status = await batchStatus(client, bid);
  assert.equal(status.pending, 0);
  assert.equal(status.success_st, '1', 'the callback was pushed with the last ACK');
  const ran = [];
  const worker = new faktory.Worker({
    url: server.url,
    concurrency: 2,
    registry: { BatchSuccess: () => async ({ job }) => { ran.push(job.jid); } },
  });
  defer(() => worker.stop());
  await worker.work();
  await waitFor(async () => (await batchStatus(client, bid)).success_st === '2',
    { timeout: 20_000, message: 'STATUS: success callback finished' });
  assert.deepEqual(ran, ['crash-success-001']);
  const info = await client.info();
  assert.equal(info.faktory.sets.scheduled, 0, 'no second copy waiting');
  assert.equal(info.faktory.queues.default ?? 0, 0);
});
