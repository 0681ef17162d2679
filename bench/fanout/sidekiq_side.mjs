// The baseline sender: Mastodon's way (sidekiq/delivery_worker.rb) on a real Sidekiq (Debian
// ruby-sidekiq) with 25 threads, Mastodon's default concurrency, on a real redis-server (no
// persistence). A fresh Sidekiq process per run (its peak RSS is the run's); one redis-server for
// all runs, flushed between them; the CPU counted is Sidekiq's plus redis-server's during the run.
// Jobs are pushed by sidekiq/push.rb with Sidekiq::Client.push_bulk.
import fs from 'node:fs';
import path from 'node:path';

import { cpuSeconds, peakRssKb, run, Service } from './procs.mjs';
import { freePort } from './receiver_pool.mjs';

const HERE = path.dirname(new URL(import.meta.url).pathname);
export const SIDEKIQ_THREADS = 25;

export class Redis {
  constructor(dir) {
    this.dir = dir;
  }

  async start() {
    this.port = await freePort();
    this.service = new Service('redis-server', 'redis-server', ['--bind', '127.0.0.1', '--port',
      String(this.port), '--save', '', '--appendonly', 'no', '--dir', this.dir],
    { logFile: path.join(this.dir, 'redis.log') }).start();
    await this.service.waitPort(this.port);
    return this;
  }

  get url() { return `redis://127.0.0.1:${this.port}/0`; }

  async cli(...args) {
    const r = await run('redis-cli', ['-p', String(this.port), ...args]);
    if (r.code !== 0) throw new Error(`redis-cli ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  }

  stop() { return this.service?.stop(); }
}

export class SidekiqSender {
  // redis (a started Redis); dir (fresh per run); caFile; keyPemFile; keyId.
  constructor(options) {
    this.options = options;
    this.service = null;
  }

  get name() { return 'sidekiq'; }

  get pids() { return [this.service?.pid, this.options.redis.service.pid].filter(Boolean); }

  async start() {
    const { redis, dir, caFile, keyPemFile, keyId } = this.options;
    fs.mkdirSync(dir, { recursive: true });
    await redis.cli('flushall');
    const env = {
      ...process.env, REDIS_URL: redis.url, SSL_CERT_FILE: caFile, FANOUT_KEY_FILE: keyPemFile,
      FANOUT_KEY_ID: keyId,
    };
    this.env = env;
    this.service = new Service('sidekiq', 'sidekiq', ['-r', path.join(HERE, 'sidekiq', 'delivery_worker.rb'),
      '-c', String(SIDEKIQ_THREADS), '-q', 'push', '-t', '2'],
    { env, cwd: dir, logFile: path.join(dir, 'sidekiq.log') }).start();
    // Ready once its heartbeat registered the process (Sidekiq's `processes` set).
    await this.service.waitFor(async () => Number(await redis.cli('scard', 'processes')) > 0,
      'its heartbeat in redis');
  }

  // Pushes one job per URL in order; returns [{at, start, count}] per push_bulk call.
  async push({ activity, urls }) {
    const file = path.join(this.options.dir, 'deliveries.json');
    fs.writeFileSync(file, JSON.stringify({ activity, urls }));
    const r = await run('ruby', [path.join(HERE, 'sidekiq', 'push.rb'), file], { env: this.env });
    if (r.code !== 0) throw new Error(`push.rb failed: ${r.stderr}`);
    return r.stdout.trim().split('\n').map((line) => {
      const [at, start, count] = line.split(' ').map(Number);
      return { at, start, count };
    });
  }

  cpu() { return this.pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0); }

  cpuOf() {
    return { sidekiq: cpuSeconds(this.service.pid), redis: cpuSeconds(this.options.redis.service.pid) };
  }

  peakRssKb() { return peakRssKb(this.service.pid); }

  async leftovers() {
    return { retries: Number(await this.options.redis.cli('zcard', 'retry')), dead: Number(await this.options.redis.cli('zcard', 'dead')) };
  }

  async stop() {
    if (this.service) await this.service.stop('SIGTERM', 5_000);
  }
}
