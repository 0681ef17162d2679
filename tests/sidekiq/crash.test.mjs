// kill -9 while the bridge takes a backlog of 20,000 Sidekiq jobs, with a Faktory worker
// acknowledging jobs meanwhile: after the restart every job is in bulkhead's store exactly once —
// none lost, none taken twice. The jobs pushed with Sidekiq::Client come in two steps: 2,000 that
// the worker runs and acknowledges, then 18,000 that appear at once (pushed to a staging queue,
// then RENAMEd onto the taken queue), which the kill interrupts. Jobs stored but not yet removed
// from the in-progress list at the kill are taken again and recognised (repeats); a job run and
// acknowledged in that window is recognised by its mark (sidekiq_bridge_test.cc builds that state
// exactly: a kill cannot aim at a one-millisecond window). The store is read directly (the SQLite
// file, with the `sqlite3` CLI) once the server has stopped.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

import { startRedis } from '../cluster/lib/redis.mjs';
import { RawConn } from '../interop/lib/fwp.mjs';
import { cleanupStack, waitFor } from '../interop/lib/server.mjs';
import { bridgeInfo, sidekiqPush, startBridged } from './lib/sidekiq.mjs';

const FIRST = 2_000;
const JOBS = 20_000;
const LIST = 'bulkhead:bridge:taking:crash-node';

// FETCH + ACK until the connection dies; `acked` gets every jid whose ACK was answered +OK,
// `pending` the one whose ACK was sent and not answered (it may or may not have been applied).
async function acknowledge(conn, acked, pending) {
  try {
    for (;;) {
      const job = await conn.call('FETCH count staging');
      if (job.type !== '$') continue;
      const { jid } = JSON.parse(job.text);
      pending.add(jid);
      const r = await conn.call(`ACK ${JSON.stringify({ jid })}`);
      pending.delete(jid);
      if (r.type === '+') acked.add(jid);
    }
  } catch {
    // the server was killed
  }
}

// push_bulk items of `n` Count jobs onto Sidekiq queue `queue`, 1,000 per call.
function counts(queue, from, n) {
  const bulk = [];
  for (let first = from; first < from + n; first += 1000) {
    const args = [];
    for (let i = first; i < Math.min(from + n, first + 1000); i += 1) args.push([i]);
    bulk.push({ class: 'Count', queue, args });
  }
  return bulk;
}

// jid -> the job's exact entry in a Sidekiq queue.
async function entries(redis, key) {
  const out = new Map();
  for (const line of (await redis.cli('LRANGE', key, '0', '-1')).split('\n')) {
    if (line !== '') out.set(JSON.parse(line).jid, line);
  }
  return out;
}

test('kill -9 while taking 20,000 jobs: after the restart each is in the store exactly once',
  async (t) => {
    const defer = cleanupStack(t);
    const redis = await startRedis(defer);
    await sidekiqPush(redis, { push_bulk: counts('count', 0, FIRST) });
    await sidekiqPush(redis, { push_bulk: counts('staging', FIRST, JOBS - FIRST) });
    const text = new Map([...await entries(redis, 'queue:count'), ...await entries(redis, 'queue:staging')]);
    assert.equal(text.size, JOBS);
    await redis.cli('RENAME', 'queue:staging', 'staged');  // out of sight until released

    const server = await startBridged(defer, redis,
      { sidekiq: 'queues = ["count"]\nbatch = 250\nnode = "crash-node"\n' });
    const conn = await RawConn.open(server.port);
    defer(() => conn.destroy());
    await conn.hello();
    const acked = new Set();
    const pending = new Set();
    const worker = acknowledge(conn, acked, pending);
    await waitFor(() => acked.size >= 200, { timeout: 30_000, message: '200 jobs acknowledged' });
    await redis.cli('RENAME', 'staged', 'queue:count');
    await waitFor(async () => (await bridgeInfo(server)).taken >= FIRST + 2000,
      { timeout: 30_000, interval: 5, message: '2,000 more jobs taken' });
    await server.kill9();
    await worker;
    const left = Number(await redis.cli('LLEN', 'queue:count'));
    const inProgress = Number(await redis.cli('LLEN', LIST));

    await server.start();
    await waitFor(async () => Number(await redis.cli('LLEN', 'queue:count')) === 0 &&
      Number(await redis.cli('LLEN', LIST)) === 0,
    { timeout: 60_000, message: 'the rest taken, the in-progress list settled' });
    const info = await bridgeInfo(server);
    await server.stop();
    const db = path.join(server.dataDir, 'store.db');
    const stored = execFileSync('sqlite3', [db, 'SELECT jid FROM jobs'], { encoding: 'utf8' })
      .split('\n').filter((l) => l !== '');
    const storedSet = new Set(stored);
    t.diagnostic(`at the kill: ${left} still in the Sidekiq queue, ${inProgress} in progress, ` +
      `${acked.size} acknowledged; after the restart: ${info.taken} taken, ${info.repeats} repeats`);
    assert.ok(left > 0, 'the kill came while jobs were still waiting in Sidekiq');
    assert.equal(stored.length, storedSet.size, 'no jid twice in the store');
    for (const jid of acked) assert.ok(!storedSet.has(jid), `${jid} acknowledged, then taken again`);
    const missing = [...text.keys()].filter((jid) => !storedSet.has(jid) && !acked.has(jid) &&
      !pending.has(jid));
    assert.deepEqual(missing, [], 'every job is in the store or was acknowledged');
  });
