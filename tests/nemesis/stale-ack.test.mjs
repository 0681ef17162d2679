// The stale-ACK window of docs/operations.md ("Windows the nemesis measured"), step by step: a
// worker on node a holds a job; node a is cut from Redis past its heartbeat's expiry; node b's
// reaper gives the job back and a worker on node b takes it; the cut heals and node a's worker
// ACKs: answered +OK, the job is ended under node b's worker, whose FAIL then finds no job and
// nothing is retried. This test pins today's behaviour; a fence (a reservation token checked at
// ACK) would turn the stale ACK into an error and this test must then change with the docs.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { RawConn } from '../interop/lib/fwp.mjs';
import { cleanupStack, startServer, waitFor } from '../interop/lib/server.mjs';
import { startRedis } from '../cluster/lib/redis.mjs';
import { isTransient } from './lib/clients.mjs';
import { startProxy } from './lib/proxy.mjs';
import { MODES } from './lib/run.mjs';

const CONFIG = `redis_namespace = "stale"\n${MODES.short.liveness}`;

async function open(defer, node, wid) {
  const c = await RawConn.open(node.port);
  defer(() => c.destroy());
  await c.hello({ wid });
  return c;
}

// `line` again while the node answers that it cannot reach Redis (the link is reconnecting).
async function untilAnswered(conn, line) {
  return waitFor(async () => {
    const r = await conn.call(line, 15_000);
    const text = r.type === '-' ? r.text : r.text ?? 'null';
    return isTransient(text) ? null : r;
  }, { timeout: 20_000, interval: 100, message: `an answer to ${line} other than store unavailable` });
}

test('a node back from a split ACKs a job another node handed out since: +OK, the holder\'s FAIL finds nothing', async (t) => {
  const defer = cleanupStack(t);
  const redis = await startRedis(defer);
  const proxy = await startProxy(defer, redis.port);
  const a = await startServer(defer, { store: `redis://${proxy.endpoint}`, config: CONFIG });
  const b = await startServer(defer, { store: `redis://${redis.endpoint}`, config: CONFIG });
  const w1 = await open(defer, a, 'stale-w1');
  const w2 = await open(defer, b, 'stale-w2');

  const job = { jid: 'stale-ack-job-1', jobtype: 'Work', args: [], queue: 'stale' };
  assert.deepEqual(await w2.call(`PUSH ${JSON.stringify(job)}`), { type: '+', text: 'OK' });
  const first = await w1.call('FETCH stale');
  assert.equal(JSON.parse(first.text).jid, job.jid, 'node a\'s worker holds the job');

  proxy.blackhole();
  // Node b reaps node a (its heartbeat expires after 1 s) and hands the job out again.
  const again = await waitFor(async () => {
    const r = await w2.call('FETCH stale', 5_000);
    return r.type === '$' && JSON.parse(r.text);
  }, { timeout: 15_000, interval: 50, message: 'node b handing out the job node a held' });
  assert.equal(again.jid, job.jid);
  proxy.heal();

  const staleAck = await untilAnswered(w1, `ACK {"jid":"${job.jid}"}`);
  assert.deepEqual(staleAck, { type: '+', text: 'OK' }, 'the stale ACK is answered +OK');
  const fail = await w2.call(`FAIL ${JSON.stringify({ jid: job.jid, errtype: 'E', message: 'failed on node b' })}`);
  assert.deepEqual(fail, { type: '-', text: `ERR Job not found ${job.jid}` }, 'the current holder\'s FAIL finds no job');
  const info = JSON.parse((await w2.call('INFO')).text);
  assert.equal(info.faktory.sets.retries, 0, 'nothing is retried');
  assert.match(a.stderr, /was silent longer than its heartbeat TTL/, 'node a says its reservations may be gone');
});
