// A raw FWP connection over node:net for transcript-style tests: send exact bytes, read exact
// RESP2 replies, observe the close.
//
//   const c = await RawConn.open(port);         // reads the +HI greeting
//   await c.hello();                            // HELLO (with pwdhash when asked)
//   assert.deepEqual(await c.call('FLUSH'), { type: '+', text: 'OK' });
//   c.write('PUSH {"jid":'); ...; await c.closed(3000);
import crypto from 'node:crypto';
import net from 'node:net';

export const DEFAULT_REPLY_TIMEOUT_MS = 10_000;

export function pwdhash(password, salt, iterations) {
  let d = crypto.createHash('sha256').update(`${password}${salt}`).digest();
  for (let i = 1; i < iterations; i += 1) d = crypto.createHash('sha256').update(d).digest();
  return d.toString('hex');
}

export class RawConn {
  constructor(sock) {
    this.sock = sock;
    this.buf = Buffer.alloc(0);
    this.waiters = [];
    this.isClosed = false;
    this.closeWaiters = [];
    sock.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.pump();
    });
    const onClose = () => {
      if (this.isClosed) return;
      this.isClosed = true;
      this.pump();
      for (const w of this.closeWaiters) w();
      this.closeWaiters = [];
    };
    sock.on('close', onClose);
    sock.on('end', onClose);
    sock.on('error', () => onClose());
  }

  static open(port, { host = '127.0.0.1', greeting = true } = {}) {
    return new Promise((resolve, reject) => {
      const sock = net.connect({ port, host });
      sock.once('error', reject);
      sock.once('connect', async () => {
        sock.removeListener('error', reject);
        const conn = new RawConn(sock);
        if (!greeting) return resolve(conn);
        try {
          const hi = await conn.reply();
          if (hi.type !== '+' || !hi.text.startsWith('HI ')) {
            throw new Error(`unexpected greeting ${JSON.stringify(hi)}`);
          }
          conn.greetingText = hi.text;
          conn.greeting = JSON.parse(hi.text.slice(3));
          resolve(conn);
        } catch (e) {
          sock.destroy();
          reject(e);
        }
      });
    });
  }

  // Parses one complete reply from the buffer, or returns null when more bytes are needed.
  parseOne() {
    const nl = this.buf.indexOf('\r\n');
    if (nl < 0) return null;
    const line = this.buf.subarray(0, nl).toString();
    const type = line[0];
    if (type === '+' || type === '-') {
      this.buf = this.buf.subarray(nl + 2);
      return { type, text: line.slice(1) };
    }
    if (type === '$') {
      const len = Number(line.slice(1));
      if (len === -1) {
        this.buf = this.buf.subarray(nl + 2);
        return { type: 'null', text: null };
      }
      if (this.buf.length < nl + 2 + len + 2) return null;
      const text = this.buf.subarray(nl + 2, nl + 2 + len).toString();
      this.buf = this.buf.subarray(nl + 2 + len + 2);
      return { type: '$', text };
    }
    this.buf = this.buf.subarray(nl + 2);
    return { type: '?', text: line };
  }

  pump() {
    while (this.waiters.length > 0) {
      const r = this.parseOne();
      if (r) {
        this.waiters.shift().resolve(r);
        continue;
      }
      if (this.isClosed) {
        const rest = this.buf.toString();
        for (const w of this.waiters) w.reject(new Error(`connection closed before a reply (unparsed: ${JSON.stringify(rest)})`));
        this.waiters = [];
      }
      break;
    }
  }

  // The next reply {type: '+'|'-'|'$'|'null', text}. Rejects on timeout or close.
  reply(timeout = DEFAULT_REPLY_TIMEOUT_MS) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new Error(`no reply within ${timeout} ms`));
      }, timeout);
      const w = {
        resolve: (r) => { clearTimeout(timer); resolve(r); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      };
      this.waiters.push(w);
      this.pump();
    });
  }

  write(data) {
    this.sock.write(data);
  }

  // Sends `line` + CRLF and returns the next reply.
  call(line, timeout) {
    this.write(`${line}\r\n`);
    return this.reply(timeout);
  }

  async hello({ password, wid } = {}) {
    const hello = { v: 2, hostname: 'interop-raw' };
    if (wid) Object.assign(hello, { wid, pid: process.pid, labels: [] });
    if (this.greeting && this.greeting.s) hello.pwdhash = pwdhash(password || '', this.greeting.s, this.greeting.i);
    const r = await this.call(`HELLO ${JSON.stringify(hello)}`);
    if (r.type !== '+' || r.text !== 'OK') throw new Error(`HELLO rejected: ${JSON.stringify(r)}`);
    return r;
  }

  // Resolves with the time it took once the server closed the connection; rejects after timeout.
  closed(timeout = DEFAULT_REPLY_TIMEOUT_MS) {
    const start = Date.now();
    if (this.isClosed) return Promise.resolve(0);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`connection still open after ${timeout} ms`)), timeout);
      this.closeWaiters.push(() => { clearTimeout(timer); resolve(Date.now() - start); });
    });
  }

  destroy() {
    this.sock.destroy();
  }
}
