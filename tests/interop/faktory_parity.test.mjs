// Differences from Faktory that broke clients: what Faktory 1.10 does and bulkhead now does the
// same, over a raw socket against a real server; and the one deliberate difference, idempotent PUSH.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { RawConn } from './lib/fwp.mjs';
import { startServer } from './lib/server.mjs';

const OK = { type: '+', text: 'OK' };
const NULL = { type: 'null', text: null };
const job = (fields) => JSON.stringify({ jobtype: 'Noop', args: [], ...fields });

async function open(t, server, hello = {}) {
  const c = await RawConn.open(server.port);
  t.after(() => c.destroy());
  await c.hello(hello);
  return c;
}

async function info(c) {
  const r = await c.call('INFO');
  assert.equal(r.type, '$');
  return JSON.parse(r.text).faktory;
}

async function metric(server, name) {
  const text = await (await fetch(`${server.httpBase}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  assert.ok(line, `${name} in /metrics`);
  return Number(line.split(' ')[1]);
}

test('FETCH skips names that cannot be queues; with only such names it waits, then null', async (t) => {
  const server = await startServer(t, { store: 'memory' });
  const c = await open(t, server);
  assert.deepEqual(await c.call(`PUSH ${job({ jid: 'parity-fetch-1' })}`), OK);
  const r = await c.call('FETCH bad:name default');
  assert.equal(r.type, '$');
  assert.equal(JSON.parse(r.text).jid, 'parity-fetch-1');
  const start = Date.now();
  assert.deepEqual(await c.call('FETCH bad:name also/bad'), NULL);
  const waited = Date.now() - start;
  assert.ok(waited >= 1500 && waited < 4000, `waited ${waited} ms (Faktory: 2 s)`);
});

test('QUEUE subcommands are case-insensitive; LATENCY refuses *', async (t) => {
  const server = await startServer(t, { store: 'memory' });
  const c = await open(t, server);
  assert.deepEqual(await c.call(`PUSH ${job({ jid: 'parity-queue-1', queue: 'mixed' })}`), OK);
  assert.deepEqual(await c.call('QUEUE pause mixed'), OK);
  assert.deepEqual(await c.call('FETCH mixed', 5000), NULL);
  assert.deepEqual(await c.call('QUEUE Resume mixed'), OK);
  const lat = await c.call('QUEUE latency mixed foo');
  assert.equal(lat.type, '$');
  const seconds = JSON.parse(lat.text);
  assert.ok(seconds.mixed > 0, lat.text);
  assert.equal(seconds.foo, 0);
  assert.deepEqual(await c.call('QUEUE LATENCY *'), { type: '-', text: 'ERR QUEUE LATENCY does not support wildcards' });
  assert.deepEqual(await c.call('QUEUE remove mixed'), OK);
  assert.deepEqual(await c.call('FETCH mixed', 5000), NULL);
});

test('a job pushed without retry comes back with the default filled in; "at":"" is dropped', async (t) => {
  const server = await startServer(t, { store: 'memory', config: '[jobtypes.Slow]\nretry = 3\n' });
  const c = await open(t, server);
  assert.deepEqual(await c.call(`PUSH ${job({ jid: 'parity-retry-1', at: '' })}`), OK);
  assert.deepEqual(await c.call(`PUSH ${job({ jid: 'parity-retry-2', retry: null, jobtype: 'Slow' })}`), OK);
  assert.deepEqual(await c.call(`PUSH ${job({ jid: 'parity-retry-3', retry: 0 })}`), OK);
  const fetched = [];
  for (let i = 0; i < 3; i += 1) fetched.push(JSON.parse((await c.call('FETCH default')).text));
  assert.equal(fetched[0].retry, 25, 'the configured default (25)');
  assert.ok(!('at' in fetched[0]), `"at":"" is not echoed: ${JSON.stringify(fetched[0])}`);
  assert.equal(fetched[1].retry, 3, 'the jobtype default from [jobtypes.Slow]');
  assert.equal(fetched[2].retry, 0, 'a given retry is kept');
});

test('FAIL trims the whitespace around errtype and message', async (t) => {
  const server = await startServer(t, { store: 'memory' });
  const c = await open(t, server);
  assert.deepEqual(await c.call(`PUSH ${job({ jid: 'parity-fail-1' })}`), OK);
  assert.equal((await c.call('FETCH default')).type, '$');
  assert.deepEqual(await c.call('FAIL {"jid":"parity-fail-1","errtype":" Boom\\n","message":"\\t it broke \\r\\n","backtrace":[]}'), OK);
  assert.deepEqual(await c.call('MUTATE {"cmd":"requeue","target":"retries","filter":{"jids":["parity-fail-1"]}}'), OK);
  const again = JSON.parse((await c.call('FETCH default')).text);
  assert.equal(again.failure.errtype, 'Boom');
  assert.equal(again.failure.message, 'it broke');
});

test('INFO: Faktory task figures, and known queues listed with size 0 when empty, across a restart', async (t) => {
  const server = await startServer(t);  // sqlite store
  const c = await open(t, server);
  for (const [jid, queue] of [['parity-info-1', 'drained'], ['parity-info-2', 'busy']]) {
    assert.deepEqual(await c.call(`PUSH ${job({ jid, queue })}`), OK);
  }
  assert.equal((await c.call('FETCH drained')).type, '$');
  assert.deepEqual(await c.call('ACK {"jid":"parity-info-1"}'), OK);
  assert.equal((await c.call('FETCH busy')).type, '$');  // reserved, not acked
  assert.deepEqual(await c.call('QUEUE PAUSE held'), OK);
  let f = await info(c);
  assert.deepEqual(f.queues, { drained: 0, busy: 0, held: 0 });
  assert.equal(f.total_queues, 3);
  assert.equal(f.tasks.Busy.size, 1, 'one reservation');
  assert.equal(typeof f.tasks.Retries.size, 'number');
  await server.restart();
  const d = await open(t, server);
  f = await info(d);
  // Durable: what the store holds (a job of "busy", the pause flag of "held"). A queue drained
  // to nothing before the restart ("drained") is not (Faktory keeps it; see docs/protocol.md).
  assert.deepEqual(f.queues, { busy: 0, held: 0 });
});

test('PUSH of a jid the server holds: +OK, nothing changes, counted in bulkhead_push_duplicates_total', async (t) => {
  const server = await startServer(t);
  const c = await open(t, server);
  assert.equal(await metric(server, 'bulkhead_push_duplicates_total'), 0);
  assert.deepEqual(await c.call(`PUSH ${job({ jid: 'parity-dup-1', args: [1] })}`), OK);
  assert.deepEqual(await c.call(`PUSH ${job({ jid: 'parity-dup-1', args: [2] })}`), OK);
  const pushb = await c.call(`PUSHB [${job({ jid: 'parity-dup-1', args: [3] })},${job({ jid: 'parity-dup-2' })}]`);
  assert.deepEqual(pushb, { type: '$', text: '{}' });
  assert.equal((await info(c)).queues.default, 2);
  const first = JSON.parse((await c.call('FETCH default')).text);
  assert.equal(first.jid, 'parity-dup-1');
  assert.deepEqual(first.args, [1]);
  // Reserved now: still held, still +OK, still no copy.
  assert.deepEqual(await c.call(`PUSH ${job({ jid: 'parity-dup-1', args: [4] })}`), OK);
  assert.equal(JSON.parse((await c.call('FETCH default')).text).jid, 'parity-dup-2');
  assert.deepEqual(await c.call('FETCH default', 5000), NULL);
  assert.equal(await metric(server, 'bulkhead_push_duplicates_total'), 3);
});
