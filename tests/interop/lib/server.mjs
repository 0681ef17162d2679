// Starts and stops a real `bulkhead serve` for the interop tests.
//
//   const server = await startServer(t, { password: 'secret', config: 'max_line_bytes = 1024\n' });
//   server.port, server.httpPort, server.url ("tcp://:secret@127.0.0.1:PORT"), server.stderr
//   await server.stop(); await server.kill9(); await server.restart();
//
// The binary comes from env BULKHEAD_BINARY. Each server gets a fresh temp data dir and, unless
// told otherwise, a SQLite store inside it; restart() reuses the same store, data dir and ports.
// startServer registers cleanup with t.after, so every test stops what it starts.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;
const MAX_LOG_BYTES = 256 * 1024;

// A free TCP port on 127.0.0.1 (bind port 0, read it, close).
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// Polls `fn` (sync or async) until it returns a truthy value; returns that value. Throws after
// `timeout` ms with `message` and the last value/error seen.
export async function waitFor(fn, { timeout = 10_000, interval = 25, message = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeout} ms waiting for ${message} (last: ${detail})`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

function canConnect(port) {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1' });
    const done = (ok) => {
      sock.removeAllListeners();
      sock.destroy();
      resolve(ok);
    };
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
    sock.setTimeout(1000, () => done(false));
  });
}

export class BulkheadServer {
  // options: password (string), config (TOML text), store ('sqlite' | 'memory' | a URL),
  //          env (extra environment variables), prefix (a command that runs the binary, e.g.
  //          ['prlimit', '--nofile=256:256', '--']), args (more `serve` flags, e.g.
  //          ['--testing-clock']).
  constructor(options = {}) {
    this.binary = process.env.BULKHEAD_BINARY;
    if (!this.binary) {
      throw new Error('BULKHEAD_BINARY is not set (run through `make interop-test`, or set it to build/bulkhead)');
    }
    if (!fs.existsSync(this.binary)) throw new Error(`BULKHEAD_BINARY ${this.binary} does not exist`);
    this.options = options;
    this.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulkhead-interop-'));
    const store = options.store ?? 'sqlite';
    if (store === 'sqlite') this.store = `sqlite:${path.join(this.dataDir, 'store.db')}`;
    else if (store === 'memory') this.store = 'memory:';
    else this.store = store;
    this.configPath = null;
    if (options.config !== undefined) {
      this.configPath = path.join(this.dataDir, 'bulkhead.toml');
      fs.writeFileSync(this.configPath, options.config);
    }
    this.proc = null;
    this.exited = null;  // promise resolved with {code, signal} when the current process ends
    this.stderr = '';    // all runs, appended (bounded)
    this.port = 0;
    this.httpPort = 0;
  }

  get url() {
    const auth = this.options.password ? `:${encodeURIComponent(this.options.password)}@` : '';
    return `tcp://${auth}127.0.0.1:${this.port}`;
  }

  get httpBase() {
    return `http://127.0.0.1:${this.httpPort}`;
  }

  get running() {
    return this.proc !== null;
  }

  async start() {
    if (this.proc) throw new Error('server already running');
    if (!this.port) this.port = await freePort();
    if (!this.httpPort) this.httpPort = await freePort();
    const args = ['serve', '--listen', `127.0.0.1:${this.port}`, '--http', `127.0.0.1:${this.httpPort}`,
      '--store', this.store, '--data-dir', this.dataDir];
    if (this.configPath) args.push('--config', this.configPath);
    args.push(...(this.options.args || []));
    const env = { ...process.env, ...(this.options.env || {}) };
    delete env.BULKHEAD_PASSWORD;
    if (this.options.password) env.BULKHEAD_PASSWORD = this.options.password;
    const prefix = this.options.prefix || [];
    const proc = prefix.length > 0
      ? spawn(prefix[0], [...prefix.slice(1), this.binary, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(this.binary, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    const append = (chunk) => {
      this.stderr += chunk.toString();
      if (this.stderr.length > MAX_LOG_BYTES) this.stderr = this.stderr.slice(-MAX_LOG_BYTES);
    };
    proc.stdout.on('data', append);
    proc.stderr.on('data', append);
    let exitInfo = null;
    this.exited = new Promise((resolve) => {
      proc.once('exit', (code, signal) => {
        exitInfo = { code, signal };
        if (this.proc === proc) this.proc = null;
        resolve(exitInfo);
      });
      proc.once('error', (err) => {
        exitInfo = { code: null, signal: null, error: err };
        if (this.proc === proc) this.proc = null;
        resolve(exitInfo);
      });
    });
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (exitInfo) {
        throw new Error(`bulkhead serve exited during startup (${JSON.stringify(exitInfo)}); ` +
          `args: ${args.join(' ')}\nstderr:\n${this.stderr}`);
      }
      if (await canConnect(this.port)) return this;
      if (Date.now() >= deadline) {
        await this.kill9();
        throw new Error(`bulkhead serve did not accept connections on 127.0.0.1:${this.port} within ` +
          `${READY_TIMEOUT_MS} ms; stderr:\n${this.stderr}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  // SIGTERM, then SIGKILL after STOP_TIMEOUT_MS. Resolves with {code, signal, killed}.
  async stop() {
    const proc = this.proc;
    if (!proc) return null;
    proc.kill('SIGTERM');
    let timer;
    const timedOut = new Promise((r) => { timer = setTimeout(() => r(null), STOP_TIMEOUT_MS); });
    let result = await Promise.race([this.exited, timedOut]);
    clearTimeout(timer);
    if (result === null) {
      proc.kill('SIGKILL');
      result = { ...(await this.exited), killed: true };
    }
    return result;
  }

  // kill -9: no chance to flush or close anything.
  async kill9() {
    const proc = this.proc;
    if (!proc) return null;
    proc.kill('SIGKILL');
    return this.exited;
  }

  // Stops (gracefully) if running, then starts again on the same store, data dir and ports.
  async restart() {
    await this.stop();
    return this.start();
  }

  // GET /api/info as parsed JSON.
  async httpInfo() {
    const res = await fetch(`${this.httpBase}/api/info`);
    if (res.status !== 200) throw new Error(`GET /api/info: HTTP ${res.status}`);
    return res.json();
  }

  // The Authorization header the HTTP API's protected routes need when the server has a password.
  get authHeaders() {
    return this.options.password ? { authorization: `Bearer ${this.options.password}` } : {};
  }

  async setWorkerState(wid, state) {
    const res = await fetch(`${this.httpBase}/api/workers/${encodeURIComponent(wid)}/${state}`,
      { method: 'POST', headers: this.authHeaders });
    const body = await res.text();
    return { status: res.status, body };
  }

  async dispose() {
    try {
      await this.stop();
    } finally {
      fs.rmSync(this.dataDir, { recursive: true, force: true });
    }
  }
}

// A LIFO cleanup stack on a node:test context: defer(fn) runs fn after the test, last deferred
// first (t.after alone runs hooks in registration order, which would stop a server before the
// workers connected to it).
export function cleanupStack(t) {
  const fns = [];
  t.after(async () => {
    while (fns.length > 0) {
      const fn = fns.pop();
      try {
        await fn();
      } catch (e) {
        console.error('cleanup failed:', e);
      }
    }
  });
  return (fn) => fns.push(fn);
}

// Starts a server and registers its cleanup: `ctx` is a node:test context (t.after) or a defer
// function from cleanupStack().
export async function startServer(ctx, options = {}) {
  const server = new BulkheadServer(options);
  if (typeof ctx === 'function') ctx(() => server.dispose());
  else ctx.after(() => server.dispose());
  await server.start();
  return server;
}
