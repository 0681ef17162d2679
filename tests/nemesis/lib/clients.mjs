// Nemesis clients: raw Faktory connections (interop/lib/fwp.mjs) that record every operation,
// with its reply and the client's send and receive times, into a History (the checker's input,
// lib/checker.mjs). Each client keeps one connection to its node and reopens it when the node
// closes it; a reply that does not come within `replyTimeoutMs` is recorded as "timeout" and the
// connection is reopened (what a Faktory worker does).
//
//   const h = new History();
//   const w = new Worker(h, 'w1', node, { queues: ['default'], workMs: 5, replyTimeoutMs });
//   w.run();  ...  await w.stop();
import fs from 'node:fs';

import { RawConn } from '../../interop/lib/fwp.mjs';

export const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export class History {
  constructor() {
    this.ops = [];
  }

  record(op) {
    this.ops.push(op);
    return op;
  }

  // A fault window: `fn` runs between the window's start and end.
  async fault(name, fn) {
    const op = this.record({ op: 'fault', name, t0: now(), t1: null });
    try {
      return await fn();
    } finally {
      op.t1 = now();
    }
  }

  write(file) {
    fs.writeFileSync(file, `${this.ops.map((o) => JSON.stringify(o)).join('\n')}\n`);
  }
}

// A reply as the history keeps it: "OK", the error text, "null", or the bulk string.
function replyText(r) {
  if (r.type === '+') return r.text;
  if (r.type === '-') return r.text.startsWith('ERR ') ? `ERR ${r.text.slice(4)}` : r.text;
  if (r.type === 'null') return 'null';
  return r.text;
}

// Errors after which the same command is sent again: the node could not reach its store, or the
// connection went away before a reply.
export function isTransient(reply) {
  return reply === 'timeout' || reply.startsWith('closed') || /store unavailable|redis/i.test(reply);
}

class Connection {
  constructor(name, node, { wid = null, replyTimeoutMs }) {
    this.name = name;
    this.node = node;
    this.wid = wid;
    this.replyTimeoutMs = replyTimeoutMs;
    this.conn = null;
  }

  async open() {
    if (this.conn && !this.conn.isClosed) return this.conn;
    this.conn?.destroy();
    this.conn = null;
    const c = await RawConn.open(this.node.port);
    try {
      await c.hello(this.wid ? { wid: this.wid } : {});
    } catch (e) {
      c.destroy();
      throw e;
    }
    this.conn = c;
    return c;
  }

  // Sends `line`; resolves to the reply's text ("timeout", "closed: ..." when none came).
  async call(line) {
    try {
      const c = await this.open();
      return replyText(await c.call(line, this.replyTimeoutMs));
    } catch (e) {
      this.close();
      return /no reply within/.test(e.message) ? 'timeout' : `closed: ${e.message}`;
    }
  }

  close() {
    this.conn?.destroy();
    this.conn = null;
  }
}

class Loop {
  constructor(history, name, node, options) {
    this.h = history;
    this.name = name;
    this.node = node;
    this.options = options;
    this.conn = new Connection(name, node, { ...options, wid: options.wid ?? null });
    this.stopping = false;
    this.done = null;
  }

  // step(n): the loop's n-th turn.
  run() {
    this.done = (async () => {
      for (let n = 0; !this.stopping; n += 1) await this.step(n);
    })();
    return this;
  }

  // `now`: also close the connection (a FETCH blocked on the server returns at once).
  async stop({ now: closeNow = false } = {}) {
    this.stopping = true;
    if (closeNow) this.conn.close();
    await this.done;
    this.conn.close();
  }

  // Sends `line`, recording {op, ...fields, reply, t0, t1}; returns the record.
  async timed(op, line, fields = {}) {
    const t0 = now();
    const reply = await this.conn.call(line);
    return this.h.record({ op, c: this.name, node: this.node.label, ...fields, reply, t0, t1: now() });
  }

  // The same command until it is answered with something other than a transient error, or until
  // `giveUpAt` (a time from now()).
  async untilAnswered(op, line, fields, giveUpAt = Infinity) {
    for (;;) {
      const r = await this.timed(op, line, fields);
      if (!isTransient(r.reply) || now() > giveUpAt) return r;
      await sleep(100);
    }
  }
}

// Faktory workers send BEAT every 15 s; a node drops a worker silent for 60 s
// (worker_timeout_seconds) and closes its connections.
const BEAT_EVERY_MS = 15_000;

// FETCHes from `queues`, holds each job `workMs`, ACKs it (again while the answer is transient);
// BEATs every 15 s between FETCHes.
export class Worker extends Loop {
  constructor(history, name, node, options) {
    super(history, name, node, { ...options, wid: `nemesis-${name}` });
    this.lastBeat = now();
  }

  async step() {
    if (now() - this.lastBeat > BEAT_EVERY_MS) {
      this.lastBeat = now();
      await this.conn.call(`BEAT ${JSON.stringify({ wid: this.options.wid })}`);
    }
    const t0 = now();
    const reply = await this.conn.call(`FETCH ${this.options.queues.join(' ')}`);
    const t1 = now();
    if (reply === 'null' || reply.startsWith('ERR') || reply === 'timeout' || reply.startsWith('closed')) {
      this.h.record({ op: 'fetch', c: this.name, node: this.node.label, jid: null, reply, t0, t1 });
      if (reply !== 'null') await sleep(100);
      return;
    }
    const job = JSON.parse(reply);
    this.h.record({ op: 'fetch', c: this.name, node: this.node.label, jid: job.jid, jobtype: job.jobtype, queue: job.queue, t0, t1 });
    await sleep(this.options.workMs);
    await this.untilAnswered('ack', `ACK ${JSON.stringify({ jid: job.jid })}`, { jid: job.jid }, now() + this.options.ackGiveUpMs);
  }
}

// PUSHes jobs `PREFIX-N` (every `throttledEvery`th to the throttled queue), one every `everyMs`;
// a push answered with a transient error is sent again with the same jid (PUSH is idempotent).
export class Producer extends Loop {
  async step(n) {
    const queue = this.options.throttledEvery && n % this.options.throttledEvery === 0 ? this.options.throttledQueue : 'default';
    const job = { jid: `nemesis-${this.name}-${n}`, jobtype: 'Work', args: [n], queue };
    await this.untilAnswered('push', `PUSH ${JSON.stringify(job)}`, { jid: job.jid, queue }, now() + this.options.pushGiveUpMs);
    await sleep(this.options.everyMs);
  }
}

// Batches of `members` jobs with a success callback: BATCH NEW, the members' PUSHes, COMMIT.
// A batch whose NEW or member PUSH is not answered is left uncommitted (its members still count).
export class Batcher extends Loop {
  async step(k) {
    const callback = `nemesis-${this.name}-cb-${k}`;
    const spec = { success: { jid: callback, jobtype: 'BatchDone', args: [k], queue: 'default' } };
    const created = await this.timed('batch-new', `BATCH NEW ${JSON.stringify(spec)}`, {});
    if (!created.reply.startsWith('b-')) return sleep(200);
    const bid = created.reply;
    const members = [];
    for (let m = 0; m < this.options.members; m += 1) {
      const job = { jid: `nemesis-${this.name}-${k}-m${m}`, jobtype: 'Work', args: [m], queue: 'default', custom: { bid } };
      const r = await this.untilAnswered('push', `PUSH ${JSON.stringify(job)}`, { jid: job.jid, queue: 'default', batch: bid }, now() + 5_000);
      if (r.reply !== 'OK') return sleep(200);
      members.push(job.jid);
    }
    const commit = await this.untilAnswered('batch-commit', `BATCH COMMIT ${bid}`, { bid }, now() + 5_000);
    if (commit.reply === 'OK') this.h.record({ op: 'batch', c: this.name, bid, callback, members, reply: 'OK', t0: created.t0, t1: commit.t1 });
    return sleep(this.options.everyMs);
  }
}

// Unique jobs: `Uniq` with args [k % keys], unique_for `uniqueFor` s until success, each push a
// new jid; NOTUNIQUE answers are recorded as they come.
export class UniquePusher extends Loop {
  async step(n) {
    const k = n % this.options.keys;
    const job = { jid: `nemesis-${this.name}-${n}`, jobtype: 'Uniq', args: [k], queue: 'default', custom: { unique_for: this.options.uniqueFor } };
    await this.untilAnswered('push', `PUSH ${JSON.stringify(job)}`, { jid: job.jid, queue: 'default', unique: `Uniq|default|${k}` }, now() + 5_000);
    await sleep(this.options.everyMs);
  }
}
