// Deliveries held in flight at the descriptor limit (`make bench-inflight`; bench/run.d/60-fanout.sh
// runs it with FANOUT_MAIN, inside the fan-out's private mount namespace and /etc/hosts). One
// `bulkhead serve` (SQLite store, caps raised) holds 15,000 signed activitypub deliveries in flight
// to 750 hosts that never answer (20 inboxes each, HTTP/1.1: one TCP+TLS connection per delivery,
// the case bounded by descriptors) while 250 healthy hosts (HTTP/2, answering after 50 ms) are
// sent 10,000 more. The healthy hosts' rate is measured alone and beside the held deliveries in
// interleaved pairs (alone, stuck, alone, stuck), a fresh bulkhead per phase, and the ratio printed
// (goal ≥ 0.95). In each stuck phase the held deliveries are confirmed three ways before the
// healthy ones are pushed and again after the last of them arrived: bulkhead's own /metrics
// (bulkhead_host_inflight summed), the TCP connections in /proc/PID/fd established to the
// never-answering hosts' port, and the requests those hosts read in full and hold. bulkhead's RSS
// before and with them held gives the memory per in-flight delivery.
//
// Environment (defaults in DEFAULTS): BUILD_DIR, FANOUT_OUT, FANOUT_HOSTS (all inbox hosts; the
// /etc/hosts lines come from it), INFLIGHT_STUCK_HOSTS and INFLIGHT_STUCK_PER_HOST (the held
// deliveries: their product), INFLIGHT_HEALTHY_PER_HOST (the other hosts' inboxes),
// INFLIGHT_PAIRS, INFLIGHT_FAST_MS, INFLIGHT_RECEIVERS (processes for the healthy hosts),
// INFLIGHT_HOLDERS (processes for the never-answering ones), INFLIGHT_GLOBAL
// (delivery.global_max_in_flight), INFLIGHT_SETTLE_TIMEOUT and INFLIGHT_RUN_TIMEOUT (s).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { BulkheadSender } from './bulkhead_side.mjs';
import { deliveryGauges, fdCensus, rssKb } from './inflight_probe.mjs';
import { makePki } from './pki.mjs';
import { sleep } from './procs.mjs';
import { ReceiverPool } from './receiver_pool.mjs';
import { timings, waitForArrivals } from './run_one.mjs';
import { activityPubJob, DOMAIN, inboxUrl, KEY_ID, makeActivity, makeHosts, shuffled } from './topology.mjs';

const DEFAULTS = {
  BUILD_DIR: 'build', FANOUT_HOSTS: 1000, INFLIGHT_STUCK_HOSTS: 750, INFLIGHT_STUCK_PER_HOST: 20,
  INFLIGHT_HEALTHY_PER_HOST: 40, INFLIGHT_PAIRS: 2, INFLIGHT_FAST_MS: 50, INFLIGHT_RECEIVERS: 2,
  INFLIGHT_HOLDERS: 3, INFLIGHT_GLOBAL: 17000, INFLIGHT_SETTLE_TIMEOUT: 300, INFLIGHT_RUN_TIMEOUT: 240,
};
const env = (k) => process.env[k] || DEFAULTS[k];
const num = (k) => Number(env(k));

// The same caps in every phase. Every host may have all its deliveries in flight from the start;
// the attempts to never-answering hosts outlive the run (connect 2 min, first byte and whole
// attempt 15 min; bulkhead's stop ends them). max_connections (Faktory clients) is lowered so that
// the descriptor budget (max_connections + http_max_connections + global_max_in_flight + 128) fits
// the 20,000 hard limit with 17,000 in flight.
function caps() {
  return {
    settings: { max_connections: 64 },
    delivery: {
      global_max_in_flight: num('INFLIGHT_GLOBAL'), host_cap_initial: 1000, host_cap_max: 1000,
      'activitypub.connect_timeout_ms': 120000, 'activitypub.first_byte_timeout_ms': 900000,
      'activitypub.total_timeout_ms': 900000,
    },
  };
}

function world(out) {
  const all = makeHosts(num('FANOUT_HOSTS'), 0).inboxes;
  const nStuck = num('INFLIGHT_STUCK_HOSTS');
  if (nStuck >= all.length) throw new Error(`INFLIGHT_STUCK_HOSTS ${nStuck} must be below FANOUT_HOSTS ${all.length}`);
  const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', {
    modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const keyPemFile = path.join(out, 'actor.pem');
  fs.writeFileSync(keyPemFile, privateKey, { mode: 0o600 });
  // The healthy hosts first (delivery k on host floor(k / perHost)), the never-answering after.
  const healthy = all.slice(0, all.length - nStuck);
  const stuck = all.slice(healthy.length);
  return {
    all, healthy, stuck, publicKey, keyPemFile, activity: makeActivity(2048),
    pki: makePki(path.join(out, 'pki'), { dnsNames: [`*.${DOMAIN}`] }),
    hp: num('INFLIGHT_HEALTHY_PER_HOST'), sp: num('INFLIGHT_STUCK_PER_HOST'),
  };
}

// Jobs for deliveries `indices` (shuffled, seeded) on hosts `hosts` of `perHost` inboxes each.
function jobs(indices, hosts, perHost, port, w, tag) {
  return indices.map((k) => activityPubJob(k, inboxUrl({ inboxes: hosts }, k, perHost, port), w.activity, tag));
}

const mb = (kb) => kb / 1024;

// A snapshot of what bulkhead and the never-answering hosts hold.
async function held(sender, holders) {
  const pid = sender.pids[0];
  // Out of descriptors, bulkhead's HTTP listener refuses or answers 503: reported, not fatal.
  const g = await deliveryGauges(sender.httpPort)
    .catch((e) => ({ inFlight: NaN, maxInFlight: NaN, parked: NaN, metricsError: e.message }));
  const s = holders ? await holders.stats() : null;
  return {
    ...g, ...fdCensus(pid, holders?.port), rssKb: rssKb(pid),
    holderConnections: s?.connections ?? 0, holderRequests: s?.stuckHeld ?? 0,
  };
}

// Waits until `target` deliveries are in flight by every count; prints progress every 10 s.
async function settle(sender, holders, target) {
  const deadline = Date.now() + num('INFLIGHT_SETTLE_TIMEOUT') * 1000;
  let next = Date.now() + 10_000;
  for (;;) {
    const h = await held(sender, holders);
    if (h.inFlight >= target && h.toPort >= target && h.holderRequests >= target) return h;
    if (Date.now() > next) {
      console.log(`  settling: in flight ${h.metricsError ?? h.inFlight} (/metrics), ${h.toPort} connections, ${h.holderRequests} ` +
        `requests held, ${h.fds} fds, parked ${h.parked}, RSS ${mb(h.rssKb).toFixed(0)} MB`);
      next += 10_000;
    }
    if (Date.now() > deadline) {
      throw new Error(`only ${h.metricsError ?? h.inFlight} in flight (/metrics), ${h.toPort} connections, ` +
        `${h.holderRequests} requests held, ${h.fds} fds after ${env('INFLIGHT_SETTLE_TIMEOUT')} s; wanted ${target}`);
    }
    await sleep(500);
  }
}

// One phase on a fresh bulkhead: 'alone' (the healthy deliveries only) or 'stuck' (the held
// deliveries first, settled, then the same healthy deliveries).
async function phase(name, w, pools, out) {
  const { receivers, holders } = pools;
  const stuckOn = name.startsWith('stuck');
  const healthyIdx = shuffled(Array.from({ length: w.healthy.length * w.hp }, (_, k) => k), 20261203);
  const stuckIdx = shuffled(Array.from({ length: w.stuck.length * w.sp }, (_, k) => w.healthy.length * w.sp + k), 7);
  await receivers.reset({ activitypub: healthyIdx.length, webpush: 0 });
  await holders.reset({ activitypub: w.all.length * w.sp, webpush: 0 });
  const sender = new BulkheadSender({
    dir: fs.mkdtempSync(path.join(out, `${name}-`)), caFile: w.pki.caFile, keyPemFile: w.keyPemFile,
    keyId: KEY_ID, binary: path.resolve(env('BUILD_DIR'), 'bulkhead'), ...caps(),
  });
  const load = os.loadavg()[0];
  try {
    await sender.start();
    const before = await held(sender, holders);
    let during = null;
    let settleSeconds = 0;
    if (stuckOn) {
      const t0 = Date.now();
      await sender.push(jobs(stuckIdx, w.all, w.sp, holders.port, w, `${name}-held`));
      during = await settle(sender, holders, stuckIdx.length);
      settleSeconds = (Date.now() - t0) / 1000;
    }
    const cpu0 = sender.cpu();
    const batches = await sender.push(jobs(healthyIdx, w.healthy, w.hp, receivers.port, w, name));
    const { complete, stats } = await waitForArrivals(receivers, healthyIdx.length, num('INFLIGHT_RUN_TIMEOUT') * 1000);
    const cpu = sender.cpu() - cpu0;
    const after = await held(sender, stuckOn ? holders : null);
    const arrivals = (await receivers.arrivals()).activitypub;
    const t = timings(healthyIdx, batches, arrivals, () => false);
    return {
      name, load, complete, ...t, expected: healthyIdx.length, cpuPer1000: (1000 * cpu) / Math.max(1, t.delivered),
      failures: stats.failures, failureSamples: stats.failureSamples, before, during, after, settleSeconds,
      peakRssMb: mb(sender.peakRssKb()),
    };
  } finally {
    await sender.stop();
  }
}

function printPhase(r) {
  const f = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : '?');
  console.log(`${r.name} (load ${f(r.load, 1)}): healthy ${f(r.rate)} deliveries/s (${r.delivered}/${r.expected} in ` +
    `${f(r.seconds, 1)} s${r.complete ? '' : ', CUT'}); PUSH->arrival p50 ${f(r.p50Ms)} p99 ${f(r.p99Ms)} ms; ` +
    `cpu ${f(r.cpuPer1000, 2)} s/1000; peak RSS ${f(r.peakRssMb)} MB` +
    `${r.failures ? `; FAILURES ${r.failures}: ${r.failureSamples.join(' | ')}` : ''}`);
  if (!r.during) return;
  const d = r.during;
  const perDelivery = (1024 * (mb(d.rssKb) - mb(r.before.rssKb))) / Math.max(1, d.inFlight);
  console.log(`  held after ${f(r.settleSeconds, 1)} s: in flight ${d.inFlight} (/metrics, cap ${d.maxInFlight}), ` +
    `${d.toPort} TCP connections to the never-answering hosts (of ${d.fds} fds, ${d.sockets} sockets), ` +
    `${d.holderRequests} requests held by them (${d.holderConnections} connections); RSS ${f(mb(r.before.rssKb))} -> ` +
    `${f(mb(d.rssKb))} MB: ${f(perDelivery, 1)} KB per delivery in flight`);
  const a = r.after;
  console.log(`  after the healthy ones: in flight ${a.inFlight} (/metrics), ${a.toPort} connections, ` +
    `${a.holderRequests} requests held, ${a.fds} fds, RSS ${f(mb(a.rssKb))} MB`);
}

function summarize(results) {
  const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const alone = results.filter((r) => r.name.startsWith('alone'));
  const stuck = results.filter((r) => r.name.startsWith('stuck'));
  const pairs = alone.map((a, i) => (stuck[i] ? stuck[i].rate / a.rate : NaN));
  const ratio = mean(stuck.map((r) => r.rate)) / mean(alone.map((r) => r.rate));
  const kb = stuck.map((r) => (r.during.rssKb - r.before.rssKb) / Math.max(1, r.during.inFlight));
  // bulkhead's CPU per healthy delivery beside the held ones / alone: what holding them costs the
  // loop, less moved by the other load on the machine than the rates.
  const cpuRatio = mean(stuck.map((r) => r.cpuPer1000)) / mean(alone.map((r) => r.cpuPer1000));
  console.log(`healthy rate beside ${stuck[0]?.during?.inFlight ?? '?'} held / alone: ${ratio.toFixed(3)} ` +
    `(pairs ${pairs.map((p) => p.toFixed(3)).join(', ')}; goal >= 0.95); CPU per healthy delivery ` +
    `beside / alone: ${cpuRatio.toFixed(3)}`);
  console.log(`memory per delivery in flight: ${kb.map((k) => k.toFixed(1)).join(', ')} KB of RSS`);
  return { ratio, pairs, cpuRatio, kbPerInFlight: kb };
}

async function main() {
  const out = path.resolve(env('FANOUT_OUT') || path.join(env('BUILD_DIR'), 'inflight'));
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out, { recursive: true });
  const started = Date.now();
  console.log(`in flight: ${os.cpus().length} cores, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ` +
    `fd limit ${fs.readFileSync('/proc/self/limits', 'utf8').match(/Max open files\s+(\d+)\s+(\d+)/).slice(1).join(' / ')}`);
  const w = world(out);
  const receivers = new ReceiverPool({ hosts: w.healthy, tls: w.pki, processes: num('INFLIGHT_RECEIVERS'), protocol: 'h2' });
  const holders = new ReceiverPool({ hosts: w.stuck, tls: w.pki, processes: num('INFLIGHT_HOLDERS'), protocol: 'http1' });
  const results = [];
  try {
    await receivers.start();
    await holders.start();
    const common = { sampleEvery: 100, publicKeyPem: w.publicKey, keyId: KEY_ID, pushKeys: [] };
    await receivers.configure({ ...common, inboxesPerHost: w.hp, delayMs: num('INFLIGHT_FAST_MS'), stuck: [] });
    await holders.configure({ ...common, inboxesPerHost: w.sp, delayMs: 0, stuck: w.stuck.map((h) => h.name) });
    console.log(`${w.healthy.length} healthy hosts x ${w.hp} inboxes (h2, ${env('INFLIGHT_FAST_MS')} ms) on port ` +
      `${receivers.port}; ${w.stuck.length} never-answering hosts x ${w.sp} inboxes (HTTP/1.1) on port ${holders.port}`);
    for (let i = 1; i <= num('INFLIGHT_PAIRS'); i += 1) {
      for (const name of [`alone-${i}`, `stuck-${i}`]) {
        results.push(await phase(name, w, { receivers, holders }, out));
        printPhase(results.at(-1));
      }
    }
  } finally {
    await receivers.stop();
    await holders.stop();
  }
  const summary = { date: new Date().toISOString(), seconds: (Date.now() - started) / 1000, results, ...summarize(results) };
  fs.writeFileSync(path.join(out, 'summary.json'), JSON.stringify(summary, null, 1));
  console.log(`in flight: ${summary.seconds.toFixed(0)} s in all; figures in ${out}/summary.json`);
  process.exitCode = results.every((r) => r.complete && !r.failures) ? 0 : 1;
}

await main();
