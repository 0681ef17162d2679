// A TCP fault injector between one bulkhead node and Redis (or any TCP service), driven by the
// test:
//
//   const p = await startProxy(defer, redis.port);   // listens on a free loopback port
//   p.latency(200);      // every chunk, both ways, delivered 200 ms after it arrived
//   p.trickle(16, 50);   // at most 16 bytes every 50 ms each way
//   p.blackhole();       // connections accepted, nothing forwarded either way (held, as TCP
//                        // would keep retransmitting), new connections too
//   p.reset();           // every open connection closed with a TCP RST, both sides
//   p.heal();            // back to forwarding at once; what a blackhole held is delivered
//
// Order is kept per direction; faults change how the bytes flow, never their content.
import net from 'node:net';

class Pipe {
  constructor(proxy, from, to, rewrite = (d) => d) {
    this.proxy = proxy;
    this.to = to;
    this.queue = [];  // {data, at}
    this.timer = null;
    from.on('data', (data) => {
      this.queue.push({ data: rewrite(data), at: Date.now() });
      this.pump();
    });
  }

  pump() {
    if (this.timer || this.to.destroyed) return;
    const p = this.proxy;
    while (this.queue.length > 0 && p.mode !== 'blackhole') {
      const head = this.queue[0];
      const wait = head.at + p.latencyMs - Date.now();
      if (wait > 0) {
        this.timer = setTimeout(() => { this.timer = null; this.pump(); }, wait);
        return;
      }
      if (p.trickleBytes > 0) {
        this.to.write(head.data.subarray(0, p.trickleBytes));
        head.data = head.data.subarray(p.trickleBytes);
        if (head.data.length === 0) this.queue.shift();
        this.timer = setTimeout(() => { this.timer = null; this.pump(); }, p.trickleEveryMs);
        return;
      }
      this.queue.shift();
      this.to.write(head.data);
    }
  }

  stop() {
    clearTimeout(this.timer);
    this.timer = null;
    this.queue = [];
  }
}

export class FaultProxy {
  // rewrite: applied to each chunk from the target (see sentinelRewrite).
  constructor(targetPort, { targetHost = '127.0.0.1', rewrite } = {}) {
    this.rewrite = rewrite;
    this.targetPort = targetPort;
    this.targetHost = targetHost;
    this.mode = 'pass';
    this.latencyMs = 0;
    this.trickleBytes = 0;
    this.trickleEveryMs = 0;
    this.conns = new Set();  // {client, upstream, pipes}
    this.closeAtHeal = new Set();
    this.server = net.createServer((client) => this.accept(client));
    this.port = 0;
  }

  start() {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        this.port = this.server.address().port;
        resolve(this);
      });
    });
  }

  get endpoint() {
    return `127.0.0.1:${this.port}`;
  }

  accept(client) {
    const upstream = net.connect({ port: this.targetPort, host: this.targetHost });
    const conn = { client, upstream, pipes: [] };
    conn.pipes.push(new Pipe(this, client, upstream), new Pipe(this, upstream, client, this.rewrite));
    this.conns.add(conn);
    const close = () => {
      // Inside a blackhole the node must not learn that the far side went away: held until heal.
      if (this.mode === 'blackhole') {
        this.closeAtHeal.add(close);
        return;
      }
      if (!this.conns.delete(conn)) return;
      for (const pipe of conn.pipes) pipe.stop();
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) {
      s.setNoDelay(true);
      s.on('error', close);
      s.on('close', close);
    }
  }

  pumpAll() {
    for (const c of this.conns) for (const p of c.pipes) p.pump();
  }

  latency(ms) {
    this.latencyMs = ms;
    this.pumpAll();
  }

  trickle(bytes, everyMs) {
    this.trickleBytes = bytes;
    this.trickleEveryMs = everyMs;
    this.pumpAll();
  }

  blackhole() {
    this.mode = 'blackhole';
  }

  reset() {
    for (const c of [...this.conns]) {
      for (const p of c.pipes) p.stop();
      c.client.resetAndDestroy();
      c.upstream.resetAndDestroy();
    }
  }

  heal() {
    this.mode = 'pass';
    this.latencyMs = 0;
    this.trickleBytes = 0;
    this.pumpAll();
    for (const close of this.closeAtHeal) close();
    this.closeAtHeal.clear();
  }

  close() {
    this.heal();
    this.reset();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export async function startProxy(defer, targetPort, options = {}) {
  const p = new FaultProxy(targetPort, options);
  defer(() => p.close());
  return p.start();
}

// For a proxy in front of a redis-sentinel: rewrites the ports in its RESP answers (bulk strings
// "$5\r\n6379\r\n", as in the reply to SENTINEL get-master-addr-by-name, the one command bulkhead
// sends a Sentinel) from each Redis's own to the node's proxy for it, so that the node reaches the
// primary the Sentinels name through its proxies too. `ports`: Map real port -> proxy port.
// (A port split across two chunks would pass unchanged; Sentinel answers are a few dozen bytes.)
export function sentinelRewrite(ports) {
  return (data) => {
    let text = data.toString('latin1');
    for (const [real, proxied] of ports) {
      text = text.split(`$${String(real).length}\r\n${real}\r\n`).join(`$${String(proxied).length}\r\n${proxied}\r\n`);
    }
    return Buffer.from(text, 'latin1');
  };
}

// Several proxies driven as one (a node's links to every Redis and Sentinel).
export class ProxyGroup {
  constructor(proxies) {
    this.proxies = proxies;
  }

  latency(ms) { for (const p of this.proxies) p.latency(ms); }

  trickle(bytes, everyMs) { for (const p of this.proxies) p.trickle(bytes, everyMs); }

  blackhole() { for (const p of this.proxies) p.blackhole(); }

  reset() { for (const p of this.proxies) p.reset(); }

  heal() { for (const p of this.proxies) p.heal(); }
}
