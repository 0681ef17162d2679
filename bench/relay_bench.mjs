// The push relay (docs/relay.md) against the design of mastodon/webpush-apn-relay, measured the
// same way in one run (bench/run.d/70-relay.sh; docs/benchmarks.md).
//
// The baseline is that relay's behaviour rebuilt from its source (main.go,
// process_apn_notification.go): an HTTPS handler that turns the request into an APNs notification
// and sends it into a Go channel of 4,096 slots — a send that blocks while the channel is full —
// and answers 201 after the send; 8 workers each take one notification and wait for APNs's answer.
// Here: the same bounded queue whose put waits for room, 8 workers over one HTTP/2 session.
//
// Both receive the same load from the same senders (HTTPS keep-alive connections, each sending
// its next message when the last was answered) for a fixed time, against the same fake APNs
// (tests/interop/fakes/fake_apns.mjs) in two modes: answering in 100 ms, and stalled (every answer
// held for longer than the run). Per relay and mode: accepted messages/s and the 201 latency
// (p50, p99, max), and how many requests were still waiting for their 201 at the end.
//
// Then forwarding alone: N messages are accepted while the fake holds its answers behind a gate,
// the gate opens, and the time until the fake has taken all N gives bulkhead's forwards/s over
// HTTP/2, with the number of connections used and the CPU each process spent (what bounds it).
//
// Usage: node bench/relay_bench.mjs BULKHEAD_BINARY [SECONDS] [SENDERS] [FORWARD_N]
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { makeP8Key, startFakeApns } from '../tests/interop/fakes/fake_apns.mjs';
import { makePki } from '../tests/interop/lib/pki.mjs';

const [binary, seconds = '10', senders = '64', forwardN = '20000'] = process.argv.slice(2);
const RUN_MS = Number(seconds) * 1000;
const SENDERS = Number(senders);
const FORWARD_N = Number(forwardN);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitFor(fn, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

// CPU seconds a process has used (utime + stime from /proc).
function cpuSeconds(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

// --- the baseline: mastodon/webpush-apn-relay's design ------------------------------------------
const Z85 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#';
function encode85(b) {
  let out = '';
  let i = 0;
  const digits = (v, n) => {
    let s = '';
    for (let k = 0; k < n; k++) { s = Z85[Number(v % 85n)] + s; v /= 85n; }
    return s;
  };
  for (; i + 4 <= b.length; i += 4) out += digits(BigInt(b.readUInt32BE(i)), 5);
  if (i < b.length) {
    let v = 0n;
    for (let j = i; j < b.length; j++) v = (v << 8n) | BigInt(b[j]);
    out += digits(v, b.length - i + 1);
  }
  return out;
}

async function startBaseline(pki, apns, p8, topic) {
  const capacity = 4096;
  const queue = [];
  const roomWaiters = [];
  const itemWaiters = [];
  const put = async (item) => {
    while (queue.length >= capacity) await new Promise((r) => roomWaiters.push(r));  // blocks
    queue.push(item);
    itemWaiters.shift()?.();
  };
  const take = async () => {
    while (queue.length === 0) await new Promise((r) => itemWaiters.push(r));
    const item = queue.shift();
    roomWaiters.shift()?.();
    return item;
  };
  // One provider token, as sideshow/apns2 keeps one for up to 50 minutes.
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${b64({ alg: 'ES256', kid: 'KEY1234567' })}.${b64({ iss: 'TEAM123456', iat: Math.floor(Date.now() / 1000) })}`;
  const sig = crypto.sign('sha256', Buffer.from(input), { key: p8.pem, dsaEncoding: 'ieee-p1363' });
  const jwt = `${input}.${sig.toString('base64url')}`;
  // One HTTP/2 connection, opened again when APNs ends it (as Go's http2 transport does).
  let session = null;
  const connection = () => {
    if (!session || session.closed || session.destroyed) {
      const s = http2.connect(apns.url, { ca: pki.ca });
      s.on('error', () => {});
      s.on('goaway', () => { if (session === s) session = null; });
      session = s;
    }
    return session;
  };
  let running = true;
  for (let w = 0; w < 8; w++) {
    (async () => {
      while (running) {
        const n = await take();
        if (!running) return;
        await new Promise((resolve) => {
          let req;
          try {
            req = connection().request({
            ':method': 'POST', ':path': `/3/device/${n.token}`, authorization: `bearer ${jwt}`,
            'apns-topic': topic, 'apns-push-type': 'alert', 'apns-priority': '10',
            });
          } catch {
            session = null;
            resolve();
            return;
          }
          req.on('response', () => {});
          req.on('close', resolve);
          req.on('error', resolve);
          req.resume();
          req.end(JSON.stringify(n.payload));
        });
      }
    })();
  }
  const server = https.createServer({ cert: fs.readFileSync(pki.file('server.crt')), key: fs.readFileSync(pki.file('server.key')) },
    (req, res) => {
      const m = /^\/relay-to\/(production|development)\/([^/]+)/.exec(req.url);
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', async () => {
        if (!m) { res.writeHead(404).end(); return; }
        const payload = { aps: { alert: '🎺', 'mutable-content': 1, 'content-available': 1 }, p: encode85(Buffer.concat(chunks)) };
        await put({ token: m[2], payload });
        res.writeHead(201).end();
      });
    });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `https://127.0.0.1:${server.address().port}`,
    close() {
      running = false;
      for (const w of itemWaiters) w();
      for (const w of roomWaiters) w();
      server.closeAllConnections?.();
      server.close();
      session?.destroy();
    },
  };
}

// --- bulkhead --------------------------------------------------------------------------------
async function startBulkhead(pki, apns, keyFile) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulkhead-relay-bench-'));
  const [fwp, httpPort, relayPort] = [await freePort(), await freePort(), await freePort()];
  const config = [
    `tls_cert_file = "${pki.file('server.crt')}"`, `tls_key_file = "${pki.file('server.key')}"`,
    `relay_listen = "127.0.0.1:${relayPort}"`, 'allow_private_targets = true',
    `delivery_ca_file = "${pki.file('ca.crt')}"`, 'log_level = "warn"',
    '[delivery]', 'global_max_in_flight = 1024', 'host_cap_max = 512', 'host_cap_initial = 512', 'host_cap_min = 256',
    '[[relay.apns]]', 'name = "bench"', 'topic = "org.example.bench"', 'team_id = "TEAM123456"',
    'key_id = "KEY1234567"', `key_file = "${keyFile}"`, `production_url = "${apns.url}"`,
    `development_url = "${apns.url}"`, 'rate_per_second = 0', 'token_per_minute = 0', '',
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'bulkhead.toml'), config);
  const proc = spawn(binary, ['serve', '--listen', `127.0.0.1:${fwp}`, '--http', `127.0.0.1:${httpPort}`,
    '--data-dir', dir, '--config', path.join(dir, 'bulkhead.toml')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  proc.stderr.on('data', (c) => { log += c; });
  await waitFor(() => new Promise((resolve) => {
    const s = net.connect(relayPort, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  }), 15_000, `bulkhead's relay port (log: ${log})`);
  return {
    base: `https://127.0.0.1:${relayPort}`,
    pid: proc.pid,
    async close() {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// --- the senders ----------------------------------------------------------------------------
function post(agent, pki, url, body) {
  return new Promise((resolve) => {
    const req = https.request(url, { method: 'POST', agent, ca: pki.ca,
      headers: { 'content-encoding': 'aes128gcm', ttl: '3600', 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

// SENDERS loops for RUN_MS; each waits for its answer before its next message. Returns the rate
// of 201s, their latencies and the requests still unanswered at the end.
async function load(pki, base, tokens) {
  const agent = new https.Agent({ keepAlive: true, maxSockets: SENDERS, ca: pki.ca });
  const latencies = [];
  const unanswered = [];  // how long each request still waiting at the end had waited
  let waiting = 0;
  let other = 0;
  const stopAt = Date.now() + RUN_MS;
  const body = crypto.randomBytes(300);
  const loops = Array.from({ length: SENDERS }, async (_, i) => {
    let k = 0;
    while (Date.now() < stopAt) {
      const token = tokens[(i * 7919 + k++) % tokens.length];
      const t0 = process.hrtime.bigint();
      waiting += 1;
      const status = await Promise.race([post(agent, pki, `${base}/relay-to/production/${token}`, body),
        sleep(stopAt - Date.now() + 1000).then(() => 'late')]);
      if (status === 'late') {  // still waiting for its 201 when the run ended
        unanswered.push(Number(process.hrtime.bigint() - t0) / 1e6);
        return;
      }
      waiting -= 1;
      if (status === 201) latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      else other += 1;
    }
  });
  await Promise.all(loops);
  agent.destroy();
  // Percentiles over every request, those still unanswered counted with what they had waited (a
  // lower bound of their latency): a relay that blocks its senders cannot hide them.
  const rate = latencies.length / (RUN_MS / 1000);
  const all = [...latencies, ...unanswered].sort((a, b) => a - b);
  const q = (p) => (all.length ? all[Math.min(all.length - 1, Math.floor(p * all.length))] : NaN);
  return { rate, p50: q(0.5), p99: q(0.99), max: all.at(-1) ?? NaN, waiting, other };
}

const fmt = (r) => `${r.rate.toFixed(0).padStart(6)} msg/s accepted, 201 p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(0)} ms, ${r.waiting} senders still waiting for a 201 at the end${r.other ? `, ${r.other} non-201` : ''}`;

async function main() {
  const pki = makePki();
  const p8 = makeP8Key();
  const keyFile = path.join(pki.dir, 'AuthKey_KEY1234567.p8');
  fs.writeFileSync(keyFile, p8.pem, { mode: 0o600 });
  const tokens = Array.from({ length: 4096 }, () => crypto.randomBytes(32).toString('hex'));
  const known = { production: new Set(tokens), development: new Set() };
  const apns = await startFakeApns({
    cert: fs.readFileSync(pki.file('server.crt')), key: fs.readFileSync(pki.file('server.key')),
    topic: 'org.example.bench', keyId: 'KEY1234567', teamId: 'TEAM123456', publicKey: p8.publicKey,
    tokens: known, environment: 'production',
  });
  const results = {};
  const phases = process.env.RELAY_BENCH_PHASES ?? 'accept,forward';
  for (const mode of phases.includes('accept') ? ['answers in 100 ms', 'stalled'] : []) {
    apns.state.delayMs = mode === 'stalled' ? RUN_MS * 10 : 100;
    for (const name of ['webpush-apn-relay design', 'bulkhead']) {
      const relay = name === 'bulkhead' ? await startBulkhead(pki, apns, keyFile) : await startBaseline(pki, apns, p8, 'org.example.bench');
      const r = await load(pki, relay.base, tokens);
      results[`${mode}/${name}`] = r;
      console.log(`APNs ${mode.padEnd(17)} ${name.padEnd(25)} ${fmt(r)}`);
      await relay.close();
      for (const s of apns.state.sessions) s.destroy();  // held answers die with their sessions
    }
  }
  for (const mode of phases.includes('accept') ? ['answers in 100 ms', 'stalled'] : []) {
    const base = results[`${mode}/webpush-apn-relay design`];
    const ours = results[`${mode}/bulkhead`];
    console.log(`ratio bulkhead/baseline (APNs ${mode}): accepted ${(ours.rate / base.rate).toFixed(1)}x, 201 p99 ${(base.p99 / ours.p99).toFixed(1)}x lower`);
  }

  // Forwarding alone over HTTP/2.
  apns.state.delayMs = 0;
  let open;
  apns.state.gate = new Promise((r) => { open = r; });
  apns.state.maxSessions = 0;
  const relay = await startBulkhead(pki, apns, keyFile);
  const agent = new https.Agent({ keepAlive: true, maxSockets: SENDERS, ca: pki.ca });
  const body = crypto.randomBytes(300);
  let next = 0;
  await Promise.all(Array.from({ length: SENDERS }, async () => {
    while (next < FORWARD_N) {
      const i = next++;
      await post(agent, pki, `${relay.base}/relay-to/production/${tokens[i % tokens.length]}`, body);
    }
  }));
  agent.destroy();
  const before = apns.state.received.length;
  const cpu0 = { bulkhead: cpuSeconds(relay.pid), node: process.cpuUsage() };
  const perf = process.env.RELAY_BENCH_PERF
    ? spawn('perf', ['record', '-g', '-p', String(relay.pid), '-o', process.env.RELAY_BENCH_PERF], { stdio: 'ignore' }) : null;
  if (perf) await sleep(500);
  const t0 = process.hrtime.bigint();
  apns.state.gate = null;
  open();
  await waitFor(() => apns.state.received.length >= before + FORWARD_N, 300_000, 'every message forwarded');
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const bulkCpu = cpuSeconds(relay.pid) - cpu0.bulkhead;
  const nodeUse = process.cpuUsage(cpu0.node);
  const nodeCpu = (nodeUse.user + nodeUse.system) / 1e6;
  const sessions = new Set(apns.state.received.slice(before).map((r) => r.session)).size;
  const atOnce = apns.state.maxSessions;
  console.log(`forwarding ${FORWARD_N} messages over HTTP/2: ${(FORWARD_N / secs).toFixed(0)} msg/s on ${sessions} connection(s) in turn, at most ${atOnce} open at once ` +
    `(most streams at once: ${apns.state.maxConcurrent}); CPU over ${secs.toFixed(1)} s: bulkhead ${(100 * bulkCpu / secs).toFixed(0)}% of a core, ` +
    `the fake APNs and senders (one Node thread) ${(100 * nodeCpu / secs).toFixed(0)}% (the fake ends each connection after 500 streams: tests/interop/fakes/fake_apns.mjs)`);
  if (perf) {
    perf.kill('SIGINT');
    await new Promise((r) => perf.once('exit', r));
  }
  await relay.close();
  await apns.close();
  fs.rmSync(pki.dir, { recursive: true, force: true });
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
