// Processes the fan-out benchmark starts (bulkhead, redis-server, Sidekiq, perf) and what it reads
// about them from /proc: CPU seconds (utime + stime of every thread, /proc/PID/stat) and peak
// resident memory (VmHWM, /proc/PID/status).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

export function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;  // utime, stime (fields 14, 15)
}

export function peakRssKb(pid) {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls `fn` until it returns a truthy value; throws `message` after `timeoutMs`.
export async function waitUntil(fn, { timeoutMs = 30_000, intervalMs = 50, message = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${message}`);
    await sleep(intervalMs);
  }
}

export function canConnect(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host });
    const done = (ok) => {
      sock.destroy();
      resolve(ok);
    };
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

// Runs a command to its end; {code, stdout, stderr}.
export function run(cmd, args, options = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => { stdout += d; });
    proc.stderr.on('data', (d) => { stderr += d; });
    proc.on('error', reject);
    proc.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// A long-running child: its output goes to `logFile` and the last 64 KB are kept for messages.
export class Service {
  constructor(name, cmd, args, { env = process.env, cwd, logFile } = {}) {
    Object.assign(this, { name, cmd, args, env, cwd, logFile });
    this.output = '';
    this.proc = null;
    this.exited = null;
  }

  start() {
    const log = this.logFile ? fs.openSync(this.logFile, 'a') : null;
    this.proc = spawn(this.cmd, this.args, { env: this.env, cwd: this.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (d) => {
      this.output = (this.output + d).slice(-65536);
      if (log !== null) fs.writeSync(log, d);
    };
    this.proc.stdout.on('data', keep);
    this.proc.stderr.on('data', keep);
    this.exited = new Promise((resolve) => {
      this.proc.once('exit', (code, signal) => {
        if (log !== null) fs.closeSync(log);
        this.proc = null;
        resolve({ code, signal });
      });
    });
    return this;
  }

  get pid() { return this.proc?.pid; }

  get running() { return this.proc !== null; }

  async waitFor(check, what, timeoutMs = 30_000) {
    await waitUntil(async () => {
      if (!this.running) throw new Error(`${this.name} exited while waiting for ${what}:\n${this.output}`);
      return check();
    }, { timeoutMs, message: `${this.name}: ${what}\n${this.output}` });
  }

  waitPort(port) { return this.waitFor(() => canConnect(port), `port ${port}`); }

  waitOutput(regex) { return this.waitFor(() => regex.test(this.output), `output ${regex}`); }

  // `signal`, then SIGKILL after `graceMs`.
  async stop(signal = 'SIGTERM', graceMs = 10_000) {
    if (!this.proc) return;
    this.proc.kill(signal);
    const timer = setTimeout(() => this.proc?.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
