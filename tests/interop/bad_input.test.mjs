// Malformed input over a raw socket: every bad line gets its exact error reply from
// docs/protocol.md, the connection stays usable where the contract says so, and the server keeps
// serving after line-limit, line-timeout and handshake-timeout closes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { RawConn } from './lib/fwp.mjs';
import { startServer, waitFor } from './lib/server.mjs';

const job = (fields) => JSON.stringify({ jid: 'goodjid-0001', jobtype: 'Noop', args: [], ...fields });

// [name, line, expected reply text (string: exact; RegExp: pattern for parser-dependent text)]
const BAD_LINES = [
  ['unknown command', 'FROB x', 'ERR unknown command FROB'],
  ['lower-case verb is unknown', 'info', 'ERR unknown command info'],
  ['PUSH with invalid JSON', 'PUSH {"jid":', /^ERR invalid JSON: .+/],
  ['PUSH of an array', 'PUSH [1,2]', 'ERR job must be a JSON object'],
  ['PUSH of a string', 'PUSH "job"', 'ERR job must be a JSON object'],
  ['missing jid', `PUSH ${JSON.stringify({ jobtype: 'Noop', args: [] })}`, 'ERR jobs must have a reasonable jid parameter'],
  ['short jid', `PUSH ${job({ jid: '1234567' })}`, 'ERR jobs must have a reasonable jid parameter'],
  ['missing jobtype', `PUSH ${JSON.stringify({ jid: 'goodjid-0001', args: [] })}`, 'ERR jobs must have a jobtype parameter'],
  ['empty jobtype', `PUSH ${job({ jobtype: '' })}`, 'ERR jobs must have a jobtype parameter'],
  ['null args', `PUSH ${job({ args: null })}`, 'ERR jobs must have an args parameter'],
  ['missing args', `PUSH ${JSON.stringify({ jid: 'goodjid-0001', jobtype: 'Noop' })}`, 'ERR jobs must have an args parameter'],
  ['reserve_for over a day', `PUSH ${job({ reserve_for: 86401 })}`, 'ERR jobs cannot be reserved for more than one day'],
  ['bad queue name', `PUSH ${job({ queue: 'no spaces!' })}`, 'ERR queue names must match \\A[a-zA-Z0-9._-]+\\z'],
  ['bad at', `PUSH ${job({ at: 'tomorrow' })}`, /^ERR invalid timestamp for 'at': "tomorrow": .+/],
  ['PUSHB of an object', 'PUSHB {"jid":"x"}', 'ERR PUSHB needs a JSON array of jobs'],
  ['FETCH with no queue', 'FETCH', 'ERR must call fetch with at least one queue'],
  ['ACK without jid', 'ACK {}', 'ERR invalid ACK {}: ACK needs a JSON object with a jid string'],
  ['ACK of an array', 'ACK ["x"]', 'ERR invalid ACK ["x"]: ACK needs a JSON object with a jid string'],
  ['ACK with a number jid', 'ACK {"jid":7}', 'ERR invalid ACK {"jid":7}: ACK needs a JSON object with a jid string'],
  ['FAIL without jid', 'FAIL {"errtype":"E"}', 'ERR missing JID'],
  ['FAIL of a string', 'FAIL "x"', 'ERR invalid FAIL "x": FAIL needs a JSON object'],
  ['FAIL of an unknown jid', 'FAIL {"jid":"nosuchjid-42","errtype":"E","message":"m","backtrace":[]}', 'ERR Job not found nosuchjid-42'],
  ['BEAT without wid', 'BEAT {}', 'ERR BEAT needs a wid'],
  ['BEAT of an unknown worker', 'BEAT {"wid":"nobody-123"}', 'ERR unknown worker nobody-123'],
  ['MUTATE with unknown cmd', 'MUTATE {"cmd":"explode","target":"retries","filter":{}}',
    'ERR unknown mutate operation: explode (clear, kill, discard or requeue)'],
  ['MUTATE with unknown target', 'MUTATE {"cmd":"clear","target":"everything","filter":{}}',
    'ERR invalid target for mutation command: everything (scheduled, retries or dead)'],
  ['QUEUE without subcommand', 'QUEUE', 'ERR QUEUE needs a subcommand: PAUSE, RESUME, REMOVE or LATENCY'],
  ['QUEUE with an unknown subcommand', 'QUEUE unpause *', 'ERR no such QUEUE subcommand: UNPAUSE (PAUSE, RESUME, REMOVE or LATENCY)'],
  ['QUEUE LATENCY of every queue', 'QUEUE LATENCY *', 'ERR QUEUE LATENCY does not support wildcards'],
  ['BATCH NEW without a callback', 'BATCH NEW {}', 'ERR BATCH NEW needs a success or complete callback job (neither was given)'],
  ['BATCH COMMIT of an unknown bid', 'BATCH COMMIT b-nosuchbatch0001', 'ERR No such batch b-nosuchbatch0001'],
  ['TRACK SET without a jid', 'TRACK SET {"percent":5}', 'ERR TRACK SET needs a jid'],
  ['TRACK SET with a percent over 100', 'TRACK SET {"jid":"abc","percent":101}', 'ERR TRACK SET: percent must be an integer from 0 to 100'],
];

function assertReply(reply, expected, what) {
  assert.equal(reply.type, '-', `${what}: expected an error reply, got ${JSON.stringify(reply)}`);
  if (expected instanceof RegExp) assert.match(reply.text, expected, what);
  else assert.equal(reply.text, expected, what);
}

describe('bad input on an identified connection', () => {
  test('each malformed line gets its documented error, and the connection keeps working', async (t) => {
    const server = await startServer(t);
    const c = await RawConn.open(server.port);
    t.after(() => c.destroy());
    assert.equal(c.greetingText, 'HI {"v":2}');
    await c.hello();

    for (const [name, line, expected] of BAD_LINES) {
      assertReply(await c.call(line), expected, name);
    }

    // PUSH is idempotent: a jid the server holds is +OK and changes nothing (the one deliberate
    // difference from Faktory, which queues a second copy).
    assert.deepEqual(await c.call(`PUSH ${job({ jid: 'dupjid-0001', queue: 'dup' })}`), { type: '+', text: 'OK' });
    assert.deepEqual(await c.call(`PUSH ${job({ jid: 'dupjid-0001', queue: 'dup', args: [2] })}`), { type: '+', text: 'OK' });
    const dup = await c.call('FETCH dup');
    assert.equal(dup.type, '$');
    assert.deepEqual(JSON.parse(dup.text).args, [], 'the first copy, unchanged');
    assert.deepEqual(await c.call('FETCH dup'), { type: 'null', text: null }, 'no second copy');

    // Still a working connection: a valid PUSH, FETCH, ACK; a bare LF ends a line too.
    assert.deepEqual(await c.call(`PUSH ${job({ queue: 'after-bad' })}`), { type: '+', text: 'OK' });
    const fetched = await c.call('FETCH after-bad');
    assert.equal(fetched.type, '$', `FETCH after the bad lines: ${JSON.stringify(fetched)}`);
    assert.equal(JSON.parse(fetched.text).jid, 'goodjid-0001');
    assert.deepEqual(await c.call('ACK {"jid":"goodjid-0001"}'), { type: '+', text: 'OK' });
    c.write('INFO\n');
    const info = await c.reply();
    assert.equal(info.type, '$');
    assert.ok(JSON.parse(info.text).faktory, 'INFO has a faktory section');
    // ACK of an unknown jid is +OK, as Faktory.
    assert.deepEqual(await c.call('ACK {"jid":"never-pushed-1"}'), { type: '+', text: 'OK' });
    // END: no reply, the server closes.
    c.write('END\r\n');
    await c.closed(5000);
    assert.equal(c.buf.length, 0, `END got a reply: ${c.buf.toString()}`);
  });

  test('pipelined bad and good lines are answered in order', async (t) => {
    const server = await startServer(t, { store: 'memory' });
    const c = await RawConn.open(server.port);
    t.after(() => c.destroy());
    await c.hello();
    c.write(['FROB', `PUSH ${job({ jid: 'pipejid-001' })}`, 'FETCH', 'FETCH default', 'PUSH [', 'FLUSH']
      .map((l) => `${l}\r\n`).join(''));
    assertReply(await c.reply(), 'ERR unknown command FROB', 'FROB');
    assert.deepEqual(await c.reply(), { type: '+', text: 'OK' });
    assertReply(await c.reply(), 'ERR must call fetch with at least one queue', 'bare FETCH');
    const f = await c.reply();
    assert.equal(f.type, '$');
    assert.equal(JSON.parse(f.text).jid, 'pipejid-001');
    assertReply(await c.reply(), /^ERR invalid JSON: .+/, 'PUSH [');
    assert.deepEqual(await c.reply(), { type: '+', text: 'OK' });
  });
});

describe('the PUSHB bound', () => {
  test('a PUSHB of more than max_pushb_jobs jobs is refused whole, naming the bound', async (t) => {
    const config = 'max_pushb_jobs = 3\nfetch_block_ms = 0\n';
    const server = await startServer(t, { config, store: 'memory' });
    const c = await RawConn.open(server.port);
    t.after(() => c.destroy());
    await c.hello();
    const jobs = (n) => Array.from({ length: n }, (_, i) => JSON.parse(job({ jid: `boundjid-${i}` })));
    assertReply(await c.call(`PUSHB ${JSON.stringify(jobs(4))}`),
      'ERR PUSHB holds more than 3 jobs (max_pushb_jobs)', 'four jobs');
    // Nothing of it was pushed, and three are taken on the same connection.
    assert.deepEqual(await c.call('FETCH default'), { type: 'null', text: null });
    assert.deepEqual(await c.call(`PUSHB ${JSON.stringify(jobs(3))}`), { type: '$', text: '{}' });
    const f = await c.call('FETCH default');
    assert.equal(JSON.parse(f.text).jid, 'boundjid-0');
  });
});

describe('connection limits', () => {
  const config = 'max_line_bytes = 1024\nline_timeout_seconds = 1\n';

  test('a line over max_line_bytes gets the limit error and a close', async (t) => {
    const server = await startServer(t, { config, store: 'memory' });
    const c = await RawConn.open(server.port);
    t.after(() => c.destroy());
    await c.hello();
    const huge = `PUSH ${job({ args: ['x'.repeat(3000)] })}`;
    assert.ok(huge.length > 1024);
    assertReply(await c.call(huge), 'ERR line too long: limit is 1024 bytes', 'long line');
    await c.closed(5000);

    // A line just under the limit is fine on a new connection.
    const ok = await RawConn.open(server.port);
    t.after(() => ok.destroy());
    await ok.hello();
    const small = `PUSH ${job({ args: ['y'.repeat(900)] })}`;
    assert.ok(small.length < 1024);
    assert.deepEqual(await ok.call(small), { type: '+', text: 'OK' });
  });

  test('a half line that stalls gets the line timeout error and a close', async (t) => {
    const server = await startServer(t, { config, store: 'memory' });
    const c = await RawConn.open(server.port);
    t.after(() => c.destroy());
    await c.hello();
    const start = Date.now();
    c.write('PUSH {"jid":"stall');
    const r = await c.reply(8000);
    const elapsed = Date.now() - start;
    assertReply(r, 'ERR timed out waiting for the end of the command line', 'stalled line');
    assert.ok(elapsed >= 900, `timed out after ${elapsed} ms, configured 1 s`);
    await c.closed(5000);
  });

  test('an idle connection between commands is not timed out', async (t) => {
    const server = await startServer(t, { config, store: 'memory' });
    const c = await RawConn.open(server.port);
    t.after(() => c.destroy());
    await c.hello();
    // A FETCH on an empty queue keeps the connection idle (no partial line) for ~2 s, twice the
    // line timeout; the connection must still answer afterwards.
    assert.deepEqual(await c.call('FETCH idle-queue'), { type: 'null', text: null });
    assert.deepEqual(await c.call('FLUSH'), { type: '+', text: 'OK' });
  });

  test('a connection that never sends HELLO is closed after ~2 s with the handshake error', async (t) => {
    const server = await startServer(t, { store: 'memory' });
    const c = await RawConn.open(server.port);
    t.after(() => c.destroy());
    const start = Date.now();
    const r = await c.reply(8000);
    assertReply(r, 'ERR handshake timeout: HELLO not received within 2 s', 'no HELLO');
    await c.closed(5000);
    const elapsed = Date.now() - start;
    assert.ok(elapsed >= 1500 && elapsed <= 6000, `closed after ${elapsed} ms, contract says 2 s`);
  });

  test('a first line that is not HELLO is closed without a reply', async (t) => {
    const server = await startServer(t, { store: 'memory' });
    const c = await RawConn.open(server.port);
    t.after(() => c.destroy());
    c.write('INFO\r\n');
    await c.closed(5000);
    assert.equal(c.buf.length, 0, `unexpected bytes before the close: ${c.buf.toString()}`);
  });

  test('a wrong password gets "Invalid password" and a close', async (t) => {
    const server = await startServer(t, { store: 'memory', password: 'secret' });
    const c = await RawConn.open(server.port);
    t.after(() => c.destroy());
    assert.equal(c.greeting.v, 2);
    assert.doesNotMatch(c.greetingText.slice(3), / /, 'no spaces in the HI JSON');
    assert.match(c.greeting.s, /^[0-9a-f]+$/);
    assert.ok(c.greeting.i >= 4000 && c.greeting.i <= 8095, `iterations ${c.greeting.i}`);
    const r = await c.call('HELLO {"v":2,"hostname":"h","pwdhash":"00"}');
    assertReply(r, 'ERR Invalid password', 'wrong password');
    await c.closed(5000);
    // The right password on another connection works.
    const ok = await RawConn.open(server.port);
    t.after(() => ok.destroy());
    await ok.hello({ password: 'secret' });
  });

  test('past max_connections the HELLO gets "too many connections" and a close', async (t) => {
    const server = await startServer(t, { config: 'max_connections = 2\n', store: 'memory' });
    const held = [];
    t.after(() => held.forEach((c) => c.destroy()));
    for (let i = 0; i < 2; i += 1) {
      held.push(await RawConn.open(server.port));
      await held[i].hello();
    }
    const extra = await RawConn.open(server.port);
    held.push(extra);
    assert.equal(extra.greetingText, 'HI {"v":2}', 'the greeting is sent as usual');
    const r = await extra.call('HELLO {"v":2,"hostname":"h"}');
    assertReply(r, 'ERR too many connections: limit is 2', 'third connection');
    await extra.closed(5000);
    // Closing one of the two frees a slot.
    held[0].destroy();
    const again = await waitFor(async () => {
      const c = await RawConn.open(server.port);
      held.push(c);
      const reply = await c.call('HELLO {"v":2,"hostname":"h"}');
      return reply.type === '+' && reply.text === 'OK';
    }, { timeout: 5000, message: 'a slot to free up after a close' });
    assert.ok(again);
  });

  test('the server still serves after all of the above', async (t) => {
    const server = await startServer(t, { config, store: 'memory' });
    const victims = [];
    // One of each: a long line, a stalled line, a silent connection, garbage before HELLO.
    for (let i = 0; i < 4; i += 1) victims.push(await RawConn.open(server.port));
    t.after(() => victims.forEach((v) => v.destroy()));
    await victims[0].hello();
    victims[0].write(`PUSH ${'z'.repeat(5000)}\r\n`);
    await victims[1].hello();
    victims[1].write('PUSH {');
    victims[3].write('\x00\x01\x02garbage\r\n');
    await Promise.all(victims.map((v) => v.closed(8000)));

    const c = await RawConn.open(server.port);
    t.after(() => c.destroy());
    await c.hello();
    assert.deepEqual(await c.call(`PUSH ${job({ jid: 'survivor-01' })}`), { type: '+', text: 'OK' });
    const f = await c.call('FETCH default');
    assert.equal(JSON.parse(f.text).jid, 'survivor-01');
    const health = await fetch(`${server.httpBase}/healthz`);
    assert.equal(health.status, 200);
    assert.equal((await health.text()).trim(), 'ok');
  });
});
