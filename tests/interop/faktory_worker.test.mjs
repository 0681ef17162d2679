// Interop with the real npm `faktory-worker` 4.7.1 client and worker against `bulkhead serve`.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import faktory from 'faktory-worker';

import { cleanupStack, startServer, waitFor } from './lib/server.mjs';

const TESTS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Node's client sends `${error.code}` as errtype.
function flakyError(message) {
  const e = new Error(message);
  e.code = 'FlakyError';
  return e;
}

async function info(client) {
  const i = await client.info();
  return {
    raw: i,
    processed: i.faktory.total_processed,
    failures: i.faktory.total_failures,
    queue: (name) => i.faktory.queues?.[name] ?? 0,
    retries: i.faktory.sets.retries,
    dead: i.faktory.sets.dead,
    scheduled: i.faktory.sets.scheduled,
    working: i.faktory.sets.working,
  };
}

function newClient(defer, options) {
  const client = new faktory.Client(options);
  defer(() => client.close());
  return client;
}

// A Worker whose FETCHes and BEATs are counted (instance overrides of Worker#fetch/#beat).
function countedWorker(defer, options) {
  const worker = new faktory.Worker(options);
  worker.stats = { fetches: 0, inflight: 0, beats: 0 };
  const fetch = worker.fetch.bind(worker);
  worker.fetch = async () => {
    worker.stats.fetches += 1;
    worker.stats.inflight += 1;
    try {
      return await fetch();
    } finally {
      worker.stats.inflight -= 1;
    }
  };
  const beat = worker.beat.bind(worker);
  worker.beat = async () => {
    await beat();
    worker.stats.beats += 1;
  };
  let stopped = false;
  worker.stopOnce = async () => {
    if (stopped) return;
    stopped = true;
    await worker.stop();
  };
  defer(() => worker.stopOnce());
  return worker;
}

test('jobs pushed with the client are processed by faktory.work', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer);
  const client = newClient(defer, { url: server.url });

  const f = faktory.create();
  const seen = new Map();
  f.register('Add', async (a, b) => {
    assert.equal(b, a * 2);
    seen.set(a, (seen.get(a) ?? 0) + 1);
  });
  const jids = [];
  for (let i = 0; i < 50; i += 1) jids.push(await client.job('Add', i, i * 2).push());
  assert.equal(new Set(jids).size, 50);
  assert.equal((await info(client)).queue('default'), 50);

  await f.work({ url: server.url, concurrency: 5 });
  defer(() => f.stop());
  await waitFor(() => seen.size === 50, { timeout: 20_000, message: 'all 50 jobs handled' });
  await waitFor(async () => {
    const i = await info(client);
    return i.processed === 50 && i.working === 0 && i.queue('default') === 0 && i;
  }, { timeout: 10_000, message: 'INFO: 50 processed, nothing working or queued' });
  for (const [a, n] of seen) assert.equal(n, 1, `job ${a} ran ${n} times`);
});

test('FAILed jobs land in retries; MUTATE discards, kills, requeues and clears', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer);
  const client = newClient(defer, { url: server.url });

  const jid = [];
  for (let i = 0; i < 12; i += 1) jid.push(await client.job('Flaky', i).push());
  const worker = countedWorker(defer, {
    url: server.url,
    concurrency: 4,
    registry: {
      Flaky: async (i) => {
        if (i % 2 === 1) throw flakyError(`odd ${i}`);
      },
    },
  });
  await worker.work();
  await waitFor(async () => {
    const i = await info(client);
    return i.processed === 12 && i.failures === 6 && i.retries === 6 && i.working === 0;
  }, { timeout: 20_000, message: 'INFO: 12 processed, 6 failures, 6 in retries' });
  await worker.stopOnce();

  const expectSets = async (what, want) => {
    const i = await info(client);
    const got = { retries: i.retries, dead: i.dead, default: i.queue('default') };
    assert.deepEqual(got, want, `after ${what}`);
  };
  await expectSets('the failures', { retries: 6, dead: 0, default: 0 });
  await client.retries.withJids(jid[1]).discard();
  await expectSets('discard of one retry', { retries: 5, dead: 0, default: 0 });
  await client.retries.withJids(jid[3], jid[5]).kill();
  await expectSets('kill of two retries', { retries: 3, dead: 2, default: 0 });
  await client.retries.withJids(jid[7]).requeue();
  await expectSets('requeue of one retry', { retries: 2, dead: 2, default: 1 });
  await client.retries.clear();
  await expectSets('clear of retries', { retries: 0, dead: 2, default: 1 });
  await client.dead.ofType('Flaky').requeue();
  await expectSets('requeue of the dead', { retries: 0, dead: 0, default: 3 });

  // The requeued jobs are the killed and requeued ones, with their failure recorded.
  const fetched = [];
  for (let n = 0; n < 3; n += 1) {
    const job = await client.fetch('default');
    assert.ok(job, `FETCH ${n} returned a job`);
    fetched.push(job);
    await client.ack(job.jid);
  }
  assert.deepEqual(fetched.map((j) => j.jid).sort(), [jid[3], jid[5], jid[7]].sort());
  for (const job of fetched) {
    assert.equal(job.queue, 'default');
    assert.equal(job.failure?.errtype, 'FlakyError', `failure of ${JSON.stringify(job)}`);
    assert.match(job.failure?.message ?? '', /^odd \d+$/);
  }
});

test('retry 0 discards on failure, retry -1 goes straight to dead', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer);
  const client = newClient(defer, { url: server.url });
  const j0 = client.job('Boom', 0);
  j0.retry = 0;
  await j0.push();
  const j1 = client.job('Boom', 1);
  j1.retry = -1;
  await j1.push();
  const worker = countedWorker(defer, {
    url: server.url,
    concurrency: 2,
    registry: { Boom: async () => { throw flakyError('boom'); } },
  });
  await worker.work();
  const i = await waitFor(async () => {
    const x = await info(client);
    return x.failures === 2 && x.working === 0 && x;
  }, { timeout: 20_000, message: 'two failures' });
  assert.equal(i.retries, 0);
  assert.equal(i.dead, 1);
});

test('PUSHB (client.pushBulk) takes valid jobs and reports the rejected one', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer);
  const client = newClient(defer, { url: server.url });
  const jobs = [];
  for (let i = 0; i < 100; i += 1) jobs.push({ jobtype: 'Bulk', args: [i], queue: 'bulk' });
  jobs.push({ jid: 'short', jobtype: 'Bulk', args: [], queue: 'bulk' });
  const rejected = await client.pushBulk(jobs);
  assert.deepEqual(Object.keys(rejected), ['short']);
  assert.equal(rejected.short.reason, 'jobs must have a reasonable jid parameter');
  assert.equal((await info(client)).queue('bulk'), 100);
  assert.deepEqual(await client.pushBulk([{ jobtype: 'Bulk', args: [], queue: 'bulk' }]), {});

  const seen = new Set();
  const worker = countedWorker(defer, {
    url: server.url,
    queues: ['bulk'],
    concurrency: 10,
    registry: { Bulk: async (i) => { if (i !== undefined) seen.add(i); } },
  });
  await worker.work();
  await waitFor(async () => {
    const x = await info(client);
    return x.processed === 101 && x.queue('bulk') === 0 && x.working === 0;
  }, { timeout: 20_000, message: '101 bulk jobs processed' });
  assert.equal(seen.size, 100);
});

test('BEAT: quiet set over HTTP stops the node worker fetching; terminate follows', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer);
  const client = newClient(defer, { url: server.url });
  const wid = 'quiet-worker-1';
  const handled = [];
  const worker = countedWorker(defer, {
    url: server.url,
    wid,
    concurrency: 2,
    beatInterval: 0.2,
    registry: { Job: async (name) => { handled.push(name); } },
  });
  await worker.work();
  await client.job('Job', 'before').push();
  await waitFor(() => handled.includes('before'), { timeout: 10_000, message: 'the first job handled' });

  const quiet = await server.setWorkerState(wid, 'quiet');
  assert.ok(quiet.status >= 200 && quiet.status < 300, `POST quiet: HTTP ${quiet.status} ${quiet.body}`);
  // A second connection with the same wid (same hostname, pid and labels) sees the state.
  const beatClient = newClient(defer, { url: server.url, wid });
  assert.equal(await beatClient.beat(), 'quiet');
  await waitFor(() => worker.quieted, { timeout: 5_000, message: 'the worker to read quiet from BEAT' });
  // A FETCH already in flight ends within the server's 2 s block.
  await waitFor(() => worker.stats.inflight === 0, { timeout: 5_000, message: 'no FETCH in flight' });

  const fetches = worker.stats.fetches;
  const beats = worker.stats.beats;
  await client.job('Job', 'after').push();
  await waitFor(() => worker.stats.beats >= beats + 5, { timeout: 10_000, message: 'five more BEATs' });
  assert.equal(worker.stats.fetches, fetches, 'a quiet worker must not FETCH');
  assert.deepEqual(handled, ['before']);
  assert.equal((await info(client)).queue('default'), 1);

  // Keep the wid alive through beatClient's connection while the worker stops, then terminate.
  await worker.stopOnce();
  const term = await server.setWorkerState(wid, 'terminate');
  assert.ok(term.status >= 200 && term.status < 300, `POST terminate: HTTP ${term.status} ${term.body}`);
  assert.equal(await beatClient.beat(), 'terminate');
});

test('a job scheduled with `at` in the future is not fetched before its time', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer);
  const client = newClient(defer, { url: server.url });
  const handledAt = [];
  const worker = countedWorker(defer, {
    url: server.url,
    concurrency: 1,
    registry: { Later: async () => { handledAt.push(Date.now()); } },
  });
  await worker.work();
  const at = new Date(Date.now() + 3000);
  const job = client.job('Later');
  job.at = at;
  await job.push();
  const i = await info(client);
  assert.equal(i.scheduled, 1, 'the job waits in the scheduled set');
  assert.equal(i.queue('default'), 0);
  await waitFor(() => handledAt.length === 1, { timeout: 20_000, message: 'the scheduled job to run' });
  assert.ok(handledAt[0] >= at.getTime(), `ran ${at.getTime() - handledAt[0]} ms before its time`);
  await waitFor(async () => (await info(client)).scheduled === 0, { timeout: 5_000, message: 'scheduled set empty' });
});

function runNode(script, env) {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--input-type=module', '-e', script],
      { cwd: TESTS_DIR, env: { ...process.env, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }));
  });
}

test('password: FAKTORY_URL with the right password works, a wrong or missing one is rejected', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer, { password: 'secret' });
  const base = `127.0.0.1:${server.port}`;
  const script = `
    import faktory from 'faktory-worker';
    try {
      const client = await faktory.connect();
      const jid = await client.job('Secured', 1).push();
      console.log('PUSHED ' + jid);
      await client.close();
    } catch (e) {
      console.log('REJECTED ' + e.message);
      process.exit(3);
    }`;
  const right = await runNode(script, { FAKTORY_URL: `tcp://:secret@${base}` });
  assert.equal(right.code, 0, `right password: ${right.stdout} ${right.stderr}`);
  assert.match(right.stdout, /^PUSHED \S+/m);

  const wrong = await runNode(script, { FAKTORY_URL: `tcp://:wrong@${base}` });
  assert.equal(wrong.code, 3, `wrong password: ${wrong.stdout} ${wrong.stderr}`);
  assert.match(wrong.stdout, /REJECTED .*Invalid password/);

  await assert.rejects(new faktory.Client({ url: `tcp://:nope@${base}` }).connect(), /Invalid password/);
  await assert.rejects(new faktory.Client({ url: `tcp://${base}` }).connect(), /Invalid password/);

  const client = newClient(defer, { url: `tcp://:secret@${base}` });
  assert.equal((await info(client)).queue('default'), 1);
});

test('a job pushed with retry null is fetched with the configured default; a re-sent PUSH succeeds once', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer, { config: 'default_retry = 7\n' });
  const client = newClient(defer, { url: server.url });
  // The client fills in retry 25 unless told otherwise; null asks for the server's default.
  const jid = await client.push({ jobtype: 'Plain', args: [1], queue: 'parity', retry: null });
  // Re-sending the same job (a producer whose reply was lost) resolves, and queues no copy.
  assert.equal(await client.push({ jid, jobtype: 'Plain', args: [1], queue: 'parity', retry: null }), jid);
  const bulk = await client.pushBulk([{ jid, jobtype: 'Plain', args: [1], queue: 'parity' }]);
  assert.deepEqual(bulk, {}, 'PUSHB takes the held jid as a success too');
  assert.equal((await info(client)).queue('parity'), 1);
  const job = await client.fetch('parity');
  assert.equal(job.jid, jid);
  assert.equal(job.retry, 7, `retry as stored: ${JSON.stringify(job)}`);
  await client.ack(jid);
  assert.equal(await client.fetch('parity'), null, 'no second copy');
});
