// Delivery jobs across two `bulkhead serve` nodes on one redis-server namespace: webhook jobs
// pushed through both nodes are delivered to a local HTTPS receiver (its certificate from a
// private CA, trusted through delivery_ca_file; verification stays on) by both nodes' delivery
// engines; one node is killed with SIGKILL mid-run, and the survivor delivers what it had in
// flight (given back by the reaper: no retry spent, nothing failed).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

import { RawConn } from '../interop/lib/fwp.mjs';
import { makePki } from '../interop/lib/pki.mjs';
import { cleanupStack, waitFor } from '../interop/lib/server.mjs';
import { eachLimited, info, key, listenHttps, newClient, nodeIdOf, startNodes } from './lib/cluster.mjs';
import { startRedis } from './lib/redis.mjs';

const JOBS = 2_000;
const KILL_AFTER = 500;        // deliveries received before node B is killed
const ANSWER_AFTER_MS = 100;   // the receiver holds each request this long: some are in flight
const REAPED_WITHIN_MS = 30_000;
const DRAIN_TIMEOUT_MS = 60_000;

const config = (pki) => `allow_private_targets = true
delivery_ca_file = "${pki.file('ca.crt')}"
[delivery]
host_cap_initial = 16
host_cap_max = 16
`;

// An HTTPS receiver on loopback (pki's server certificate, for 127.0.0.1) that answers 200 to
// every request after ANSWER_AFTER_MS and counts the requests per path.
async function startReceiver(defer, pki) {
  const received = new Map();  // path -> requests
  const { url } = await listenHttps(defer, pki, (req, res) => {
    received.set(req.url, (received.get(req.url) ?? 0) + 1);
    req.resume();
    req.on('end', () => setTimeout(() => res.end('ok'), ANSWER_AFTER_MS));
  });
  return { received, url };
}

test('webhook deliveries through two nodes, one killed mid-run: every one arrives, no retry spent', async (t) => {
  const defer = cleanupStack(t);
  const pki = makePki();
  defer(() => fs.rmSync(pki.dir, { recursive: true, force: true }));
  const redis = await startRedis(defer);
  const receiver = await startReceiver(defer, pki);
  const [a, b] = await startNodes(defer, 2, { store: `redis://${redis.endpoint}`, config: config(pki) });
  const bId = await nodeIdOf(redis, b);

  const conns = [];
  for (const node of [a, b]) {
    const c = await RawConn.open(node.port);
    defer(() => c.destroy());
    await c.hello();
    conns.push(c);
  }
  const jobs = Array.from({ length: JOBS }, (_, n) => ({
    jid: `cluster-delivery-${n}`,
    jobtype: 'webhook',
    queue: 'default',
    args: [{ url: receiver.url(`/hook/${n}`), body: `payload ${n}` }],
  }));
  // Half through each node, pipelined per connection.
  await Promise.all(conns.map((c, i) => eachLimited(jobs.filter((_, n) => n % 2 === i), 1, async (job) => {
    const r = await c.call(`PUSH ${JSON.stringify(job)}`);
    assert.deepEqual(r, { type: '+', text: 'OK' }, `PUSH ${job.jid}`);
  })));

  await waitFor(() => receiver.received.size >= KILL_AFTER,
    { timeout: 60_000, message: `${KILL_AFTER} deliveries received before the kill` });
  await b.kill9();

  await waitFor(async () => {
    const nodes = (await redis.cli('SMEMBERS', key('nodes'))).split('\n');
    const reserved = Number(await redis.cli('SCARD', key(`reserved:${bId}`)));
    return !nodes.includes(bId) && reserved === 0;
  }, { timeout: REAPED_WITHIN_MS, message: `node ${bId}'s delivery reservations given back` });

  await waitFor(() => receiver.received.size === JOBS, {
    timeout: DRAIN_TIMEOUT_MS,
    message: `all ${JOBS} deliveries received (got ${receiver.received.size})`,
  });
  const client = newClient(defer, a.url);
  await waitFor(async () => {
    const i = await info(client);
    return i.working === 0 && i;
  }, { timeout: 10_000, message: 'INFO: no delivery reserved any more' });
  const final = await info(client);
  assert.equal(final.failures, 0, 'no delivery failed (none spent a retry)');
  assert.equal(final.retries, 0, 'no delivery is in the retry set');
  assert.equal(final.dead, 0, 'no delivery is dead');
  const twice = [...receiver.received.values()].filter((n) => n > 1).length;
  t.diagnostic(`${twice} deliveries arrived twice (in flight on node B when it died)`);
});
