// Two `bulkhead serve` nodes on one redis-server namespace, driven by the npm faktory-worker client
// and worker: jobs pushed through both nodes are processed by workers on both; one node is killed
// with SIGKILL mid-run and nothing answered +OK is lost (its reservations come back through the
// survivor's reaper); a FETCH blocked on one node is woken by a PUSH on the other; quiet and
// terminate sent through one node reach the other's workers, which every node's /api/workers
// lists with the node they are connected to.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { RawConn } from '../interop/lib/fwp.mjs';
import { cleanupStack, waitFor } from '../interop/lib/server.mjs';
import {
  eachLimited, info, key, newClient, newWorker, nodeIdOf, startNodes,
} from './lib/cluster.mjs';
import { startRedis } from './lib/redis.mjs';

const JOBS = 20_000;
const KILL_AFTER = 3_000;            // processed jobs before node B is killed
const PUSHES_IN_FLIGHT = 16;         // per producer
const WORKER_CONCURRENCY = 10;       // per worker; two workers per node
const REAPED_WITHIN_MS = 30_000;     // a dead node's reservations come back within 30 s
const DRAIN_TIMEOUT_MS = 90_000;

test('20,000 jobs through two nodes, one killed mid-run: every +OK job is processed', async (t) => {
  const defer = cleanupStack(t);
  const redis = await startRedis(defer);
  const [a, b] = await startNodes(defer, 2, { store: `redis://${redis.endpoint}` });
  const bId = await nodeIdOf(redis, b);

  const seen = new Map();  // jid -> times run
  const workers = [a, a, b, b].map((node) => newWorker(defer, node.url, {
    concurrency: WORKER_CONCURRENCY,
    registry: {
      Work: async (n) => {
        const jid = `cluster-job-${n}`;
        seen.set(jid, (seen.get(jid) ?? 0) + 1);
      },
    },
  }));
  for (const w of workers) await w.work();

  // Producers on both nodes; a push refused by the dead node goes through the survivor, with the
  // same jid (PUSH is idempotent), so every jid ends up answered +OK exactly once by some node.
  const clientA = newClient(defer, a.url);
  const clientB = newClient(defer, b.url);
  let failedOver = 0;
  const push = async (client, n) => {
    const job = { jid: `cluster-job-${n}`, jobtype: 'Work', args: [n], queue: 'default' };
    try {
      await client.push(job);
    } catch (e) {
      if (client !== clientB) throw e;
      failedOver += 1;
      await clientA.push(job);
    }
  };
  const numbers = Array.from({ length: JOBS }, (_, n) => n);
  const producing = Promise.all([
    eachLimited(numbers.filter((n) => n % 2 === 0), PUSHES_IN_FLIGHT, (n) => push(clientA, n)),
    eachLimited(numbers.filter((n) => n % 2 === 1), PUSHES_IN_FLIGHT, (n) => push(clientB, n)),
  ]);

  await waitFor(() => seen.size >= KILL_AFTER,
    { timeout: 60_000, message: `${KILL_AFTER} jobs processed before the kill` });
  await b.kill9();
  const killedAt = Date.now();
  for (const w of workers.slice(2)) w.quiet();  // B's workers: nothing more to fetch there
  await producing;

  // The survivor's reaper gives back what B had reserved (B leaves {NS}:nodes with its set).
  await waitFor(async () => {
    const nodes = (await redis.cli('SMEMBERS', key('nodes'))).split('\n');
    const reserved = Number(await redis.cli('SCARD', key(`reserved:${bId}`)));
    return !nodes.includes(bId) && reserved === 0;
  }, { timeout: REAPED_WITHIN_MS, message: `node ${bId}'s reservations given back` });
  const reapedAfterMs = Date.now() - killedAt;

  await waitFor(() => seen.size === JOBS, {
    timeout: DRAIN_TIMEOUT_MS,
    message: `all ${JOBS} jobs processed (seen ${seen.size})`,
  });
  await waitFor(async () => {
    const i = await info(clientA);
    return i.working === 0 && i.queue('default') === 0 && i;
  }, { timeout: 10_000, message: 'INFO: nothing working or queued' });
  const final = await info(clientA);
  assert.equal(final.failures, 0, 'no job failed');
  assert.equal(final.retries, 0, 'no job is in the retry set');

  // Duplicates only for jobs in flight on B: at most what its workers held (concurrency plus
  // one FETCH each) when it died.
  const dups = [...seen.values()].filter((n) => n > 1).length;
  const bHeld = 2 * (WORKER_CONCURRENCY + 1);
  assert.ok(dups <= bHeld, `${dups} jobs ran twice; at most ${bHeld} were in flight on node B`);
  t.diagnostic(`reaped after ${reapedAfterMs} ms; ${dups} ran twice; ${failedOver} pushes moved to A`);
  assert.match(a.stderr, new RegExp(`node ${bId} stopped heartbeating`), 'the survivor logs the dead node');
});

test('a FETCH blocked on one node returns the job a PUSH on the other node made available', async (t) => {
  const defer = cleanupStack(t);
  const redis = await startRedis(defer);
  const [a, b] = await startNodes(defer, 2, { store: `redis://${redis.endpoint}` });
  const fetcher = await RawConn.open(b.port);
  defer(() => fetcher.destroy());
  await fetcher.hello({ wid: 'cluster-fetcher' });
  const pusher = await RawConn.open(a.port);
  defer(() => pusher.destroy());
  await pusher.hello();

  for (let i = 0; i < 5; i += 1) {
    const jid = `cluster-wake-${i}`;
    // FETCH blocks up to 2 s and answers null when nothing comes; the job is pushed after the
    // FETCH was sent, so a job in the answer is the other node's wake-up (a bounded wait).
    fetcher.write('FETCH wake\r\n');
    const pushed = await pusher.call(`PUSH ${JSON.stringify({ jid, jobtype: 'Wake', args: [], queue: 'wake' })}`);
    assert.deepEqual(pushed, { type: '+', text: 'OK' });
    const got = await fetcher.reply(10_000);
    assert.equal(got.type, '$', `FETCH on node B answered ${JSON.stringify(got)}`);
    assert.equal(JSON.parse(got.text).jid, jid);
    assert.deepEqual(await fetcher.call(`ACK {"jid":"${jid}"}`), { type: '+', text: 'OK' });
  }

  // /metrics: each node's own figures carry its node id, the store's figures none.
  for (const node of [a, b]) {
    const id = await nodeIdOf(redis, node);
    const metrics = await (await fetch(`${node.httpBase}/metrics`)).text();
    assert.match(metrics, new RegExp(`\\nbulkhead_workers_connected\\{node="${id}"\\} \\d+\\n`));
    assert.match(metrics, /\nbulkhead_queue_size\{queue="wake"\} 0\n/);
    assert.match(metrics, /\nbulkhead_jobs_processed_total 5\n/);
  }
});

test('quiet and terminate sent through one node reach a worker connected to the other', async (t) => {
  const defer = cleanupStack(t);
  const redis = await startRedis(defer);
  const [a, b] = await startNodes(defer, 2, { store: `redis://${redis.endpoint}` });
  const bId = await nodeIdOf(redis, b);
  const worker = await RawConn.open(b.port);
  defer(() => worker.destroy());
  await worker.hello({ wid: 'cluster-signalled' });
  const beat = () => worker.call('BEAT {"wid":"cluster-signalled"}');
  assert.deepEqual(await beat(), { type: '+', text: 'OK' });

  // Node A lists the (idle) worker of node B: node B publishes its roster with its heartbeat.
  const listedOnA = async () => (await (await fetch(`${a.httpBase}/api/workers`)).json())
    .find((w) => w.wid === 'cluster-signalled');
  const listed = await waitFor(listedOnA, { timeout: 5_000, message: 'node A listing the worker of node B' });
  assert.equal(listed.node, bId);
  assert.equal(listed.state, 'running');
  assert.equal(listed.connections, 1);

  // Node A does not have the worker: it sends the signal to the other nodes and answers 200; the
  // worker hears it at a BEAT on node B.
  assert.equal((await a.setWorkerState('cluster-signalled', 'quiet')).status, 200);
  await waitFor(async () => (await beat()).text === '{"state":"quiet"}',
    { timeout: 5_000, message: 'BEAT on node B answering quiet' });
  await waitFor(async () => (await listedOnA())?.state === 'quiet',
    { timeout: 5_000, message: 'node A listing the worker of node B as quiet' });
  // A quiet worker gets no job on node B either.
  const producer = await RawConn.open(a.port);
  defer(() => producer.destroy());
  await producer.hello();
  const job = { jid: 'signal-job-1', jobtype: 'Noop', args: [], queue: 'signals' };
  assert.deepEqual(await producer.call(`PUSH ${JSON.stringify(job)}`), { type: '+', text: 'OK' });
  assert.deepEqual(await worker.call('FETCH signals', 5_000), { type: 'null', text: null });

  // "Terminate all" on node A reaches node B's workers.
  assert.equal((await a.setWorkerState('', 'terminate')).status, 200);
  await waitFor(async () => (await beat()).text === '{"state":"terminate"}',
    { timeout: 5_000, message: 'BEAT on node B answering terminate' });
  // Gone from node B, gone from node A's list at node B's next heartbeat.
  worker.destroy();
  await waitFor(async () => (await listedOnA()) === undefined,
    { timeout: 5_000, message: 'node A no longer listing the worker that left node B' });
});
