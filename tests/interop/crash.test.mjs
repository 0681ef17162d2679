// kill -9 of the server while a node worker processes jobs, then a restart on the same SQLite
// store: no job is lost, and only jobs in flight at the kill may run twice.
//
// Vocabulary (all sets of jids):
//   A  ACK confirmed: the worker's ACK got +OK (before the kill, or already on the wire).
//   S  started before the kill: the worker's handler ran for it.
//   F  in flight at the kill: S minus A (handler ran, ACK never confirmed).
//   D  drained after the restart: fetched (and acked) from the queue.
//   M  missing: neither in A nor in D. Each must be in the working set (reserved before the kill,
//      reservation survives the restart) or have had an ACK that landed without its +OK coming
//      back (then it is in F). A FETCH whose reply was lost in the kill can leave a job in working
//      that the worker never saw: at most one per FETCH that failed at the kill.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import faktory from 'faktory-worker';

import { cleanupStack, startServer, waitFor } from './lib/server.mjs';

const N = 2000;

function jidOf(i) {
  return `crash-${String(i).padStart(6, '0')}`;
}

test('kill -9 during processing, restart on the same store: every job acked or still present', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer, { store: 'sqlite' });
  const client = new faktory.Client({ url: server.url });
  let clientClosed = false;
  const closeClient = async () => {
    if (!clientClosed) {
      clientClosed = true;
      await client.close();
    }
  };
  defer(closeClient);

  const all = [];
  for (let i = 0; i < N; i += 1) all.push(jidOf(i));
  for (let b = 0; b < N; b += 500) {
    const batch = all.slice(b, b + 500).map((jid, k) => ({ jid, jobtype: 'Crash', args: [b + k] }));
    assert.deepEqual(await client.pushBulk(batch), {}, `PUSHB batch at ${b}`);
  }
  assert.equal((await client.info()).faktory.queues.default, N);
  await closeClient();

  // A random kill point, logged so that a failure can be replayed by hand.
  const killAfterAcks = 200 + Math.floor(Math.random() * 1200);
  t.diagnostic(`kill -9 after ${killAfterAcks} confirmed ACKs`);

  const started = new Map();  // jid -> handler runs before the restart
  const acked = new Set();
  let killed = null;
  const worker = new faktory.Worker({
    url: server.url,
    concurrency: 20,
    timeout: 60,  // never let the worker's shutdown timeout call process.exit
    registry: {
      Crash: async (i) => {
        const jid = jidOf(i);
        started.set(jid, (started.get(jid) ?? 0) + 1);
        // 0-3 ms of "work", so that several jobs are in flight at any moment.
        await new Promise((r) => setTimeout(r, i % 4));
      },
    },
  });
  worker.on('error', () => {});  // connection errors after the kill are expected
  worker.client.connectionFactory.onConnectionError = () => {};
  worker.client.pool.removeAllListeners('factoryCreateError').on('factoryCreateError', () => {});
  let fetchFailures = 0;
  const fetch = worker.fetch.bind(worker);
  worker.fetch = async () => {
    try {
      return await fetch();
    } catch (e) {
      fetchFailures += 1;
      throw e;
    }
  };
  const ack = worker.client.ack.bind(worker.client);
  worker.client.ack = async (jid) => {
    const r = await ack(jid);
    acked.add(jid);
    if (acked.size >= killAfterAcks && !killed) killed = server.kill9();
    return r;
  };
  let workerStopped = false;
  const stopWorker = async () => {
    if (workerStopped) return;
    workerStopped = true;
    await worker.stop();
  };
  defer(stopWorker);

  await worker.work();
  await waitFor(() => killed, { timeout: 60_000, message: `${killAfterAcks} ACKs and the kill` });
  const exit = await killed;
  assert.equal(exit.signal, 'SIGKILL', `server ended by ${JSON.stringify(exit)}`);
  await stopWorker();

  const A = new Set(acked);
  const S = new Set(started.keys());
  const F = new Set([...S].filter((j) => !A.has(j)));
  for (const [jid, n] of started) assert.equal(n, 1, `${jid} ran ${n} times before the kill`);
  t.diagnostic(`before the kill: started ${S.size}, acked ${A.size}, in flight ${F.size}, failed FETCHes ${fetchFailures}`);

  await server.start();
  const drainClient = new faktory.Client({ url: server.url });
  defer(() => drainClient.close());
  const before = (await drainClient.info()).faktory;
  t.diagnostic(`after restart: ${JSON.stringify({ queues: before.queues, sets: before.sets })}`);
  assert.equal(before.sets.retries, 0, 'no job failed, so the retry set is empty');

  // Drain the queue: exactly as many FETCHes as INFO says are queued.
  const D = new Set();
  const queued = before.queues.default ?? 0;
  for (let n = 0; n < queued; n += 1) {
    const job = await drainClient.fetch('default');
    assert.ok(job, `FETCH ${n + 1} of ${queued} returned a job`);
    assert.ok(!D.has(job.jid), `${job.jid} delivered twice by the drain`);
    D.add(job.jid);
    await drainClient.ack(job.jid);
  }
  const after = (await drainClient.info()).faktory;
  assert.equal(after.queues.default ?? 0, 0, 'queue empty after the drain');
  assert.equal(after.sets.retries, 0);
  const W = after.sets.working;

  // 1. A confirmed ACK is never undone: no acked job comes back.
  const backAfterAck = [...D].filter((j) => A.has(j));
  assert.deepEqual(backAfterAck, [], 'jobs delivered again after a confirmed ACK');
  // 2. Only jobs in flight at the kill run twice.
  const twice = [...D].filter((j) => S.has(j));
  assert.deepEqual(twice.filter((j) => !F.has(j)), [], 'jobs run twice that were not in flight');
  // 3. Every job is accounted for.
  const M = all.filter((j) => !A.has(j) && !D.has(j));
  const unknownM = M.filter((j) => !F.has(j));
  assert.ok(unknownM.length <= fetchFailures,
    `${unknownM.length} jobs neither acked, drained nor in flight (${unknownM.slice(0, 5).join(', ')}); ` +
    `only ${fetchFailures} FETCH replies can have been lost`);
  assert.ok(W <= M.length, `working ${W} > missing ${M.length}: a working job was also acked or drained`);
  assert.ok(M.length - W <= F.size, `${M.length - W} jobs vanished without being in flight`);
  assert.equal(A.size + D.size + M.length, N);
  t.diagnostic(`accounted: acked ${A.size}, drained ${D.size} (of which ran twice ${twice.length}), ` +
    `still reserved ${W}, acked without confirmation ${M.length - W}`);

  // The restarted server keeps working normally.
  await drainClient.job('Crash', -1).push();
  const last = await drainClient.fetch('default');
  assert.equal(last?.jobtype, 'Crash');
  await drainClient.ack(last.jid);
});

// Eight producers PUSH one job at a time (with `payloadBytes` of args) until the server is killed
// with kill -9 after `killAfterPushes` confirmed PUSHes; the restarted server must hold every one.
async function pushThenKill9(t, { payloadBytes, killAfterPushes }) {
  const defer = cleanupStack(t);
  const server = await startServer(defer, { store: 'sqlite' });
  const client = new faktory.Client({ url: server.url, poolSize: 8 });
  client.connectionFactory.onConnectionError = () => {};
  client.pool.removeAllListeners('factoryCreateError').on('factoryCreateError', () => {});
  let clientClosed = false;
  defer(async () => {
    if (!clientClosed) {
      clientClosed = true;
      await client.close();
    }
  });

  t.diagnostic(`kill -9 after ${killAfterPushes} confirmed PUSHes of ${payloadBytes} bytes of args`);
  const args = payloadBytes > 0 ? ['x'.repeat(payloadBytes)] : [];
  const confirmed = new Set();
  const attempted = new Set();
  let killed = null;
  let next = 0;
  // 8 producers, each PUSHing one job at a time until the server dies.
  const producer = async () => {
    while (!killed && next < N) {
      const jid = `push-${String(next).padStart(6, '0')}`;
      next += 1;
      attempted.add(jid);
      try {
        await client.push({ jid, jobtype: 'Pushed', args, queue: 'pushed' });
      } catch {
        return;  // the server is gone
      }
      confirmed.add(jid);
      if (confirmed.size >= killAfterPushes && !killed) killed = server.kill9();
    }
  };
  await Promise.all(Array.from({ length: 8 }, producer));
  assert.ok(killed, 'the kill happened before all jobs were pushed');
  assert.equal((await killed).signal, 'SIGKILL');
  clientClosed = true;
  await Promise.race([client.close(), new Promise((r) => setTimeout(r, 10_000))]);
  t.diagnostic(`attempted ${attempted.size}, confirmed ${confirmed.size}`);

  await server.start();
  const drainClient = new faktory.Client({ url: server.url });
  defer(() => drainClient.close());
  const queued = (await drainClient.info()).faktory.queues.pushed ?? 0;
  const drained = new Set();
  for (let n = 0; n < queued; n += 1) {
    const job = await drainClient.fetch('pushed');
    assert.ok(job, `FETCH ${n + 1} of ${queued}`);
    assert.ok(!drained.has(job.jid), `${job.jid} stored twice`);
    drained.add(job.jid);
    await drainClient.ack(job.jid);
  }
  const lost = [...confirmed].filter((j) => !drained.has(j));
  assert.deepEqual(lost, [], `${lost.length} PUSHes answered +OK were lost by kill -9`);
  const unknown = [...drained].filter((j) => !attempted.has(j));
  assert.deepEqual(unknown, [], 'jobs that were never pushed');
  t.diagnostic(`after restart: ${drained.size} stored (${drained.size - confirmed.size} of them unconfirmed)`);
}

test('kill -9 while jobs are being pushed: every PUSH answered +OK survives the restart', async (t) => {
  await pushThenKill9(t, { payloadBytes: 0, killAfterPushes: 100 + Math.floor(Math.random() * 600) });
});

test('kill -9 while large jobs are pushed past the redo log\'s first region: none answered is lost', async (t) => {
  // 4 KiB jobs: the loop moves to the redo log's second region after 1 MiB (about 250 jobs) and
  // back to the first once it is committed and the second holds 1 MiB.
  await pushThenKill9(t, { payloadBytes: 4096, killAfterPushes: 300 + Math.floor(Math.random() * 500) });
});

test('graceful restart (SIGTERM) keeps queues, reservations, retries, dead and scheduled jobs', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer, { store: 'sqlite' });
  let client = new faktory.Client({ url: server.url });
  const closeLater = (c) => {
    let closed = false;
    return async () => {
      if (!closed) {
        closed = true;
        await c.close();
      }
    };
  };
  let closeClient = closeLater(client);
  defer(() => closeClient());
  for (let i = 0; i < 6; i += 1) {
    await client.push({ jid: `graceful-${i}`, jobtype: 'G', args: [i], retry: i === 1 ? -1 : 25 });
  }
  const later = client.job('G', 'later');
  later.at = new Date(Date.now() + 3_600_000);
  await later.push();
  const fetched = [];
  for (let i = 0; i < 3; i += 1) fetched.push(await client.fetch('default'));
  assert.deepEqual(fetched.map((j) => j.jid), ['graceful-0', 'graceful-1', 'graceful-2']);
  await client.fail('graceful-0', Object.assign(new Error('to retries'), { code: 'E' }));
  await client.fail('graceful-1', Object.assign(new Error('to dead'), { code: 'E' }));
  const sets = (info) => ({ queue: info.faktory.queues.default ?? 0, ...info.faktory.sets });
  const before = sets(await client.info());
  assert.deepEqual(before, { queue: 3, scheduled: 1, retries: 1, dead: 1, working: 1 });
  await closeClient();

  const stopped = await server.stop();
  assert.equal(stopped.code, 0, `graceful stop: ${JSON.stringify(stopped)}\n${server.stderr}`);
  await server.start();
  client = new faktory.Client({ url: server.url });
  closeClient = closeLater(client);
  assert.deepEqual(sets(await client.info()), before, 'state after the restart');
  // The reservation made before the restart is still ACKable.
  await client.ack('graceful-2');
  const after = await client.info();
  assert.equal(after.faktory.sets.working, 0);
  assert.equal((await client.fetch('default')).jid, 'graceful-3', 'FIFO order kept across the restart');
});
