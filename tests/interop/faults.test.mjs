// Delivery faults end to end, through the whole server: bulkhead delivers `webhook` (and a few
// `webpush`) jobs to local Node peers that misbehave, one peer per fault on its own port (the
// compartment key is host:port, so each peer is its own host), while a healthy peer receives a
// steady stream of 10 jobs/s the whole time.
//
// Deadlines are the real defaults (connect 5 s, first byte 10 s, total 30 s; breaker opens after
// 5 consecutive failures for 30 s), all faults run at once, so the fault test takes 30–40 s. The
// only setting changed is a low-speed cut for webpush ([delivery.webpush] 1 byte/s over 10 s), so
// that the same dripping host shows both ends of a drip: webhook attempts cut by the total
// deadline, webpush attempts by the low-speed cut (per-kind deadlines).
//
// Peers and what each must produce:
//   silent    accepts, reads, never answers   → first-byte timeout at 10 s; the breaker opens after
//                                               5 failures and the rest of its jobs wait parked
//   late      answers after 40 s              → first-byte timeout at 10 s (the answer never comes)
//   drip      headers, then 1 byte per 5 s    → webhook: total deadline at 30 s;
//                                               webpush: low-speed cut (10 s after libcurl's
//                                               5–6 s speed window, so about 16 s)
//   refused   a closed port                   → connect error at once; breaker opens; rest parked
//   reset     RST after reading the request   → network error at once; breaker opens; rest parked
//   storm     500 until its breaker opens,    → server error; breaker opens; no attempt while
//             then 200                          open; the probe 30–36 s later closes it and the
//                                               parked jobs are delivered
//   limited   429 Retry-After: 8, then 200    → the host gets no attempt before Retry-After
//   tls-hang  accepts TCP, never speaks TLS   → connect timeout at 5 s
// Every failed attempt leaves its job in the retry set (checked as INFO retries = the hosts'
// failures + overloaded answers, before any backoff is due), parked jobs spend no retry, and the
// error kind shows per host in bulkhead_deliveries_total{outcome}. Times are taken at the peers
// (connection accepted → closed by bulkhead), with SLACK_MS of slack for a loaded 2-core machine.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';

import faktory from 'faktory-worker';

import { closedPort, startFaultServer } from './lib/fault_servers.mjs';
import { RawConn } from './lib/fwp.mjs';
import { cleanupStack, startServer, waitFor } from './lib/server.mjs';

const CONNECT_MS = 5_000;
const FIRST_BYTE_MS = 10_000;
const TOTAL_MS = 30_000;
const LOW_SPEED_S = 10;
const CURL_SPEED_WINDOW_MS = 6_000;
const BREAKER_THRESHOLD = 5;
const BREAKER_OPEN_MS = 30_000;
const RETRY_AFTER_S = 8;
const MIN_BACKOFF_MS = 15_000;  // count^4 + 15 + rand(30)·(count+1) s at the first failure
const EARLY_MS = 250;           // timers never fire early; the peer sees the connection a bit late
const SLACK_MS = 3_000;
const HEALTHY_EVERY_MS = 100;   // 10 jobs/s
const HEALTHY_P99_MS = 1_000;

const CONFIG = `allow_private_targets = true
[delivery.webpush]
low_speed_bytes_per_second = 1
low_speed_seconds = ${LOW_SPEED_S}
`;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// jids are at least 8 characters (Faktory's rule).
function webhookJob(jid, url) {
  return { jid, jobtype: 'webhook', queue: 'default', args: [{ url, body: `payload of ${jid}` }] };
}

// A webpush job to `endpoint` with a fresh client key pair (bulkhead encrypts to it).
function webpushJob(jid, endpoint) {
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  return {
    jid,
    jobtype: 'webpush',
    queue: 'push',
    args: [{
      subscription: {
        endpoint,
        keys: { p256dh: ecdh.getPublicKey().toString('base64url'),
          auth: crypto.randomBytes(16).toString('base64url') },
      },
      payload: 'hello',
      ttl: 3600,
    }],
  };
}

async function push(conn, job) {
  const r = await conn.call(`PUSH ${JSON.stringify(job)}`);
  assert.deepEqual(r, { type: '+', text: 'OK' }, `PUSH ${job.jid}`);
}

async function info(conn) {
  const r = await conn.call('INFO');
  assert.equal(r.type, '$', `INFO: ${JSON.stringify(r)}`);
  return JSON.parse(r.text);
}

// host → its /api/hosts entry.
async function hosts(server) {
  const res = await fetch(`${server.httpBase}/api/hosts`);
  assert.equal(res.status, 200);
  return new Map((await res.json()).map((h) => [h.host, h]));
}

// host → { outcome → bulkhead_deliveries_total }.
async function deliveries(server) {
  const res = await fetch(`${server.httpBase}/metrics`);
  assert.equal(res.status, 200);
  const out = new Map();
  for (const line of (await res.text()).split('\n')) {
    const m = line.match(/^bulkhead_deliveries_total\{host="([^"]*)",outcome="([^"]*)"\} (\S+)$/);
    if (!m) continue;
    if (!out.has(m[1])) out.set(m[1], {});
    out.get(m[1])[m[2]] = Number(m[3]);
  }
  return out;
}

const hostOf = (peer) => `127.0.0.1:${peer.port}`;
const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;

// Every connection in `conns` was ended by bulkhead between `min` and `max` ms after it opened.
// Returns the durations, for the report.
function assertDurations(conns, min, max, what) {
  const durations = [];
  for (const c of conns) {
    assert.ok(c.closedAt !== null, `${what}: a connection is still open`);
    const d = c.closedAt - c.openedAt;
    assert.ok(d >= min - EARLY_MS && d <= max,
      `${what}: attempt ${c.path ?? ''} lasted ${seconds(d)}, expected ${seconds(min)}..${seconds(max)}`);
    durations.push(seconds(d));
  }
  return `${what}: ${conns.length} attempts ended after ${durations.join(', ')}`;
}

test('each fault ends as specified within its deadline while a healthy host stays on time', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer, { config: CONFIG });
  const conn = await RawConn.open(server.port);
  defer(() => conn.destroy());
  await conn.hello();
  const streamConn = await RawConn.open(server.port);
  defer(() => streamConn.destroy());
  await streamConn.hello();

  const healthy = await startFaultServer(defer, 'respond');
  const silent = await startFaultServer(defer, 'silent');
  const late = await startFaultServer(defer, 'late', { answerAfterMs: 40_000 });
  const drip = await startFaultServer(defer, 'drip', { dripEveryMs: 5_000 });
  const reset = await startFaultServer(defer, 'reset');
  const tlsHang = await startFaultServer(defer, 'tls-hang');
  // 500 until its breaker has opened, then healthy again: the half-open probe finds it recovered.
  let stormHealed = false;
  const storm = await startFaultServer(defer, 'respond', {
    respond: () => (stormHealed ? { status: 200 } : { status: 500, body: 'storm' }),
  });
  const limited = await startFaultServer(defer, 'respond', {
    respond: (_, i) => (i === 0
      ? { status: 429, headers: { 'Retry-After': String(RETRY_AFTER_S) }, body: 'slow down' }
      : { status: 200 }),
  });
  const refused = { port: await closedPort() };
  const refusedUrl = (p) => `http://127.0.0.1:${refused.port}${p}`;

  // The healthy stream: one job every 100 ms until told to stop; push time by jid.
  const pushedAt = new Map();
  let streaming = true;
  const stream = (async () => {
    const start = performance.now();
    const replies = [];
    for (let i = 0; streaming; i += 1) {
      const wait = start + i * HEALTHY_EVERY_MS - performance.now();
      if (wait > 0) await sleep(wait);  // pacing, not synchronisation
      const jid = `healthy-${String(i).padStart(5, '0')}`;
      pushedAt.set(jid, performance.now());
      replies.push(streamConn.call(`PUSH ${JSON.stringify(webhookJob(jid, healthy.url(`/hook/${jid}`)))}`));
    }
    for (const r of await Promise.all(replies)) assert.deepEqual(r, { type: '+', text: 'OK' });
  })();
  stream.catch(() => {});  // awaited below; this only keeps an early failure from going unhandled
  defer(() => { streaming = false; });

  // The faults, all at once.
  const t0 = performance.now();
  await push(conn, webhookJob('fault-limited-a', limited.url('/hook/limited-a')));
  const jobs = { silent: 8, refused: 8, reset: 8, storm: 8, late: 2, tlsHang: 2 };
  for (let i = 0; i < 8; i += 1) {
    await push(conn, webhookJob(`fault-silent-${i}`, silent.url(`/hook/silent-${i}`)));
    await push(conn, webhookJob(`fault-refused-${i}`, refusedUrl(`/hook/refused-${i}`)));
    await push(conn, webhookJob(`fault-reset-${i}`, reset.url(`/hook/reset-${i}`)));
    await push(conn, webhookJob(`fault-storm-${i}`, storm.url(`/hook/storm-${i}`)));
  }
  for (let i = 0; i < 2; i += 1) {
    await push(conn, webhookJob(`fault-late-${i}`, late.url(`/hook/late-${i}`)));
    await push(conn, webhookJob(`fault-tls-${i}`, tlsHang.url(`/hook/tls-${i}`)));
    await push(conn, webhookJob(`fault-drip-${i}`, drip.url(`/hook/drip-${i}`)));
    await push(conn, webpushJob(`fault-drip-wp-${i}`, drip.url(`/wp/drip-wp-${i}`)));
  }

  // Before any backoff is due, every failed attempt is exactly one job in the retry set: parked
  // jobs spend no retry.
  const retriesMatchFailures = async (when) => {
    const last = await waitFor(async () => {
      const doc = await info(conn);
      const failed = doc.hosts.reduce((n, h) => n + h.failures + h.overloaded, 0);
      return doc.faktory.sets.retries === failed ? doc : null;
    }, { timeout: 3_000, message: `INFO retries = failures + overloaded over all hosts (${when})` });
    assert.ok(performance.now() - t0 < MIN_BACKOFF_MS,
      `${when}: checked after ${seconds(performance.now() - t0)}, when retries may be due already`);
    report.push(`${when}: ${last.faktory.sets.retries} jobs in the retry set = failed attempts; ` +
      `${last.faktory.sets.working} reserved (parked or in flight)`);
    return last;
  };

  // A host whose breaker opened: attempts == failures, the rest parked, none after the opening.
  const breakerOpens = async (name, peer, host, n, outcome) => {
    const h = await waitFor(async () => {
      const e = (await hosts(server)).get(host);
      return e && e.breaker === 'open' && e.in_flight === 0 ? e : null;
    }, { timeout: 10_000, message: `${name}: breaker open in /api/hosts` });
    assert.ok(h.failures >= BREAKER_THRESHOLD && h.failures < n,
      `${name}: ${h.failures} failed attempts before the breaker opened`);
    assert.ok(h.parked >= n - h.failures, `${name}: parked ${h.parked} of ${n} (${JSON.stringify(h)})`);
    if (peer) assert.equal(peer.requests.length, h.failures, `${name}: one request per failed attempt`);
    const counted = (await deliveries(server)).get(host) ?? {};
    assert.equal(counted[outcome], h.failures, `${name}: outcome ${outcome} in ${JSON.stringify(counted)}`);
    report.push(`${name}: breaker open after ${h.failures} ${outcome} attempts, ${h.parked} jobs parked`);
    return h;
  };

  const report = [];  // one line per fault, printed as test diagnostics
  const checks = {
    async fastFailures() {
      const r = await breakerOpens('refused', null, `127.0.0.1:${refused.port}`, jobs.refused, 'network_error');
      const s = await breakerOpens('reset', reset, hostOf(reset), jobs.reset, 'network_error');
      const m = await breakerOpens('storm', storm, hostOf(storm), jobs.storm, 'server_error');
      stormHealed = true;
      await retriesMatchFailures('after the fast failures');
      return { r, s, m };
    },

    // While open, the storm host gets no attempt; the first one is the probe, one open interval
    // (30 s + up to 20 % jitter) after the failure that opened it; it succeeds, the breaker closes
    // and the parked jobs go out.
    async stormRecovers(opened) {
      const { m } = await opened;
      const failed = m.failures;
      const lastFailure = storm.requests[failed - 1].requestAt;
      await waitFor(() => storm.requests.length > failed,
        { timeout: BREAKER_OPEN_MS * 1.2 + 15_000, message: 'storm: the half-open probe' });
      const probe = storm.requests[failed];
      const after = probe.requestAt - lastFailure;
      assert.ok(after >= BREAKER_OPEN_MS - EARLY_MS && after <= BREAKER_OPEN_MS * 1.2 + SLACK_MS,
        `storm: first attempt after the opening came ${seconds(after)} after the last failure`);
      const closed = await waitFor(async () => {
        const e = (await hosts(server)).get(hostOf(storm));
        return e && e.breaker === 'closed' && e.successes >= m.parked ? e : null;
      }, { timeout: 10_000, message: 'storm: breaker closed and the parked jobs delivered' });
      assert.equal(closed.failures, failed, 'storm: no failure after the probe');
      report.push(`storm: probe ${seconds(after)} after the last failure; breaker closed, ` +
        `${closed.successes} parked jobs delivered`);
    },

    async retryAfter() {
      const first = await waitFor(() => limited.requests[0]?.answer, { message: 'limited: first request' });
      assert.equal(first.status, 429);
      const firstAt = limited.requests[0].requestAt;
      await push(conn, webhookJob('fault-limited-b', limited.url('/hook/limited-b')));
      await push(conn, webhookJob('fault-limited-c', limited.url('/hook/limited-c')));
      const waiting = await waitFor(async () => {
        const e = (await hosts(server)).get(hostOf(limited));
        return e && e.parked === 2 ? e : null;
      }, { timeout: 5_000, message: 'limited: the next jobs parked behind Retry-After' });
      assert.ok(waiting.retry_after_until, `limited: retry_after_until shown: ${JSON.stringify(waiting)}`);
      assert.equal(waiting.overloaded, 1);
      assert.ok(performance.now() - firstAt < RETRY_AFTER_S * 1000,
        'limited: checked while Retry-After still held');
      await waitFor(() => limited.requests.length === 3,
        { timeout: RETRY_AFTER_S * 1000 + 10_000, message: 'limited: the parked jobs delivered after Retry-After' });
      for (const r of limited.requests.slice(1)) {
        const after = r.requestAt - firstAt;
        report.push(`limited: ${r.path} attempted ${seconds(after)} after the 429`);
        assert.ok(after >= RETRY_AFTER_S * 1000 && after <= RETRY_AFTER_S * 1000 + SLACK_MS,
          `limited: ${r.path} arrived ${seconds(after)} after the 429 (Retry-After ${RETRY_AFTER_S} s)`);
      }
      const done = await waitFor(async () => {
        const e = (await hosts(server)).get(hostOf(limited));
        return e && e.successes === 2 ? e : null;
      }, { message: 'limited: two successes after Retry-After' });
      assert.equal(done.failures, 0);
      assert.equal(done.breaker, 'closed');
    },

    async tlsHandshakeHangs() {
      await waitFor(() => tlsHang.connections.length === jobs.tlsHang &&
        tlsHang.connections.every((c) => c.closedAt !== null),
      { timeout: CONNECT_MS + 15_000, message: 'tls-hang: both attempts ended' });
      report.push(assertDurations(tlsHang.connections, CONNECT_MS, CONNECT_MS + SLACK_MS, 'tls-hang'));
      const e = (await hosts(server)).get(hostOf(tlsHang));
      assert.equal(e.failures, 2, JSON.stringify(e));
      assert.equal(e.breaker, 'closed');
      assert.equal((await deliveries(server)).get(hostOf(tlsHang))?.timeout, 2);
    },

    async neverAnswers() {
      // Waves of the adaptive cap (4, then 2 after halving), each ended by the first-byte
      // deadline, until the 5th failure opens the breaker.
      const h = await breakerOpensSlowly('silent', silent, jobs.silent);
      report.push(assertDurations(silent.connections, FIRST_BYTE_MS, FIRST_BYTE_MS + SLACK_MS, 'silent'));
      report.push(`silent: breaker open after ${h.failures} timeouts, ${h.parked} jobs parked`);
      return h;
    },

    async answersTooLate() {
      await waitFor(() => late.connections.length === jobs.late &&
        late.connections.every((c) => c.closedAt !== null),
      { timeout: FIRST_BYTE_MS + 15_000, message: 'late: both attempts ended' });
      report.push(assertDurations(late.connections, FIRST_BYTE_MS, FIRST_BYTE_MS + SLACK_MS, 'late'));
      assert.equal((await deliveries(server)).get(hostOf(late))?.timeout, 2);
    },

    async drips() {
      await waitFor(() => drip.connections.length === 4 && drip.connections.every((c) => c.closedAt !== null),
        { timeout: TOTAL_MS + 15_000, message: 'drip: all four attempts ended' });
      const webpush = drip.connections.filter((c) => c.path?.startsWith('/wp/'));
      const webhook = drip.connections.filter((c) => c.path?.startsWith('/hook/'));
      assert.equal(webpush.length, 2, 'drip: two webpush requests');
      assert.equal(webhook.length, 2, 'drip: two webhook requests');
      // libcurl averages the speed over its last 5–6 s, so the request and response headers sent
      // at once keep it above the limit for that long: the cut comes low_speed_seconds later
      // (about 16 s here).
      report.push(assertDurations(webpush, LOW_SPEED_S * 1000,
        LOW_SPEED_S * 1000 + CURL_SPEED_WINDOW_MS + SLACK_MS, 'drip (webpush, low-speed cut)'));
      report.push(assertDurations(webhook, TOTAL_MS, TOTAL_MS + SLACK_MS,
        'drip (webhook, total deadline)'));
      const e = (await hosts(server)).get(hostOf(drip));
      assert.equal(e.failures, 4, JSON.stringify(e));
      assert.equal((await deliveries(server)).get(hostOf(drip))?.timeout, 4);
    },
  };

  // silent: waits for the breaker to open, then checks that nothing more was attempted.
  async function breakerOpensSlowly(name, peer, n) {
    const h = await waitFor(async () => {
      const e = (await hosts(server)).get(hostOf(peer));
      return e && e.breaker === 'open' && e.in_flight === 0 ? e : null;
    }, { timeout: 2 * FIRST_BYTE_MS + 15_000, message: `${name}: breaker open after repeated timeouts` });
    assert.ok(h.failures >= BREAKER_THRESHOLD && h.failures < n, `${name}: ${JSON.stringify(h)}`);
    assert.equal(peer.connections.length, h.failures, `${name}: one connection per failed attempt`);
    assert.ok(h.parked >= n - h.failures, `${name}: the rest parked: ${JSON.stringify(h)}`);
    assert.equal((await deliveries(server)).get(hostOf(peer))?.timeout, h.failures);
    return h;
  }

  const fastFailures = checks.fastFailures();
  await Promise.all([
    fastFailures,
    checks.stormRecovers(fastFailures),
    checks.retryAfter(),
    checks.tlsHandshakeHangs(),
    (async () => {
      // Between the first-byte timeouts (10 s) and the earliest backoff (15 s): still one job in
      // the retry set per failed attempt.
      await waitFor(() => silent.connections.filter((c) => c.closedAt !== null).length >= 4 &&
        late.connections.every((c) => c.closedAt !== null),
      { timeout: FIRST_BYTE_MS + 15_000, message: 'silent and late: the first-byte timeouts' });
      if (performance.now() - t0 < MIN_BACKOFF_MS - 2_000) await retriesMatchFailures('after the first-byte timeouts');
    })(),
    checks.neverAnswers(),
    checks.answersTooLate(),
    checks.drips(),
  ]);

  const silentEnd = await hosts(server);
  assert.equal(silentEnd.get(hostOf(silent)).breaker, 'open', 'silent: breaker still open');
  assert.equal(silent.connections.length, silentEnd.get(hostOf(silent)).failures,
    'silent: no attempt while the breaker is open');

  // The healthy host: every job delivered, on time, throughout.
  streaming = false;
  await stream;
  const arrivals = await waitFor(() => {
    const byJid = new Map(healthy.requests.map((r) => [r.path.slice('/hook/'.length), r.requestAt]));
    return byJid.size >= pushedAt.size ? byJid : null;
  }, { timeout: 10_000, message: `all ${pushedAt.size} healthy jobs delivered` });
  const latencies = [...pushedAt].map(([jid, at]) => {
    assert.ok(arrivals.has(jid), `healthy: ${jid} never arrived`);
    return arrivals.get(jid) - at;
  }).sort((a, b) => a - b);
  const p50 = latencies[Math.floor(latencies.length * 0.5)];
  const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))];
  const max = latencies[latencies.length - 1];
  for (const line of report) t.diagnostic(line);
  t.diagnostic(`fault run ${seconds(performance.now() - t0)}; healthy: ${latencies.length} jobs, ` +
    `push→arrival p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms`);
  assert.ok(latencies.length >= (TOTAL_MS / HEALTHY_EVERY_MS) * 0.9, `healthy: only ${latencies.length} jobs`);
  assert.ok(p99 < HEALTHY_P99_MS, `healthy: push→arrival p99 ${p99.toFixed(1)} ms`);
  const h = await waitFor(async () => {
    const e = (await hosts(server)).get(hostOf(healthy));
    return e && e.successes === latencies.length ? e : null;
  }, { message: 'healthy: every delivery counted as a success' });
  assert.equal(h.failures, 0);
  assert.equal(h.breaker, 'closed');
  assert.equal(healthy.requests.length, latencies.length, 'healthy: each job delivered once');
});

test('a permanent 4xx is dead at once and reported to the app as bulkhead.delivery_dead', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer, { config: 'allow_private_targets = true\n' });
  const refusing = await startFaultServer(defer, 'respond', { respond: () => ({ status: 400, body: 'bad request' }) });
  const client = new faktory.Client({ url: server.url });
  defer(() => client.close());
  const url = refusing.url('/hook/bad');
  const context = { hook_id: 17, note: 'Grüße' };
  const jid = await client.job('webhook', { url, body: 'x', context }).push();

  const seen = [];
  const worker = new faktory.Worker({
    url: server.url,
    queues: ['bulkhead'],
    concurrency: 1,
    registry: { 'bulkhead.delivery_dead': async (...args) => { seen.push(args); } },
  });
  await worker.work();
  defer(() => worker.stop());
  await waitFor(() => seen.length === 1, { timeout: 15_000, message: 'the bulkhead.delivery_dead job handled' });
  // One argument, the outcome object (docs/deliveries.md, "Outcome jobs").
  assert.equal(seen[0].length, 1);
  const { at, ...outcome } = seen[0][0];
  assert.ok(Math.abs(Date.parse(at) - Date.now()) < 60_000, `at is now: ${at}`);
  assert.deepEqual(outcome, {
    event: 'delivery_dead', host: hostOf(refusing), status: 400, reason: 'http 400', jid,
    jobtype: 'webhook', url, context,
  });
  const i = await client.info();
  assert.equal(i.faktory.sets.dead, 1, 'the job is dead');
  assert.equal(i.faktory.sets.retries, 0, 'and not retried');
  assert.equal(refusing.requests.length, 1, 'one attempt only');
  const h = (await hosts(server)).get(hostOf(refusing));
  assert.equal(h.successes, 1, `a 4xx answer is a healthy host: ${JSON.stringify(h)}`);
  assert.equal(h.breaker, 'closed');
  assert.equal((await deliveries(server)).get(hostOf(refusing))?.client_error, 1);
});
