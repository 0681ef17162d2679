// ReceiverPool: the receiving hosts split over `processes` child processes (receiver_process.mjs),
// host i served by process i % processes, all on one port. Calls go to every process; figures
// come back summed and arrival times merged (each delivery arrives at exactly one process).
import { fork } from 'node:child_process';
import net from 'node:net';

const CHILD = new URL('./receiver_process.mjs', import.meta.url);

// A port free on 127.0.0.1 (the receivers then bind it on every host address; start() tries
// another one if some address has it taken).
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

class Child {
  constructor() {
    this.proc = fork(CHILD, [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.next = 1;
    this.pending = new Map();
    this.proc.on('message', ({ id, result, error, code }) => {
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      if (error) p.reject(Object.assign(new Error(error), { code }));
      else p.resolve(result);
    });
    this.proc.on('exit', (code, signal) => {
      for (const p of this.pending.values()) p.reject(new Error(`receiver exited (${code ?? signal})`));
      this.pending.clear();
    });
  }

  call(cmd, arg) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.proc.send({ id, cmd, arg });
    });
  }
}

function sumStats(all) {
  const total = structuredClone(all[0]);
  for (const s of all.slice(1)) {
    for (const [k, v] of Object.entries(s)) {
      if (typeof v === 'number') total[k] += v;
    }
    for (const [k, v] of Object.entries(s.checked)) total.checked[k] += v;
    total.failureSamples.push(...s.failureSamples);
  }
  return total;
}

export class ReceiverPool {
  // hosts: every receiving host; tls: {key, cert}; protocol: 'h2' | 'http1'.
  constructor({ hosts, tls, processes = 2, protocol = 'h2' }) {
    this.hosts = hosts;
    this.tls = tls;
    this.protocol = protocol;
    this.count = Math.max(1, processes);
    this.children = [];
    this.port = 0;
    this.pids = [];
  }

  async start() {
    for (let attempt = 0; ; attempt += 1) {
      this.port = await freePort();
      this.children = Array.from({ length: this.count }, () => new Child());
      try {
        const started = await Promise.all(this.children.map((c, i) => c.call('start', {
          hosts: this.hosts.filter((_, h) => h % this.count === i), port: this.port, tls: this.tls,
          protocol: this.protocol,
        })));
        this.pids = started.map((s) => s.pid);
        return this;
      } catch (e) {
        await this.stop();
        if (e.code !== 'EADDRINUSE' || attempt >= 5) throw e;
      }
    }
  }

  all(cmd, arg) {
    return Promise.all(this.children.map((c) => c.call(cmd, arg)));
  }

  configure(config) { return this.all('configure', config); }

  reset(capacity) { return this.all('reset', capacity); }

  async stats() { return sumStats(await this.all('stats')); }

  // {activitypub: Float64Array, webpush: Float64Array}: arrival time by delivery index, 0 = none.
  async arrivals() {
    const parts = await this.all('arrivals');
    const merged = {};
    for (const kind of Object.keys(parts[0])) {
      const out = new Float64Array(parts[0][kind].length);
      for (const p of parts) p[kind].forEach((t, i) => { if (t > 0) out[i] = t; });
      merged[kind] = out;
    }
    return merged;
  }

  async stop() {
    await Promise.allSettled(this.children.map((c) => c.call('stop')));
    for (const c of this.children) if (c.proc.connected) c.proc.disconnect();
    await Promise.all(this.children.map((c) => (c.proc.exitCode !== null || c.proc.signalCode
      ? null : new Promise((r) => c.proc.once('exit', r)))));
    this.children = [];
  }
}
