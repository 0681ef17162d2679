// One run of the fan-out: a fresh sender pushes its deliveries at once, the receivers count them
// in, and the run's figures are read: deliveries/s from the first push to the last healthy
// arrival, the sender's CPU seconds per 1,000 deliveries and peak RSS, TLS handshakes and TCP
// connections at the receivers, the receivers' own CPU (to show they were not what bounded the
// run), and the time from PUSH to arrival (p50, p99).
import fs from 'node:fs';
import path from 'node:path';

import { cpuSeconds, run, Service, sleep } from './procs.mjs';
import { clockMs } from './receiver.mjs';

const POLL_MS = 100;

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

// perf record on the sender (FANOUT_PERF=1): a flat profile of where its CPU went.
async function startPerf(pid, file) {
  const perf = new Service('perf', 'perf', ['record', '-F', '499', '-p', String(pid), '-o', file]).start();
  await sleep(300);
  return perf;
}

// The profile by library, then the busiest symbols (one line each, trimmed).
async function perfReport(perf, file) {
  await perf.stop('SIGINT');
  const top = async (sort, n) => {
    const r = await run('perf', ['report', '-i', file, '--stdio', '--no-children', '--sort', sort]);
    return r.stdout.split('\n').filter((l) => /^\s+\d/.test(l)).slice(0, n)
      .map((l) => l.replace(/\s+/g, ' ').trim().slice(0, 110));
  };
  // By thread too: the event loop ("bulkhead") apart from the signing pool ("bulkhead-crypto").
  const lines = [`by thread: ${(await top('comm', 6)).join('; ')}`,
    `by library: ${(await top('dso', 8)).join('; ')}`, ...(await top('dso,symbol', 15))];
  fs.writeFileSync(`${file}.txt`, `${lines.join('\n')}\n`);
  return lines;
}

export async function waitForArrivals(receivers, expected, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stats = await receivers.stats();
    // A delivery that failed a check was answered 4xx (bulkhead then holds it dead): it arrived.
    if (stats.delivered + stats.failures >= expected) return { stats, complete: true, failed: stats.failures > 0 };
    if (Date.now() > deadline) return { stats, complete: false };
    await sleep(POLL_MS);
  }
}

// The run's figures from the arrival times of the deliveries it pushed (`indices`, in push
// order) and the push times per batch.
export function timings(indices, batches, arrivals, stuck) {
  const pushedAt = new Float64Array(indices.length);
  for (const b of batches) pushedAt.fill(b.at, b.start, b.start + b.count);
  const latencies = [];
  let last = 0;
  for (let i = 0; i < indices.length; i += 1) {
    const at = arrivals[indices[i]];
    if (!(at > 0) || stuck(indices[i])) continue;
    latencies.push(at - pushedAt[i]);
    last = Math.max(last, at);
  }
  latencies.sort((a, b) => a - b);
  const seconds = (last - batches[0].at) / 1000;
  return {
    delivered: latencies.length, seconds, rate: latencies.length / seconds,
    p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99),
  };
}

// spec: {name, kind ('activitypub'|'webpush'), delayMs, stuckNames, stuck(k), indices, payload
// (what sender.push takes), capacity}; sender: BulkheadSender | SidekiqSender.
export async function runOne(spec, sender, receivers, { timeoutMs, perfDir }) {
  const expected = spec.indices.filter((k) => !spec.stuck(k)).length;
  await receivers.configure({ delayMs: spec.delayMs, stuck: spec.stuckNames });
  await receivers.reset(spec.capacity);
  let perf = null;
  const perfFile = perfDir ? path.join(perfDir, `perf-${spec.name}.data`) : null;
  try {
    await sender.start();
    if (perfFile) perf = await startPerf(sender.pids[0], perfFile);
    const receiverCpu0 = receivers.pids.reduce((s, pid) => s + cpuSeconds(pid), 0);
    const cpu0 = sender.cpu();
    const split0 = sender.cpuOf?.();
    const t0 = clockMs();
    const batches = await sender.push(spec.payload);
    const pushSeconds = (clockMs() - t0) / 1000;
    const { stats, complete, failed } = await waitForArrivals(receivers, expected, timeoutMs);
    const cpu = sender.cpu() - cpu0;
    const split1 = sender.cpuOf?.();
    const cpuSplit = split0 && Object.fromEntries(Object.keys(split0).map((k) => [k, split1[k] - split0[k]]));
    const receiverCpu = receivers.pids.reduce((s, pid) => s + cpuSeconds(pid), 0) - receiverCpu0;
    const peakRssMb = sender.peakRssKb() / 1024;
    const leftovers = await sender.leftovers();
    const profile = perf ? await perfReport(perf, perfFile) : null;
    perf = null;
    const arrivals = (await receivers.arrivals())[spec.kind];
    const t = timings(spec.indices, batches, arrivals, spec.stuck);
    return {
      name: spec.name, sender: sender.name, kind: spec.kind, pushed: spec.indices.length, expected,
      complete, failed: Boolean(failed), ...t, pushSeconds, cpu, cpuSplit,
      cpuPer1000: (1000 * cpu) / Math.max(1, t.delivered), peakRssMb,
      receiverCores: receiverCpu / t.seconds, leftovers,
      handshakes: stats.handshakes, resumed: stats.resumed, h2: stats.h2Handshakes,
      connections: stats.connections, duplicates: stats.duplicates, stuckHeld: stats.stuckHeld,
      incomplete: stats.incomplete,
      checked: stats.checked, failures: stats.failures, failureSamples: stats.failureSamples, profile,
    };
  } finally {
    if (perf) await perf.stop('SIGINT');
    await sender.stop();
  }
}
