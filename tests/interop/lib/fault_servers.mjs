// Local HTTP peers that misbehave on purpose, for the delivery fault tests. Each listens on its own
// free port of 127.0.0.1 (bulkhead's compartment key is host:port, so each is its own host) and
// records every connection it sees, with times from performance.now() (milliseconds, monotonic):
//
//   const s = await startFaultServer(defer, 'silent');
//   s.url('/hook/1')          // http://127.0.0.1:PORT/hook/1 ('https://' for 'tls-hang')
//   s.connections             // [{ openedAt, requestAt, path, closedAt }], in accept order
//   s.requests                // connections whose request head arrived
//   await s.close()           // destroys every connection, stops listening (also done by defer)
//
// Kinds:
//   silent         accepts, reads the request, never answers
//   late           answers 200 after `answerAfterMs` (default 40 s), if the peer is still there
//   drip           sends the status line and headers at once, then one body byte per
//                  `dripEveryMs` (default 5 s) of a `Content-Length: 100` body
//   reset          reads the request head, then resets the connection (TCP RST)
//   tls-hang       accepts TCP, reads the ClientHello, never speaks TLS
//   respond        answers every request with respond(request, index) → { status, headers, body }
//                  (default 200); `requests` also records the request's headers (lowercase
//                  names) and the answer given
//
// A "refused" peer needs no server: closedPort() returns a port nothing listens on.
import http from 'node:http';
import net from 'node:net';
import { performance } from 'node:perf_hooks';

import { freePort } from './server.mjs';

// A port on 127.0.0.1 with no listener (bound once to find it, then closed).
export function closedPort() {
  return freePort();
}

// Starts owner.server on 127.0.0.1 at a port the OS picks, sets owner.port, resolves to owner.
function listenOnLoopback(owner) {
  return new Promise((resolve, reject) => {
    owner.server.once('error', reject);
    owner.server.listen(0, '127.0.0.1', () => {
      owner.port = owner.server.address().port;
      resolve(owner);
    });
  });
}

class RawFaultServer {
  constructor(kind, options) {
    this.kind = kind;
    this.options = options;
    this.connections = [];
    this.sockets = new Set();
    this.timers = new Set();
    this.server = net.createServer((sock) => this.onConnection(sock));
  }

  get requests() {
    return this.connections.filter((c) => c.requestAt !== null);
  }

  url(path = '/') {
    const scheme = this.kind === 'tls-hang' ? 'https' : 'http';
    return `${scheme}://127.0.0.1:${this.port}${path}`;
  }

  listen() {
    return listenOnLoopback(this);
  }

  later(ms, fn) {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
    return timer;
  }

  onConnection(sock) {
    const conn = { openedAt: performance.now(), requestAt: null, path: null, closedAt: null };
    this.connections.push(conn);
    this.sockets.add(sock);
    const own = new Set();  // this connection's timers
    sock.on('error', () => {});
    sock.on('close', () => {
      conn.closedAt = performance.now();
      this.sockets.delete(sock);
      for (const t of own) {
        clearTimeout(t);
        clearInterval(t);
        this.timers.delete(t);
      }
    });
    let head = Buffer.alloc(0);
    sock.on('data', (chunk) => {
      if (conn.requestAt !== null || this.kind === 'tls-hang') return;  // read and ignore the rest
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      conn.requestAt = performance.now();
      conn.path = head.subarray(0, head.indexOf('\r\n')).toString().split(' ')[1] ?? null;
      this.onRequest(sock, own);
    });
  }

  onRequest(sock, own) {
    switch (this.kind) {
      case 'silent':
        return;
      case 'late':
        own.add(this.later(this.options.answerAfterMs ?? 40_000, () => {
          if (!sock.destroyed) sock.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
        }));
        return;
      case 'drip': {
        sock.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n');
        const every = this.options.dripEveryMs ?? 5_000;
        const timer = setInterval(() => {
          if (!sock.destroyed) sock.write('x');
        }, every);
        this.timers.add(timer);
        own.add(timer);
        return;
      }
      case 'reset':
        sock.resetAndDestroy();
        return;
      default:
        throw new Error(`unknown fault server kind ${this.kind}`);
    }
  }

  close() {
    for (const t of this.timers) {
      clearTimeout(t);
      clearInterval(t);
    }
    this.timers.clear();
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

class RespondingServer {
  constructor(options) {
    this.respond = options.respond ?? (() => ({ status: 200 }));
    this.requests = [];
    this.server = http.createServer((req, res) => this.onRequest(req, res));
    this.server.keepAliveTimeout = 60_000;
  }

  get connections() {
    return this.requests;
  }

  url(path = '/') {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  listen() {
    return listenOnLoopback(this);
  }

  onRequest(req, res) {
    const record = {
      requestAt: performance.now(), method: req.method, path: req.url, headers: { ...req.headers },
      answer: null,
    };
    const index = this.requests.length;
    this.requests.push(record);
    req.resume();
    req.on('end', () => {
      const answer = { status: 200, headers: {}, body: '', ...this.respond(record, index) };
      record.answer = answer;
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    });
  }

  close() {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

// Starts a fault server of `kind` (see the top of this file); `defer` (cleanupStack) closes it.
export async function startFaultServer(defer, kind, options = {}) {
  const server = kind === 'respond' ? new RespondingServer(options) : new RawFaultServer(kind, options);
  await server.listen();
  server.kind = kind;
  defer(() => server.close());
  return server;
}
