// Hostile input from the network: each finding replayed against a real server as a
// transcript. After each bad input the server must still answer /healthz and a fresh client's
// PUSH/FETCH/ACK within 5 s; each bound that is a setting is crossed by a test.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { describe, test } from 'node:test';

import { RawConn, pwdhash } from './lib/fwp.mjs';
import { startServer, waitFor, BulkheadServer } from './lib/server.mjs';

let jidCounter = 0;
const newJid = (prefix = 'hardjid') => `${prefix}-${process.pid}-${(jidCounter += 1)}`;

// The server is alive: /healthz 200 and a fresh client's PUSH, FETCH, ACK, all within 5 s.
async function assertServing(server, { password } = {}) {
  const deadline = AbortSignal.timeout(5000);
  const health = await fetch(`${server.httpBase}/healthz`, { signal: deadline });
  assert.equal(health.status, 200, `/healthz: ${health.status} ${await health.text()}`);
  const c = await RawConn.open(server.port);
  try {
    await c.hello({ password });
    const jid = newJid('alive');
    const job = JSON.stringify({ jid, jobtype: 'Alive', args: [], queue: 'alive' });
    assert.deepEqual(await c.call(`PUSH ${job}`, 5000), { type: '+', text: 'OK' });
    const f = await c.call('FETCH alive', 5000);
    assert.equal(f.type, '$', `FETCH: ${JSON.stringify(f)}`);
    assert.equal(JSON.parse(f.text).jid, jid);
    assert.deepEqual(await c.call(`ACK {"jid":"${jid}"}`, 5000), { type: '+', text: 'OK' });
  } finally {
    c.destroy();
  }
  assert.ok(server.running, `the server exited; stderr:\n${server.stderr}`);
}

// Sends raw bytes on a new HTTP connection and reads until the server closes or a whole response
// (by Content-Length) arrived. Returns { status, headers, body }.
function rawHttp(port, bytes, { timeout = 5000 } = {}) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ port, host: '127.0.0.1' });
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no HTTP response within ${timeout} ms (got ${JSON.stringify(buf.toString())})`));
    }, timeout);
    const finish = () => {
      const text = buf.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return false;
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      const headers = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      const len = Number(headers['content-length'] ?? -1);
      const body = buf.subarray(end + 4);
      if (len >= 0 && body.length < len) return false;
      clearTimeout(timer);
      sock.destroy();
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: body.toString('utf8') });
      return true;
    };
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      finish();
    });
    sock.on('end', () => {
      if (!finish()) {
        clearTimeout(timer);
        reject(new Error(`connection closed before a whole response: ${JSON.stringify(buf.toString())}`));
      }
    });
    sock.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    sock.write(bytes);
  });
}

function rsaPem() {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return privateKey.export({ type: 'pkcs8', format: 'pem' });
}

function metricValue(text, name, labels = '') {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `) || (labels === '' && l.startsWith(`${name} `)));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

async function metrics(server) {
  const res = await fetch(`${server.httpBase}/metrics`);
  assert.equal(res.status, 200);
  return res.text();
}

function rssKb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
}

describe('hostile JSON before and after login', () => {
  test('a number out of range in HELLO is an error and a close, not an abort', async (t) => {
    const server = await startServer(t, { store: 'memory' });
    const c = await RawConn.open(server.port);
    t.after(() => c.destroy());
    const r = await c.call('HELLO {"v":2,"x":1e400}');
    assert.equal(r.type, '-');
    assert.match(r.text, /^ERR invalid JSON: number overflow parsing '1e400'/);
    await c.closed(5000);
    await assertServing(server);
  });

  test('every command taking JSON answers an overflowing number with an error and keeps the connection', async (t) => {
    const server = await startServer(t, { store: 'memory' });
    const c = await RawConn.open(server.port);
    t.after(() => c.destroy());
    await c.hello({ wid: 'w-overflow' });
    for (const line of [
      'PUSH {"jid":"abcdefgh1","jobtype":"x","args":[1e400]}',
      'PUSHB [{"jid":"abcdefgh2","jobtype":"x","args":[-1e400]}]',
      'ACK {"jid":"abcdefgh3","n":1e400}',
      'FAIL {"jid":"abcdefgh4","message":1e400}',
      'BEAT {"wid":"w-overflow","rss_kb":1e400}',
      'MUTATE {"cmd":"clear","target":"dead","filter":{"n":1e999}}',
    ]) {
      const r = await c.call(line);
      assert.equal(r.type, '-', `${line}: ${JSON.stringify(r)}`);
      assert.match(r.text, /^ERR invalid JSON: number overflow parsing/, line);
    }
    assert.deepEqual(await c.call('FLUSH'), { type: '+', text: 'OK' }, 'the connection still works');
    await assertServing(server);
  });

  for (const [name, hello] of [['a string', '{"v":"2"}'], ['null', '{"v":null}'], ['an array', '{"v":[2]}']]) {
    test(`with a password, a HELLO whose v is ${name} is an error and a close`, async (t) => {
      const server = await startServer(t, { store: 'memory', password: 'secret' });
      const c = await RawConn.open(server.port);
      t.after(() => c.destroy());
      const r = await c.call(`HELLO ${hello}`);
      assert.deepEqual(r, { type: '-', text: 'ERR invalid HELLO: v must be an integer (the protocol version, 2)' });
      await c.closed(5000);
      await assertServing(server, { password: 'secret' });
    });
  }

  test('HELLO that is not JSON closes the connection (as Faktory)', async (t) => {
    const server = await startServer(t, { store: 'memory' });
    const c = await RawConn.open(server.port);
    t.after(() => c.destroy());
    const r = await c.call('HELLO {"v":2,');
    assert.equal(r.type, '-');
    assert.match(r.text, /^ERR invalid JSON: parse error/);
    await c.closed(5000);
  });

  test('args nested 75,000 deep are refused naming the limit; max_json_depth is a setting', async (t) => {
    const server = await startServer(t, { store: 'memory', config: 'max_json_depth = 10\n' });
    const c = await RawConn.open(server.port);
    t.after(() => c.destroy());
    await c.hello();
    const nested = (n) => JSON.stringify({ jid: newJid(), jobtype: 'Deep', args: [] }).replace('"args":[]', `"args":${'['.repeat(n)}${']'.repeat(n)}`);
    const deep = await c.call(`PUSH ${nested(75_000)}`);
    assert.deepEqual(deep, { type: '-', text: 'ERR invalid JSON: nested deeper than 10 levels (max_json_depth)' });
    // The job object is level 1, so args may nest 9 arrays.
    assert.deepEqual(await c.call(`PUSH ${nested(9)}`), { type: '+', text: 'OK' });
    assert.deepEqual(await c.call(`PUSH ${nested(10)}`), { type: '-', text: 'ERR invalid JSON: nested deeper than 10 levels (max_json_depth)' });
    const pushb = await c.call(`PUSHB [${nested(75_000)}]`);
    assert.equal(pushb.type, '-');
    assert.match(pushb.text, /nested deeper than 10 levels/);
    await assertServing(server);
  });
});

describe('hostile HTTP requests', () => {
  test('raw bytes >= 0x80 in a path answer JSON errors without a login, and the server serves on', async (t) => {
    const server = await startServer(t, { store: 'memory', password: 'secret' });
    const cases = [
      [Buffer.concat([Buffer.from('GET /'), Buffer.from([0xff]), Buffer.from(' HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')]), 404],
      [Buffer.concat([Buffer.from('POST /api/workers/'), Buffer.from([0xff]), Buffer.from('/quiet HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')]), 404],
      [Buffer.from('GET /api/keys/%FF HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\nConnection: close\r\n\r\n'), 404],
      [Buffer.from('GET /api/keys/%C3%28 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\nConnection: close\r\n\r\n'), 404],
      [Buffer.from('GET /api/keys/%FF HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), 401],
    ];
    for (const [bytes, status] of cases) {
      const res = await rawHttp(server.httpPort, bytes);
      const what = JSON.stringify(bytes.toString('latin1').split('\r\n')[0]);
      assert.equal(res.status, status, `${what}: ${res.status} ${res.body}`);
      if (status !== 401) assert.ok(JSON.parse(res.body).error, `${what}: a JSON error body`);
    }
    await assertServing(server, { password: 'secret' });
  });

  test('a key id that is not ASCII is refused at PUT, and listing keys keeps working', async (t) => {
    const server = await startServer(t);
    const pem = rsaPem();
    for (const id of ['%FF', '%C3%28', 'https%3A%2F%2Fexample.com%2F%C3%A9']) {
      const res = await fetch(`${server.httpBase}/api/keys/${id}`, { method: 'PUT', body: pem });
      const body = await res.json();
      assert.equal(res.status, 400, `PUT ${id}: ${JSON.stringify(body)}`);
      assert.match(body.error, /non-ASCII/);
    }
    const ok = await fetch(`${server.httpBase}/api/keys/${encodeURIComponent('https://example.com/users/a#main-key')}`, { method: 'PUT', body: pem });
    assert.equal(ok.status, 201);
    await server.restart();
    const list = await fetch(`${server.httpBase}/api/keys`);
    assert.equal(list.status, 200);
    assert.deepEqual((await list.json()).map((k) => k.key_id), ['https://example.com/users/a#main-key']);
    await assertServing(server);
  });
});

describe('bounded output per connection', () => {
  test('a client that sends INFO in a loop and never reads stops being read, not the server growing', async (t) => {
    const server = await startServer(t, { store: 'memory' });
    const c = await RawConn.open(server.port);
    t.after(() => c.destroy());
    await c.hello();
    c.sock.pause();  // never read
    const before = rssKb(server.proc.pid);
    const chunk = 'INFO\r\n'.repeat(10_000);
    // Up to 4,000,000 INFOs (GBs of replies), until the kernel's buffers are full and our writes
    // back up: the server must stop reading long before.
    for (let i = 0; i < 400 && c.sock.writableLength === 0; i += 1) {
      c.sock.write(chunk);
      await new Promise((r) => setImmediate(r));
    }
    await waitFor(() => c.sock.writableLength > 0, { timeout: 10_000, message: 'the server to stop reading (our writes to back up)' });
    // Give the server time to process what it already read; its memory must stay bounded.
    const stable = await waitFor(async () => {
      const a = c.sock.writableLength;
      await new Promise((r) => setTimeout(r, 300));
      return c.sock.writableLength === a ? a : 0;
    }, { timeout: 15_000, message: 'the backlog to stop moving' });
    assert.ok(stable > 0);
    const grown = rssKb(server.proc.pid) - before;
    assert.ok(grown < 64 * 1024, `server grew by ${grown} kB while the client did not read`);
    await assertServing(server);
  });

  test('a reply past max_unsent_reply_bytes closes the connection with a log line', async (t) => {
    const config = 'max_line_bytes = 1024\nunsent_replies_pause_bytes = 4096\nmax_unsent_reply_bytes = 8192\n';
    const server = await startServer(t, { store: 'memory', config });
    const c = await RawConn.open(server.port);
    t.after(() => c.destroy());
    await c.hello();
    // 300 queues make INFO larger than 8192 bytes: one reply crosses the cap.
    const jobs = Array.from({ length: 300 }, (_, i) => ({ jid: newJid(), jobtype: 'Q', args: [], queue: `queue-with-a-long-name-${i}` }));
    c.write(jobs.map((j) => `PUSH ${JSON.stringify(j)}\r\n`).join(''));
    for (let i = 0; i < jobs.length; i += 1) assert.deepEqual(await c.reply(), { type: '+', text: 'OK' });
    c.write('INFO\r\n');
    await c.closed(5000);
    await waitFor(() => /closed: \d+ bytes of replies unsent, past the limit of 8192/.test(server.stderr),
      { timeout: 5000, message: 'the log line naming the limit' });
    const m = await metrics(server);
    assert.equal(metricValue(m, 'bulkhead_connections_shed_total', '{listener="faktory",reason="unsent_replies"}'), 1);
    await assertServing(server);
  });
});

describe('password guessing', () => {
  test('repeated wrong passwords from one address are slowed down, counted and logged rate-limited', async (t) => {
    const server = await startServer(t, { store: 'memory', password: 'secret', config: 'login_failure_delay_ms = 400\n' });
    const attempt = async (password) => {
      const c = await RawConn.open(server.port);
      try {
        const hash = pwdhash(password, c.greeting.s, c.greeting.i);
        return await c.call(`HELLO {"v":2,"hostname":"h","pwdhash":"${hash}"}`);
      } finally {
        c.destroy();
      }
    };
    assert.deepEqual(await attempt('wrong1'), { type: '-', text: 'ERR Invalid password' });
    assert.deepEqual(await attempt('wrong2'), { type: '-', text: 'ERR Invalid password' }, 'the first failure costs nothing');
    const throttled = await attempt('secret');
    assert.equal(throttled.type, '-');
    assert.match(throttled.text, /^ERR Invalid password: too many failed logins from 127\.0\.0\.1, next attempt accepted in 0\.\d s$/);
    // 50 quick guesses: all refused unchecked, so none of them can be the right one.
    let refused = 0;
    for (let i = 0; i < 50; i += 1) {
      const r = await attempt(`guess${i}`);
      if (r.text.startsWith('ERR Invalid password: too many failed logins')) refused += 1;
    }
    assert.ok(refused >= 45, `only ${refused} of 50 rapid guesses were throttled`);
    // Once the delay has passed, the right password works and clears the address.
    const ok = await waitFor(async () => (await attempt('secret')).text === 'OK', { timeout: 5000, message: 'the throttle to let a check through' });
    assert.ok(ok);
    const m = await metrics(server);
    const failures = metricValue(m, 'bulkhead_login_failures_total');
    assert.ok(failures >= 2 && failures <= 7, `bulkhead_login_failures_total ${failures}`);
    assert.ok(metricValue(m, 'bulkhead_logins_throttled_total') >= 46);
    const logLines = server.stderr.split('\n').filter((l) => l.includes('wrong password from 127.0.0.1')).length;
    assert.ok(logLines >= 1 && logLines <= 2, `${logLines} log lines for the failures`);
    await assertServing(server, { password: 'secret' });
  });
});

describe('file descriptors', () => {
  const prefix = (n) => ['prlimit', `--nofile=${n}:${n}`, '--'];

  test('a configuration that does not fit the descriptor limit refuses to start, naming both', async (t) => {
    const server = new BulkheadServer({ store: 'memory', prefix: prefix(1024) });
    t.after(() => server.dispose());
    await assert.rejects(server.start(), (e) => {
      assert.match(e.message, /not enough file descriptors: max_connections \(2000\).* need 3408, but RLIMIT_NOFILE is 1024 \(hard limit 1024\)/);
      return true;
    });
  });

  test('out of descriptors: waiting clients get an error, the log stays quiet, the server recovers', async (t) => {
    const server = await startServer(t, { store: 'memory' });
    // The start-up check keeps every configured cap inside the limit, so lower the limit of the
    // running process under it: what an fd leak or a tighter ulimit elsewhere would do.
    execFileSync('prlimit', ['--pid', String(server.proc.pid), '--nofile=128:128']);
    const flood = [];
    t.after(() => flood.forEach((s) => s.destroy()));
    // 400 connections against 128 descriptors, none of them sending anything.
    for (let i = 0; i < 400; i += 1) {
      const s = net.connect({ port: server.port, host: '127.0.0.1' });
      s.on('error', () => {});
      s.data = '';
      s.on('data', (d) => { s.data += d.toString(); });
      flood.push(s);
    }
    const answered = await waitFor(() => {
      const refused = flood.filter((s) => s.data.includes('-ERR server out of file descriptors')).length;
      return refused > 0 ? refused : 0;
    }, { timeout: 10_000, message: 'a connection refused for lack of descriptors' });
    assert.ok(answered > 0);
    // Every connection got an answer: the greeting or a refusal (none is left in the backlog).
    await waitFor(() => flood.every((s) => s.data.length > 0), { timeout: 10_000, message: 'every flooded connection to be answered' });
    const lines = server.stderr.split('\n').filter((l) => l.includes('accept failed')).length;
    assert.ok(lines >= 1 && lines <= 3, `${lines} accept-failure log lines (rate-limited: expected a few)`);
    flood.forEach((s) => s.destroy());
    await waitFor(async () => {
      try {
        await assertServing(server);
        return true;
      } catch {
        return false;
      }
    }, { timeout: 10_000, message: 'the server to serve again after the flood' });
    const m = await metrics(server);
    assert.ok(metricValue(m, 'bulkhead_connections_shed_total', '{listener="faktory",reason="fd_limit"}') >= 1);
  });

  test('HTTP: at http_max_connections the longest-waiting connection makes room', async (t) => {
    const server = await startServer(t, { store: 'memory', config: 'http_max_connections = 4\n' });
    const idle = [];
    t.after(() => idle.forEach((s) => s.destroy()));
    for (let i = 0; i < 4; i += 1) {
      const s = net.connect({ port: server.httpPort, host: '127.0.0.1' });
      s.on('error', () => {});
      await new Promise((r) => s.once('connect', r));
      idle.push(s);
    }
    // The four are held open by the server, sending nothing; a fifth request is still served.
    const res = await fetch(`${server.httpBase}/healthz`);
    assert.equal(res.status, 200);
    await waitFor(() => idle[0].destroyed || idle[0].readableEnded, { timeout: 5000, message: 'the oldest idle connection to be closed' });
    const m = await metrics(server);
    assert.ok(metricValue(m, 'bulkhead_connections_shed_total', '{listener="http",reason="evicted"}') >= 1);
  });
});
