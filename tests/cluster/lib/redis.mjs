// Real redis-server and redis-sentinel processes for the cluster tests, each on a free loopback
// port with its own temp directory, and a one-shot command helper (redis-cli).
//
//   const primary = await startRedis(defer);                       // no persistence
//   const replica = await startRedis(defer, { replicaOf: primary });
//   const s = await startSentinel(defer, { primary, master: 'bh' }); // short fail-over timings
//   await waitForSentinels([s, ...], 'bh', 2);      // each knows the others and the replicas
//   await primary.cli('SMEMBERS', '{ns}:nodes')                     // redis-cli's raw output
//   await primary.kill9(); await primary.start();                   // same port, same config
//
// Every process is registered with `defer` (cleanupStack from interop/lib/server.mjs) and killed
// after the test, also when it fails.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { freePort, waitFor } from '../../interop/lib/server.mjs';

const START_TIMEOUT_MS = 10_000;
const MAX_LOG_BYTES = 64 * 1024;

export function redisCli(port, ...args) {
  return new Promise((resolve, reject) => {
    execFile('redis-cli', ['-h', '127.0.0.1', '-p', String(port), '--raw', ...args],
      { timeout: 5_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`redis-cli -p ${port} ${args.join(' ')}: ${err.message} ${stderr}`));
        else resolve(stdout.trimEnd());
      });
  });
}

class RedisProcess {
  constructor(binary, configText) {
    this.binary = binary;
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulkhead-cluster-redis-'));
    this.configText = configText;
    this.port = 0;
    this.proc = null;
    this.exited = null;
    this.log = '';
  }

  get endpoint() {
    return `127.0.0.1:${this.port}`;
  }

  cli(...args) {
    return redisCli(this.port, ...args);
  }

  async start() {
    if (!this.port) this.port = await freePort();
    const conf = path.join(this.dir, 'redis.conf');
    // Sentinel rewrites its file; write it only once, so a restart keeps what it learned.
    if (!fs.existsSync(conf)) {
      fs.writeFileSync(conf, `bind 127.0.0.1\nport ${this.port}\ndir "${this.dir}"\n` +
        `daemonize no\nlogfile ""\n${this.configText(this)}`);
    }
    const proc = spawn(this.binary, [conf], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    const append = (chunk) => {
      this.log += chunk.toString();
      if (this.log.length > MAX_LOG_BYTES) this.log = this.log.slice(-MAX_LOG_BYTES);
    };
    proc.stdout.on('data', append);
    proc.stderr.on('data', append);
    this.exited = new Promise((resolve) => proc.once('exit', (code, signal) => {
      if (this.proc === proc) this.proc = null;
      resolve({ code, signal });
    }));
    await waitFor(async () => {
      if (!this.proc) throw new Error(`${this.binary} exited at start; log:\n${this.log}`);
      return (await this.cli('PING')) === 'PONG';
    }, { timeout: START_TIMEOUT_MS, message: `${this.binary} on ${this.endpoint} answering PING` });
    return this;
  }

  // SIGTERM (Redis writes its append-only file and exits), and waits for it.
  async stop() {
    const proc = this.proc;
    if (!proc) return null;
    proc.kill('SIGTERM');
    return this.exited;
  }

  async kill9() {
    const proc = this.proc;
    if (!proc) return null;
    proc.kill('SIGKILL');
    return this.exited;
  }

  async dispose() {
    await this.kill9();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

// A redis-server without persistence; `replicaOf` (another started RedisProcess) makes it a
// replica that syncs at once; `persistent`: an append-only file written at every command
// (appendfsync always), so a stop and start keeps every key.
export async function startRedis(defer, { replicaOf, persistent = false } = {}) {
  const p = new RedisProcess('redis-server', () => 'save ""\n' +
    (persistent ? 'appendonly yes\nappendfsync always\n' : 'appendonly no\n') +
    'repl-diskless-sync-delay 0\n' + (replicaOf ? `replicaof 127.0.0.1 ${replicaOf.port}\n` : ''));
  defer(() => p.dispose());
  return p.start();
}

// A redis-sentinel monitoring `primary` as `master` with quorum 2 and short timings: the primary
// is down after `downAfterMs` without an answer, a fail-over may be retried after
// `failoverTimeoutMs`.
export async function startSentinel(defer, { primary, master, downAfterMs = 1000, failoverTimeoutMs = 3000 }) {
  const p = new RedisProcess('redis-sentinel', () =>
    `sentinel monitor ${master} 127.0.0.1 ${primary.port} 2\n` +
    `sentinel down-after-milliseconds ${master} ${downAfterMs}\n` +
    `sentinel failover-timeout ${master} ${failoverTimeoutMs}\n`);
  defer(() => p.dispose());
  return p.start();
}

// The value of `field` in `SENTINEL MASTER master` on the sentinel at `port` (null if absent).
export async function sentinelField(port, master, field) {
  const lines = (await redisCli(port, 'SENTINEL', 'MASTER', master)).split('\n');
  const i = lines.indexOf(field);
  return i >= 0 ? lines[i + 1] : null;
}

// Until every sentinel sees the others and `replicas` replicas (a fail-over needs the quorum to
// know each other and the replicas).
export function waitForSentinels(sentinels, master, replicas) {
  return waitFor(async () => {
    for (const s of sentinels) {
      if (await sentinelField(s.port, master, 'num-other-sentinels') !== String(sentinels.length - 1)) return false;
      if (await sentinelField(s.port, master, 'num-slaves') !== String(replicas)) return false;
    }
    return true;
  }, { timeout: 20_000, message: `each sentinel seeing ${sentinels.length - 1} other sentinels and ${replicas} replicas` });
}
