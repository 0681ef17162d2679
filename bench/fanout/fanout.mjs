// The fan-out benchmark (bench/run.d/60-fanout.sh runs it inside a private mount namespace whose
// /etc/hosts names the hosts below). One status fanned out: 20,000 signed activitypub deliveries
// to 1,000 HTTPS hosts (20 inboxes each), then 50,000 webpush deliveries to 3 push services;
// inboxes answer after 50 ms, after 1 s (slow hosts, as in the 2019 incident), or 5 % of the hosts
// never answer. bulkhead with today's [delivery] defaults and with the caps raised, and Mastodon's
// way (Sidekiq, 25 threads, sidekiq/delivery_worker.rb), side by side in one run, with the
// machine's own limit for the same cryptography (openssl speed). Prints every run's figures, then
// the ratios; writes summary.json and summary.md into the output folder.
//
// Environment (defaults in DEFAULTS): BUILD_DIR, FANOUT_OUT, FANOUT_HOSTS, FANOUT_INBOXES_PER_HOST,
// FANOUT_PUSH_HOSTS, FANOUT_WEBPUSH, FANOUT_WEBPUSH_SLOW_DEFAULT (webpush jobs in the slow run
// with default caps: 96 in flight at most, ~90/s), FANOUT_SIDEKIQ_FAST / _SLOW / _STUCK (the
// Sidekiq way's job counts: 25 threads at 1 s are 25/s), FANOUT_FAST_MS, FANOUT_SLOW_MS,
// FANOUT_STUCK_PERCENT, FANOUT_SAMPLE (every Nth delivery's signature / push is checked in full),
// FANOUT_RECEIVERS (processes), FANOUT_PROTOCOL (h2: ALPN h2 + http/1.1; http1), FANOUT_RUN_TIMEOUT
// (s), FANOUT_SPEED_SECONDS, FANOUT_ONLY (comma-separated run names), FANOUT_PERF=1 (perf record
// on bulkhead in every run; flat profiles in the output folder).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { BulkheadSender } from './bulkhead_side.mjs';
import { measureMachineLimits, measureP256, measureRsa } from './machine_limit.mjs';
import { makePki } from './pki.mjs';
import { ReceiverPool } from './receiver_pool.mjs';
import { printReport } from './report.mjs';
import { runOne } from './run_one.mjs';
import { Redis, SidekiqSender } from './sidekiq_side.mjs';
import {
  DOMAIN, KEY_ID, activityPubJob, inboxUrl, makeActivity, makeHosts, makePushPayload,
  makeSubscriberKeys, pushEndpoint, shuffled, webPushJob,
} from './topology.mjs';

const DEFAULTS = {
  BUILD_DIR: 'build', FANOUT_HOSTS: 1000, FANOUT_INBOXES_PER_HOST: 20, FANOUT_PUSH_HOSTS: 3,
  FANOUT_WEBPUSH: 50000, FANOUT_WEBPUSH_SLOW_DEFAULT: 3000, FANOUT_SIDEKIQ_FAST: 5000,
  FANOUT_SIDEKIQ_SLOW: 1000, FANOUT_SIDEKIQ_STUCK: 2000, FANOUT_FAST_MS: 50, FANOUT_SLOW_MS: 1000,
  FANOUT_STUCK_PERCENT: 5, FANOUT_SAMPLE: 100, FANOUT_RECEIVERS: 2, FANOUT_PROTOCOL: 'h2',
  FANOUT_RUN_TIMEOUT: 240, FANOUT_SPEED_SECONDS: 2,
};
const env = (k) => process.env[k] || DEFAULTS[k];
const num = (k) => Number(env(k));

// Today's defaults, and caps out of the way: every host may have 1,000 attempts in flight from
// the start (AIMD would take ~30 rounds of the host's latency to climb from 32), 16,000 in all.
// With max_connections 2000 + http 256 + 16000 + 128 the descriptors fit in the 20,000 here.
export const CAPS = {
  defaults: {},
  raised: { global_max_in_flight: 16000, host_cap_initial: 1000, host_cap_max: 1000 },
};

function world(out) {
  const hosts = makeHosts(num('FANOUT_HOSTS'), num('FANOUT_PUSH_HOSTS'));
  const pki = makePki(path.join(out, 'pki'), { dnsNames: [`*.${DOMAIN}`] });
  const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', {
    modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const keyPemFile = path.join(out, 'actor.pem');
  fs.writeFileSync(keyPemFile, privateKey, { mode: 0o600 });
  const perHost = num('FANOUT_INBOXES_PER_HOST');
  const apOrder = shuffled(Array.from({ length: hosts.inboxes.length * perHost }, (_, k) => k), 20261203);
  const stuckEvery = Math.round(100 / num('FANOUT_STUCK_PERCENT'));
  const stuckHosts = hosts.inboxes.filter((h) => (h.index + 1) % stuckEvery === 0);
  return {
    hosts, pki, publicKey, keyPemFile, perHost, apOrder, stuckHosts,
    stuckSet: new Set(stuckHosts.map((h) => h.index)),
    activity: makeActivity(2048), pushPayload: makePushPayload(), pushKeys: makeSubscriberKeys(1000),
  };
}

// The list of runs: [scenario, sender, caps, kind, count]. The never-answering scenario runs each
// sender twice back to back: its healthy deliveries alone ('alone'), then all of them ('stuck'),
// so that the ratio of the healthy rates compares runs minutes apart at most.
function plan() {
  const ap = num('FANOUT_HOSTS') * num('FANOUT_INBOXES_PER_HOST');
  const wp = num('FANOUT_WEBPUSH');
  const skStuck = Math.min(ap, num('FANOUT_SIDEKIQ_STUCK'));
  return [
    ['fast', 'bulkhead', 'defaults', 'activitypub', ap], ['fast', 'bulkhead', 'raised', 'activitypub', ap],
    ['fast', 'sidekiq', null, 'activitypub', Math.min(ap, num('FANOUT_SIDEKIQ_FAST'))],
    ['fast', 'bulkhead', 'defaults', 'webpush', wp], ['fast', 'bulkhead', 'raised', 'webpush', wp],
    ['slow', 'bulkhead', 'defaults', 'activitypub', ap], ['slow', 'bulkhead', 'raised', 'activitypub', ap],
    ['slow', 'sidekiq', null, 'activitypub', Math.min(ap, num('FANOUT_SIDEKIQ_SLOW'))],
    ['slow', 'bulkhead', 'defaults', 'webpush', Math.min(wp, num('FANOUT_WEBPUSH_SLOW_DEFAULT'))],
    ['slow', 'bulkhead', 'raised', 'webpush', wp],
    ['alone', 'bulkhead', 'defaults', 'activitypub', ap], ['stuck', 'bulkhead', 'defaults', 'activitypub', ap],
    ['alone', 'bulkhead', 'raised', 'activitypub', ap], ['stuck', 'bulkhead', 'raised', 'activitypub', ap],
    ['alone', 'sidekiq', null, 'activitypub', skStuck], ['stuck', 'sidekiq', null, 'activitypub', skStuck],
  ].map(([scenario, sender, caps, kind, count]) => ({
    scenario, sender, caps, kind, count,
    name: `${scenario}-${kind === 'activitypub' ? 'ap' : 'wp'}-${sender}${caps ? `-${caps}` : ''}`,
  })).filter((r) => !process.env.FANOUT_ONLY || process.env.FANOUT_ONLY.split(',').includes(r.name));
}

function spec(run, w, port) {
  const delayMs = run.scenario === 'slow' ? num('FANOUT_SLOW_MS') : num('FANOUT_FAST_MS');
  const stuckOn = run.scenario === 'stuck';
  const base = {
    name: run.name, kind: run.kind, delayMs,
    stuckNames: stuckOn ? w.stuckHosts.map((h) => h.name) : [],
    capacity: { activitypub: w.apOrder.length, webpush: num('FANOUT_WEBPUSH') },
  };
  if (run.kind === 'webpush') {
    const indices = Array.from({ length: run.count }, (_, k) => k);
    const jobs = indices.map((k) => webPushJob(k, pushEndpoint(w.hosts, k, port),
      w.pushKeys[k % w.pushKeys.length], w.pushPayload, run.name));
    return { ...base, indices, stuck: () => false, payload: jobs };
  }
  const onStuckHost = (k) => w.stuckSet.has(Math.floor(k / w.perHost));
  const first = w.apOrder.slice(0, run.count);
  // 'alone': the same deliveries less those to the hosts that never answer in 'stuck'.
  const indices = run.scenario === 'alone' ? first.filter((k) => !onStuckHost(k)) : first;
  const stuck = (k) => stuckOn && onStuckHost(k);
  const urls = indices.map((k) => inboxUrl(w.hosts, k, w.perHost, port));
  const payload = run.sender === 'sidekiq' ? { activity: w.activity, urls }
    : urls.map((u, i) => activityPubJob(indices[i], u, w.activity, run.name));
  return { ...base, indices, stuck, payload };
}

function sender(run, w, out, redis) {
  const dir = fs.mkdtempSync(path.join(out, `${run.name}-`));
  const common = { dir, caFile: w.pki.caFile, keyPemFile: w.keyPemFile, keyId: KEY_ID };
  if (run.sender === 'sidekiq') return new SidekiqSender({ ...common, redis });
  return new BulkheadSender({
    ...common, binary: path.resolve(env('BUILD_DIR'), 'bulkhead'), delivery: CAPS[run.caps],
  });
}

function printRun(r) {
  const f = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : '?');
  const limit = r.limit ? `, crypto limit just before ${f(r.limit)}/s` : '';
  console.log(`${r.name} (load ${f(r.load, 1)}${limit}): ${f(r.rate)} deliveries/s (${r.delivered}/${r.expected} in ${f(r.seconds, 1)} s` +
    `${r.complete ? '' : ', CUT'}, pushed in ${f(r.pushSeconds, 1)} s); cpu ${f(r.cpuPer1000, 2)} s/1000; peak RSS ${f(r.peakRssMb)} MB; ` +
    `TLS handshakes ${r.handshakes} (${r.resumed} resumed, ${r.h2} h2), connections ${r.connections}; ` +
    `PUSH->arrival p50 ${f(r.p50Ms)} ms p99 ${f(r.p99Ms)} ms; receivers ${f(100 * r.receiverCores)} % of a core; ` +
    `${r.duplicates || r.incomplete ? `arrived twice ${r.duplicates}, given up mid-request ${r.incomplete}; ` : ''}` +
    `retries ${r.leftovers.retries} dead ${r.leftovers.dead}` +
    `${r.leftovers.errors ? ` (hosts' last errors: ${r.leftovers.errors.join(', ')})` : ''}; checked ${JSON.stringify(r.checked)}` +
    `${r.failures ? `; FAILURES ${r.failures}: ${r.failureSamples.join(' | ')}` : ''}`);
  if (r.profile) console.log(`  perf (bulkhead, flat):\n${r.profile.map((l) => `  ${l}`).join('\n')}`);
}

function printLimits(when, l) {
  console.log(`${when} (-multi ${l.cores}): RSA-2048 ${l.rsaSign.toFixed(0)} signs/s; P-256 ECDH ` +
    `${l.ecdh.toFixed(0)}/s, ECDSA ${l.ecdsaSign.toFixed(0)} signs/s (one of each: ${l.pushTwoOps.toFixed(0)} pushes/s)`);
}

async function main() {
  const out = path.resolve(env('FANOUT_OUT') || path.join(env('BUILD_DIR'), 'fanout'));
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  const started = Date.now();
  console.log(`fan-out: ${os.cpus().length} cores, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ` +
    `fd hard limit ${fs.readFileSync('/proc/self/limits', 'utf8').match(/Max open files\s+\d+\s+(\d+)/)[1]}`);
  const w = world(out);
  const speed = () => measureMachineLimits({ cores: os.cpus().length, seconds: num('FANOUT_SPEED_SECONDS') });
  const before = await speed();
  printLimits('openssl speed, before the runs', before);
  const receivers = await new ReceiverPool({
    hosts: [...w.hosts.inboxes, ...w.hosts.pushes], tls: w.pki, processes: num('FANOUT_RECEIVERS'),
    protocol: env('FANOUT_PROTOCOL'),
  }).start();
  const redis = await new Redis(fs.mkdtempSync(path.join(out, 'redis-'))).start();
  const results = [];
  try {
    await receivers.configure({
      sampleEvery: num('FANOUT_SAMPLE'), inboxesPerHost: w.perHost, publicKeyPem: w.publicKey,
      keyId: KEY_ID, pushKeys: w.pushKeys, pushPayload: w.pushPayload,
    });
    console.log(`receivers: ${w.hosts.inboxes.length} inbox hosts, ${w.hosts.pushes.length} push services on ` +
      `port ${receivers.port}, ${receivers.count} processes, ${env('FANOUT_PROTOCOL')}; ` +
      `${w.stuckHosts.length} hosts never answer in the stuck runs`);
    for (const run of plan()) {
      const load = os.loadavg()[0];
      // The crypto limit just before each run, as the load on the machine moves.
      const cores = os.cpus().length;
      const limit = run.kind === 'activitypub'
        ? (await measureRsa({ cores, seconds: 1 })).rsaSign : (await measureP256({ cores, seconds: 1 })).pushTwoOps;
      const r = await runOne(spec(run, w, receivers.port), sender(run, w, out, redis), receivers, {
        timeoutMs: num('FANOUT_RUN_TIMEOUT') * 1000,
        perfDir: process.env.FANOUT_PERF === '1' && run.sender === 'bulkhead' ? out : null,
      });
      results.push({ ...run, ...r, load, limit });
      printRun(results.at(-1));
    }
  } finally {
    await receivers.stop();
    await redis.stop();
  }
  // The machine's limit moves with the other load on it: measured before and after, averaged.
  const after = await speed();
  printLimits('openssl speed, after the runs', after);
  const limits = Object.fromEntries(Object.keys(before).map((k) => [k, (before[k] + after[k]) / 2]));
  const summary = {
    date: new Date().toISOString(), limits, limitsBefore: before, limitsAfter: after, results,
    seconds: (Date.now() - started) / 1000,
  };
  fs.writeFileSync(path.join(out, 'summary.json'), JSON.stringify(summary, null, 1));
  const ok = printReport(summary, path.join(out, 'summary.md'));
  console.log(`fan-out: ${summary.seconds.toFixed(0)} s in all; figures in ${out}/summary.{json,md}`);
  process.exitCode = ok ? 0 : 1;
}

await main();
