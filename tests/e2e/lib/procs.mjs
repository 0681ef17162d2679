// Child processes (Prometheus, Alertmanager) and the webhook receiver for the e2e alerting test.
import { spawn } from 'node:child_process';
import http from 'node:http';

const MAX_LOG_BYTES = 256 * 1024;
const STOP_TIMEOUT_MS = 10_000;

// A long-running child with its stdout+stderr kept (bounded). stop(): SIGTERM, SIGKILL after 10 s.
export class Child {
  constructor(name, command, args) {
    this.name = name;
    this.command = command;
    this.args = args;
    this.log = '';
    this.exitInfo = null;
    this.proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const append = (chunk) => {
      this.log += chunk.toString();
      if (this.log.length > MAX_LOG_BYTES) this.log = this.log.slice(-MAX_LOG_BYTES);
    };
    this.proc.stdout.on('data', append);
    this.proc.stderr.on('data', append);
    this.exited = new Promise((resolve) => {
      this.proc.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
      this.proc.once('error', (error) => {
        this.exitInfo = { code: null, signal: null, error: error.message };
        resolve(this.exitInfo);
      });
    });
  }

  tail(lines = 40) {
    return this.log.split('\n').slice(-lines).join('\n');
  }

  // Polls `url` until it answers 200; throws (with the log tail) if the process exits first or
  // `timeout` ms pass.
  async waitReady(url, timeout = 20_000) {
    const deadline = Date.now() + timeout;
    for (;;) {
      if (this.exitInfo) {
        throw new Error(`${this.name} exited during startup (${JSON.stringify(this.exitInfo)}); ` +
          `${this.command} ${this.args.join(' ')}\n--- ${this.name} log tail ---\n${this.tail()}`);
      }
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
        await res.arrayBuffer();
        if (res.status === 200) return;
      } catch { /* not listening yet */ }
      if (Date.now() >= deadline) {
        throw new Error(`${this.name} not ready at ${url} within ${timeout} ms\n--- ${this.name} log tail ---\n${this.tail()}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop() {
    if (this.exitInfo) return this.exitInfo;
    this.proc.kill('SIGTERM');
    let timer;
    const timedOut = new Promise((r) => { timer = setTimeout(() => r(null), STOP_TIMEOUT_MS); });
    const result = await Promise.race([this.exited, timedOut]);
    clearTimeout(timer);
    if (result) return result;
    this.proc.kill('SIGKILL');
    return this.exited;
  }
}

// Records every POST (Alertmanager webhook notifications) with its path, arrival time and JSON
// body. Listens on 127.0.0.1 port 0.
export async function startWebhookReceiver() {
  const notifications = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      let body;
      try {
        body = JSON.parse(text);
      } catch {
        body = { unparsable: text };
      }
      notifications.push({ path: req.url, method: req.method, at: Date.now(), body });
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('ok\n');
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    notifications,
    base: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    }),
    // One line per notification, for failure messages.
    summary() {
      if (notifications.length === 0) return '  (no notifications received)';
      return notifications.map((n) => {
        const b = n.body;
        const alerts = (b.alerts || []).map((a) => `${a.labels?.alertname}{${Object.entries(a.labels || {})
          .filter(([k]) => k !== 'alertname').map(([k, v]) => `${k}=${v}`).join(',')}}:${a.status}`);
        return `  +${n.at} ${n.path} receiver=${b.receiver} status=${b.status} groupKey=${b.groupKey} ` +
          `alerts=[${alerts.join(' ')}]`;
      }).join('\n');
    },
  };
}
