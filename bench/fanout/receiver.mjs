// Receiver: the receiving side of the fan-out, inboxes and push services in one process. One TLS
// server (node:http2 with HTTP/1.1 fallback, as nginx with `http2 on` or a push service; or
// node:https alone with protocol 'http1') is fed by one plain listener per host address, so each
// host name resolves to its own 127.x address and every TCP connection is counted where it lands.
//
// Per request: the Digest of every activitypub delivery is checked, the draft-cavage signature of
// a sample (every `sampleEvery`-th); every push must name aes128gcm, a TTL and a VAPID
// Authorization, a sample is decrypted with the subscriber's keys and its VAPID token verified
// (checks.mjs). A request that fails is answered 401/400 and counted with its reason (one whose
// body is shorter than its Content-Length was given up by the client: counted apart). A request
// that passes is answered after `delayMs` (202 for inboxes, 201 for push services, RFC 8030 §5),
// or never at a host named in `stuck`. The arrival time of each delivery (body fully read,
// CLOCK_MONOTONIC, comparable across processes) is kept by delivery index.
//
// Used in-process by tests/interop/fanout_receivers.test.mjs and, one per CPU-sized share of the
// hosts, in child processes by the benchmark (receiver_process.mjs).
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';

import { checkDigest, checkPush, checkSignature, checkVapid } from './checks.mjs';
import { inboxIndex, pushIndex } from './topology.mjs';

// Milliseconds on CLOCK_MONOTONIC (libuv's hrtime), one clock for every process on the machine
// (Ruby reads it too, sidekiq/push.rb), which a step of the wall clock does not move.
export const clockMs = () => Number(process.hrtime.bigint()) / 1e6;

const MAX_FAILURE_SAMPLES = 5;

function freshStats() {
  return {
    connections: 0, handshakes: 0, resumed: 0, h2Handshakes: 0, tlsErrors: 0, requests: 0,
    healthy: 0, delivered: 0, stuckHeld: 0, duplicates: 0, unknown: 0, incomplete: 0,
    checked: { digest: 0, signature: 0, push: 0, vapid: 0 },
    failures: 0, failureSamples: [],
  };
}

export class Receiver {
  // hosts: [{name, ip, index, kind: 'inbox'|'push'}]; port: the same for every host;
  // tls: {key, cert} PEM; protocol: 'h2' (h2 + http/1.1 by ALPN) or 'http1'.
  constructor({ hosts, port, tls, protocol = 'h2' }) {
    this.hosts = hosts;
    this.port = port;
    this.tls = tls;
    this.protocol = protocol;
    this.byName = new Map(hosts.map((h) => [h.name, h]));
    this.listeners = [];
    this.sockets = new Set();
    this.config = { delayMs: 0, stuck: new Set(), sampleEvery: 1, inboxesPerHost: 20 };
    this.reset({ activitypub: 0, webpush: 0 });
  }

  // delayMs, stuck (host names), sampleEvery, inboxesPerHost, publicKeyPem, keyId,
  // pushKeys ([{privateKey, auth}], subscription k uses k % length), pushPayload.
  configure(config) {
    this.config = { ...this.config, ...config, stuck: new Set(config.stuck ?? this.config.stuck) };
  }

  // Zeroes the figures and makes room for `capacity` deliveries of each kind.
  reset(capacity) {
    this.counter = 0;
    this.stats = freshStats();
    this.arrivals = {
      activitypub: new Float64Array(capacity.activitypub ?? 0),
      webpush: new Float64Array(capacity.webpush ?? 0),
    };
  }

  async start() {
    const handler = (req, res) => this.onRequest(req, res);
    const options = { key: this.tls.key, cert: this.tls.cert };
    this.server = this.protocol === 'h2'
      ? http2.createSecureServer({ ...options, allowHTTP1: true }, handler)
      : https.createServer(options, handler);
    this.server.keepAliveTimeout = 75_000;  // nginx's default keepalive_timeout
    this.server.on('secureConnection', (s) => {
      this.stats.handshakes += 1;
      if (s.isSessionReused()) this.stats.resumed += 1;
      if (s.alpnProtocol === 'h2') this.stats.h2Handshakes += 1;
    });
    this.server.on('tlsClientError', () => { this.stats.tlsErrors += 1; });
    for (const host of this.hosts) {
      const listener = net.createServer((sock) => this.onConnection(sock));
      await new Promise((resolve, reject) => {
        listener.once('error', reject);
        listener.listen({ port: this.port, host: host.ip, backlog: 4096 }, () => {
          listener.off('error', reject);
          resolve();
        });
      });
      this.listeners.push(listener);
    }
  }

  // Closes the listeners and every connection still open (a listener's close waits for them).
  async stop() {
    const closed = this.listeners.map((l) => new Promise((r) => l.close(() => r())));
    this.listeners = [];
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await Promise.all(closed);
    if (this.server) await new Promise((r) => this.server.close(() => r()));
    this.server = null;
  }

  onConnection(sock) {
    this.stats.connections += 1;
    this.sockets.add(sock);
    sock.on('close', () => this.sockets.delete(sock));
    sock.on('error', () => {});
    this.server.emit('connection', sock);
  }

  onRequest(req, res) {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('error', () => {});
    req.on('end', () => this.onComplete(req, res, Buffer.concat(chunks)));
  }

  onComplete(req, res, body) {
    const at = clockMs();
    this.stats.requests += 1;
    // Over HTTP/2 the Host is the :authority (a front proxy passes it on as Host).
    const authority = req.headers[':authority'] ?? req.headers.host ?? '';
    const headers = { ...req.headers, host: authority };
    const name = authority.replace(/:\d+$/, '');
    const host = this.byName.get(name);
    const path = req.url;
    const index = !host || req.method !== 'POST' ? -1
      : host.kind === 'inbox' ? inboxIndex(host.index, path, this.config.inboxesPerHost)
        : pushIndex(path);
    const kind = host?.kind === 'inbox' ? 'activitypub' : 'webpush';
    // Fewer bytes than the Content-Length: the client reset the stream or closed the connection
    // before its body was sent (it gave up on the attempt, and knows it). Not a delivery.
    const length = req.headers['content-length'];
    if (length !== undefined && Number(length) !== body.length) {
      this.stats.incomplete += 1;
      return;
    }
    if (index < 0 || index >= this.arrivals[kind].length) {
      this.stats.unknown += 1;
      this.fail(`${req.method} ${authority}${path}: no such delivery`);
      this.answer(res, 404, 0);
      return;
    }
    const problem = kind === 'activitypub'
      ? this.checkActivity(req, path, headers, body)
      : this.checkWebPush(index, headers, body, `https://${authority}`);
    if (problem) {
      this.fail(`${authority}${path}: ${problem}`);
      this.answer(res, kind === 'activitypub' ? 401 : 400, 0);
      return;
    }
    if (this.arrivals[kind][index] > 0) {
      this.stats.duplicates += 1;
    } else {
      this.arrivals[kind][index] = at;
      if (!this.config.stuck.has(name)) this.stats.delivered += 1;
    }
    if (this.config.stuck.has(name)) {
      this.stats.stuckHeld += 1;  // never answered: the client's deadline ends it
      return;
    }
    this.stats.healthy += 1;
    this.answer(res, kind === 'activitypub' ? 202 : 201, this.config.delayMs,
      kind === 'webpush' ? { location: `/m/${index}` } : {});
  }

  sampled() {
    this.counter += 1;
    return this.counter % this.config.sampleEvery === 0;
  }

  checkActivity(req, path, headers, body) {
    if (headers['content-type'] !== 'application/activity+json') {
      return `Content-Type ${headers['content-type']}`;
    }
    const digest = checkDigest(headers, body);
    this.stats.checked.digest += 1;
    if (digest || !this.sampled()) return digest;
    this.stats.checked.signature += 1;
    return checkSignature({ method: req.method, url: path, headers }, this.config.publicKeyPem,
      this.config.keyId);
  }

  checkWebPush(index, headers, body, origin) {
    if (headers['content-encoding'] !== 'aes128gcm' || !headers.ttl ||
        !(headers.authorization ?? '').startsWith('vapid ')) {
      return 'not an RFC 8291/8292 push (Content-Encoding aes128gcm, TTL, vapid Authorization)';
    }
    if (!this.sampled()) return null;
    const keys = this.config.pushKeys;
    this.stats.checked.push += 1;
    const decrypted = checkPush(headers, body, keys[index % keys.length], this.config.pushPayload);
    if (decrypted) {
      return `${decrypted} (body ${body.length} bytes, Content-Length ${headers['content-length'] ?? 'none'}, ` +
        `record header ${body.subarray(0, 21).toString('hex')}, key ${index % keys.length})`;
    }
    this.stats.checked.vapid += 1;
    return checkVapid(headers, origin);
  }

  fail(message) {
    this.stats.failures += 1;
    if (this.stats.failureSamples.length < MAX_FAILURE_SAMPLES) this.stats.failureSamples.push(message);
  }

  answer(res, status, delayMs, headers = {}) {
    const send = () => {
      if (res.destroyed || res.writableEnded || res.stream?.destroyed) return;
      try {
        res.writeHead(status, headers);
        res.end();
      } catch {
        // the client gave up on the request meanwhile
      }
    };
    if (delayMs > 0) setTimeout(send, delayMs);
    else send();
  }
}
