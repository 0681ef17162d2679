// Several `bulkhead serve` nodes on one Redis namespace, for the cluster tests.
//
//   const nodes = await startNodes(defer, 2, { store: redis.url, config: 'durability = …\n' });
//   await nodeIdOf(redis, nodes[1])   // its id in {NS}:nodes (host-PID-suffix)
//
// Nodes get short liveness timings (a kill -9'd node is presumed dead after 1 s and reaped within
// a further 200 ms), so that a test need not wait the production 20 s.
import fs from 'node:fs';
import https from 'node:https';

import faktory from 'faktory-worker';

import { startServer, waitFor } from '../../interop/lib/server.mjs';

export const NAMESPACE = 'clu';
export const LIVENESS_CONFIG = `redis_namespace = "${NAMESPACE}"
redis_heartbeat_ms = 200
redis_heartbeat_ttl_ms = 1000
redis_reap_ms = 200
`;

export function key(name) {
  return `{${NAMESPACE}}:${name}`;
}

export async function startNodes(defer, count, { store, config = '' }) {
  const nodes = [];
  for (let i = 0; i < count; i += 1) {
    nodes.push(await startServer(defer, { store, config: LIVENESS_CONFIG + config }));
  }
  return nodes;
}

// The node id `node` registered in {NS}:nodes (MakeNodeId: host-PID-suffix).
export async function nodeIdOf(redis, node) {
  const pid = node.proc.pid;
  return waitFor(async () => {
    const ids = (await redis.cli('SMEMBERS', key('nodes'))).split('\n');
    return ids.find((id) => id.includes(`-${pid}-`));
  }, { timeout: 10_000, message: `node with pid ${pid} registered in ${key('nodes')}` });
}

// faktory-worker prints every refused connection (console.error); a dead node refuses many.
// Counts them in client.connectErrors instead.
function quiet(client) {
  client.connectErrors = 0;
  const count = () => { client.connectErrors += 1; };
  client.pool.removeAllListeners('factoryCreateError');
  client.pool.on('factoryCreateError', count);
  client.connectionFactory.onConnectionError = count;
  return client;
}

export function newClient(defer, url) {
  const client = quiet(new faktory.Client({ url }));
  defer(() => client.close());
  return client;
}

// A faktory-worker Worker whose errors (a dead node's refused connections) are counted, not
// printed. stopOnce() is safe to call twice.
export function newWorker(defer, url, { concurrency, registry, queues }) {
  const worker = new faktory.Worker({ url, concurrency, registry, queues, timeout: 20 });
  quiet(worker.client);
  worker.removeAllListeners('error');
  worker.errors = 0;
  worker.on('error', () => { worker.errors += 1; });
  let stopped = null;
  worker.stopOnce = () => {
    stopped ??= worker.stop();
    return stopped;
  };
  defer(() => worker.stopOnce());
  return worker;
}

// Runs `fn(item)` over `items` with at most `limit` calls in flight.
export async function eachLimited(items, limit, fn) {
  let next = 0;
  const run = async () => {
    while (next < items.length) {
      const item = items[next];
      next += 1;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: limit }, run));
}

// INFO through `client`: queue sizes, sets and counters (cluster-wide on a shared store).
export async function info(client) {
  const i = await client.info();
  return {
    processed: i.faktory.total_processed,
    failures: i.faktory.total_failures,
    queue: (name) => i.faktory.queues?.[name] ?? 0,
    retries: i.faktory.sets.retries,
    dead: i.faktory.sets.dead,
    working: i.faktory.sets.working,
  };
}

// An HTTPS server on a free loopback port with pki's server certificate (for 127.0.0.1), each
// request handled by `handler`; closed (its connections too) when the test's cleanup runs.
// Resolves to the server; `url(path)` of the result names a path on it.
export async function listenHttps(defer, pki, handler) {
  const tlsFiles = { key: fs.readFileSync(pki.file('server.key')), cert: fs.readFileSync(pki.file('server.crt')) };
  const server = https.createServer(tlsFiles, handler);
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  defer(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  });
  return { server, url: (p) => `https://127.0.0.1:${server.address().port}${p}` };
}
