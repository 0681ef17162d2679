// Semantics from docs/protocol.md checked over a raw socket: INFO shape, FETCH priority and
// pausing, QUEUE commands, BEAT states, PUSHB result map.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { RawConn } from './lib/fwp.mjs';
import { startServer } from './lib/server.mjs';

const OK = { type: '+', text: 'OK' };
const push = (jid, queue, extra = {}) =>
  `PUSH ${JSON.stringify({ jid, jobtype: 'Noop', args: [], queue, ...extra })}`;

async function open(t, server, hello = {}) {
  const c = await RawConn.open(server.port);
  t.after(() => c.destroy());
  await c.hello(hello);
  return c;
}

test('INFO has the documented shape', async (t) => {
  const server = await startServer(t, { store: 'memory' });
  const c = await open(t, server);
  assert.deepEqual(await c.call(push('shape-0001', 'shape')), OK);
  const r = await c.call('INFO');
  assert.equal(r.type, '$');
  assert.doesNotMatch(r.text, /[{,:] /, 'compact JSON');
  const info = JSON.parse(r.text);
  for (const k of ['now', 'server_utc_time', 'faktory', 'server']) assert.ok(k in info, `INFO.${k}`);
  const f = info.faktory;
  for (const k of ['total_failures', 'total_processed', 'total_enqueued', 'total_queues']) {
    assert.equal(typeof f[k], 'number', `faktory.${k}`);
  }
  assert.equal(f.queues.shape, 1);
  assert.equal(f.total_enqueued, 1);
  for (const k of ['scheduled', 'retries', 'dead', 'working']) assert.equal(typeof f.sets[k], 'number', `sets.${k}`);
  // Faktory's task figures (server/tasks.go, server/scanner.go): clients read tasks.Retries.size.
  for (const k of ['Scheduled', 'Retries', 'Dead']) {
    for (const field of ['size', 'enqueued', 'cycles', 'wall_time_sec']) {
      assert.equal(typeof f.tasks[k]?.[field], 'number', `tasks.${k}.${field}`);
    }
  }
  for (const k of ['Busy', 'Workers']) {
    for (const field of ['size', 'reaped']) assert.equal(typeof f.tasks[k]?.[field], 'number', `tasks.${k}.${field}`);
  }
  for (const k of ['description', 'faktory_version', 'uptime', 'connections', 'command_count', 'used_memory_mb']) {
    assert.ok(k in info.server, `server.${k}`);
  }
  const http = await server.httpInfo();
  assert.equal(http.faktory.queues.shape, 1, 'GET /api/info serves the same document');
});

test('FETCH is strict priority over the queues given; paused queues are skipped', async (t) => {
  const server = await startServer(t, { store: 'memory' });
  const c = await open(t, server);
  for (const [jid, q] of [['low-00001', 'low'], ['low-00002', 'low'], ['high-0001', 'high']]) {
    assert.deepEqual(await c.call(push(jid, q)), OK);
  }
  const jidOf = (r) => JSON.parse(r.text).jid;
  assert.equal(jidOf(await c.call('FETCH high low')), 'high-0001');
  assert.equal(jidOf(await c.call('FETCH high low')), 'low-00001', 'FIFO within a queue');
  assert.deepEqual(await c.call('QUEUE PAUSE low'), OK);
  const start = Date.now();
  assert.deepEqual(await c.call('FETCH high low'), { type: 'null', text: null });
  const waited = Date.now() - start;
  assert.ok(waited >= 1500 && waited < 4000, `FETCH with nothing to give took ${waited} ms (contract: up to 2 s)`);
  assert.deepEqual(await c.call('QUEUE RESUME *'), OK);
  const lat = await c.call('QUEUE LATENCY low');
  assert.equal(lat.type, '$');
  assert.equal(typeof JSON.parse(lat.text).low, 'number');
  assert.equal(jidOf(await c.call('FETCH high low')), 'low-00002');
  assert.deepEqual(await c.call(push('gone-00001', 'gone')), OK);
  assert.deepEqual(await c.call('QUEUE REMOVE gone'), OK);
  const info = JSON.parse((await c.call('INFO')).text);
  assert.equal(info.faktory.queues.gone ?? 0, 0, 'QUEUE REMOVE deletes the queue');
});

test('a FETCH waiting on an empty queue gets a job pushed meanwhile', async (t) => {
  const server = await startServer(t, { store: 'memory' });
  const waiter = await open(t, server);
  const pusher = await open(t, server);
  const pending = waiter.call('FETCH later');
  assert.deepEqual(await pusher.call(push('later-0001', 'later')), OK);
  const r = await pending;
  assert.equal(r.type, '$');
  assert.equal(JSON.parse(r.text).jid, 'later-0001');
});

test('BEAT: +OK while running, bulk state after quiet and terminate', async (t) => {
  const server = await startServer(t, { store: 'memory' });
  const c = await open(t, server, { wid: 'raw-worker-1' });
  assert.deepEqual(await c.call('BEAT {"wid":"raw-worker-1"}'), OK);
  assert.equal((await server.setWorkerState('raw-worker-1', 'quiet')).status, 200);
  assert.deepEqual(await c.call('BEAT {"wid":"raw-worker-1"}'), { type: '$', text: '{"state":"quiet"}' });
  assert.equal((await server.setWorkerState('raw-worker-1', 'terminate')).status, 200);
  assert.deepEqual(await c.call('BEAT {"wid":"raw-worker-1"}'), { type: '$', text: '{"state":"terminate"}' });
});

test('PUSHB returns {} when every job is taken and {jid: error} for the rejected ones; a held jid is no error', async (t) => {
  const server = await startServer(t, { store: 'memory' });
  const c = await open(t, server);
  const good = (jid) => ({ jid, jobtype: 'Noop', args: [] });
  assert.deepEqual(await c.call(`PUSHB ${JSON.stringify([good('bulk-0001'), good('bulk-0002')])}`), { type: '$', text: '{}' });
  const r = await c.call(`PUSHB ${JSON.stringify([good('bulk-0003'), good('bulk-0001'), { jid: 'bulk-0004', args: [] }])}`);
  assert.equal(r.type, '$');
  assert.deepEqual(JSON.parse(r.text), {
    'bulk-0004': 'jobs must have a jobtype parameter',
  }, 'bulk-0001 is held already: taken as a success, nothing changes');
  const info = JSON.parse((await c.call('INFO')).text);
  assert.equal(info.faktory.queues.default, 3);
});
