// The Ruby side of the Sidekiq bridge tests, real processes: Debian's ruby-sidekiq pushing jobs
// with Sidekiq::Client (ruby/push.rb) and a `sidekiq` process running the outcome workers
// (ruby/worker.rb); and a bulkhead server whose [sidekiq] table points at a test redis-server.
//
//   const redis = await startRedis(defer);                      // ../cluster/lib/redis.mjs
//   const server = await startBridged(defer, redis, { config: 'allow_private_targets = true\n' });
//   const { jids } = await sidekiqPush(redis, { push: [{ class: 'webpush', queue: 'bulkhead', args }] });
//   await startSidekiq(defer, redis);                           // runs Bulkhead::WebpushGone & co.
//   await outcomesRecorded(redis)                               // what those workers got
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { startServer, waitFor } from '../../interop/lib/server.mjs';

const RUBY_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'ruby');
// Enough for a whole test run of Sidekiq lines (backtraces included): tests search it for lines
// logged early on.
const MAX_LOG_BYTES = 4 * 1024 * 1024;

export const redisUrl = (redis) => `redis://127.0.0.1:${redis.port}/0`;

// Runs ruby/push.rb with `doc` on stdin against `redis`; resolves with its {jids}.
export function sidekiqPush(redis, doc) {
  return new Promise((resolve, reject) => {
    const proc = execFile('ruby', [path.join(RUBY_DIR, 'push.rb')],
      { env: { ...process.env, REDIS_URL: redisUrl(redis) }, timeout: 60_000, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`ruby push.rb: ${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout));
      });
    proc.stdin.end(JSON.stringify(doc));
  });
}

// A `sidekiq -r ruby/worker.rb -q default` process on `redis` (or `-r require`, with `env` added
// to its environment), stopped (SIGTERM, then SIGKILL) after the test. Resolves once it has
// registered itself in Redis (the `processes` set).
export async function startSidekiq(defer, redis, {
  queues = ['default'], require = path.join(RUBY_DIR, 'worker.rb'), env = {},
} = {}) {
  const args = ['-r', require, '-c', '2', '-t', '2'];
  for (const q of queues) args.push('-q', q);
  const proc = spawn('sidekiq', args, {
    env: { ...process.env, REDIS_URL: redisUrl(redis), RAILS_ENV: 'test', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: RUBY_DIR,
  });
  const state = { log: '', exited: false };
  const append = (chunk) => {
    state.log = (state.log + chunk.toString()).slice(-MAX_LOG_BYTES);
  };
  proc.stdout.on('data', append);
  proc.stderr.on('data', append);
  const exited = new Promise((resolve) => proc.once('exit', () => {
    state.exited = true;
    resolve();
  }));
  defer(async () => {
    if (state.exited) return;
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  });
  await waitFor(async () => {
    if (state.exited) throw new Error(`sidekiq exited at start:\n${state.log}`);
    return Number(await redis.cli('SCARD', 'processes')) > 0;
  }, { timeout: 30_000, message: `sidekiq to start (log: ${state.log.slice(-2000)})` });
  return state;
}

// What the outcome workers recorded: [{class, jid, args}], in the order they ran.
export async function outcomesRecorded(redis) {
  const raw = await redis.cli('LRANGE', 'test:outcomes', '0', '-1');
  return raw === '' ? [] : raw.split('\n').map((line) => JSON.parse(line));
}

// A bulkhead server whose Sidekiq bridge takes from `redis` (`queues`, default ["bulkhead"]),
// with `config` (TOML, top-level keys) before the [sidekiq] table and `sidekiq` (TOML lines) in it.
export async function startBridged(ctx, redis, { config = '', sidekiq = '', ...options } = {}) {
  const toml = `${config}redis_heartbeat_ms = 200\nredis_heartbeat_ttl_ms = 1000\n` +
    `redis_reap_ms = 200\n[sidekiq]\nredis = "${redisUrl(redis)}"\n${sidekiq}`;
  return startServer(ctx, { ...options, config: toml });
}

// The bridge's figures in INFO (GET /api/info's "sidekiq").
export async function bridgeInfo(server) {
  return (await server.httpInfo()).sidekiq;
}
