// The sender under test: a fresh `bulkhead serve` per run (so its peak RSS is the run's), on its
// default store (SQLite in a temp data dir), with the benchmark's CA as `delivery_ca_file`,
// `allow_private_targets` (the hosts are on 127.x) and the run's [delivery] caps. The actor's key
// is registered with the real `bulkhead keys add` CLI; jobs are pushed with the npm
// faktory-worker client's pushBulk (PUSHB, 1,000 jobs a command): the client a Node app would use,
// and the same one the interop tests use, so what the benchmark pushes is what apps push.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { cpuSeconds, peakRssKb, run, Service } from './procs.mjs';
import { clockMs } from './receiver.mjs';
import { freePort } from './receiver_pool.mjs';

const require = createRequire(new URL('../../tests/package.json', import.meta.url));
const faktory = require('faktory-worker');

export const BATCH = 1000;

// settings: top-level keys (e.g. max_connections); delivery: [delivery] keys, dotted ones for a
// type's table (e.g. 'activitypub.first_byte_timeout_ms').
function toml({ caFile, delivery, settings = {} }) {
  const lines = ['allow_private_targets = true', `delivery_ca_file = "${caFile}"`, 'log_level = "warn"'];
  for (const [k, v] of Object.entries(settings)) lines.push(`${k} = ${v}`);
  lines.push('', '[delivery]');
  for (const [k, v] of Object.entries(delivery)) lines.push(`${k} = ${v}`);
  return lines.join('\n') + '\n';
}

export class BulkheadSender {
  // binary; dir (fresh per run); caFile; delivery ({global_max_in_flight: 16000, ...});
  // settings (top-level keys, optional); keyPemFile, keyId.
  constructor(options) {
    this.options = options;
    this.service = null;
    this.client = null;
  }

  get name() { return 'bulkhead'; }

  get pids() { return this.service?.pid ? [this.service.pid] : []; }

  async start() {
    const { binary, dir, keyPemFile, keyId } = this.options;
    fs.mkdirSync(dir, { recursive: true });
    const config = path.join(dir, 'bulkhead.toml');
    fs.writeFileSync(config, toml(this.options));
    const [port, httpPort] = [await freePort(), await freePort()];
    this.service = new Service('bulkhead', binary, ['serve', '--listen', `127.0.0.1:${port}`,
      '--http', `127.0.0.1:${httpPort}`, '--store', `sqlite:${path.join(dir, 'store.db')}`,
      '--data-dir', dir, '--config', config], { logFile: path.join(dir, 'bulkhead.log') }).start();
    await this.service.waitPort(port);
    this.httpPort = httpPort;
    const added = await run(binary, ['keys', 'add', keyId, keyPemFile, '--http', `127.0.0.1:${httpPort}`]);
    if (added.code !== 0) throw new Error(`bulkhead keys add failed: ${added.stderr}`);
    this.client = new faktory.Client({ url: `tcp://127.0.0.1:${port}` });
  }

  // Pushes `jobs` in order; returns [{at, start, count}] per PUSHB (at: just before it was sent).
  async push(jobs) {
    const batches = [];
    for (let start = 0; start < jobs.length; start += BATCH) {
      const batch = jobs.slice(start, start + BATCH);
      batches.push({ at: clockMs(), start, count: batch.length });
      const rejected = await this.client.pushBulk(batch);
      const jids = Object.keys(rejected);
      if (jids.length > 0) throw new Error(`PUSHB refused ${jids.length} jobs: ${rejected[jids[0]].reason}`);
    }
    return batches;
  }

  cpu() { return cpuSeconds(this.service.pid); }

  peakRssKb() { return peakRssKb(this.service.pid); }

  // What the store says afterwards: jobs waiting for a retry, dead; when some failed, the hosts'
  // last errors (GET /api/hosts), most frequent first.
  async leftovers() {
    const { sets } = (await this.client.info()).faktory;
    const out = { retries: sets.retries, dead: sets.dead };
    if (sets.retries + sets.dead > 0) {
      const hosts = await (await fetch(`http://127.0.0.1:${this.httpPort}/api/hosts`)).json();
      const counts = new Map();
      for (const h of hosts.hosts ?? hosts) {
        if (h.last_error) counts.set(h.last_error, (counts.get(h.last_error) ?? 0) + 1);
      }
      out.errors = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([e, n]) => `${e} (${n} hosts)`);
    }
    return out;
  }

  async stop() {
    if (this.client) await this.client.close();
    this.client = null;
    if (this.service) await this.service.stop();
  }
}
