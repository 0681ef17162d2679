// The delivery caps hold for the whole cluster: two `bulkhead serve` nodes on one
// redis-server namespace each apply their share of the caps (cap / live nodes, floor, at least
// 1), so a slow local HTTPS endpoint never sees more than the configured cap in flight from both
// nodes together. Each node learns the live node count at its heartbeats (INFO "delivery"); when
// one is killed, the survivor's share grows back to the whole cap.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

import { RawConn } from '../interop/lib/fwp.mjs';
import { makePki } from '../interop/lib/pki.mjs';
import { cleanupStack, waitFor } from '../interop/lib/server.mjs';
import { eachLimited, listenHttps, newClient, startNodes } from './lib/cluster.mjs';
import { startRedis } from './lib/redis.mjs';

const JOBS = 120;
const ANSWER_AFTER_MS = 300;  // a slow endpoint: every delivery stays in flight this long
const DRAIN_TIMEOUT_MS = 60_000;

// An HTTPS receiver on loopback that holds each request ANSWER_AFTER_MS, then answers 200;
// counts the requests, those in flight now and the most ever in flight at once.
async function startSlowReceiver(defer, pki) {
  const r = { received: 0, inFlight: 0, peak: 0 };
  const { url } = await listenHttps(defer, pki, (req, res) => {
    r.received += 1;
    r.inFlight += 1;
    r.peak = Math.max(r.peak, r.inFlight);
    req.resume();
    req.on('end', () => setTimeout(() => {
      r.inFlight -= 1;
      res.end('ok');
    }, ANSWER_AFTER_MS));
  });
  r.url = url;
  return r;
}

// INFO "delivery" of the node behind `client`: its view of the cluster and its share of the caps.
async function delivery(client) {
  return (await client.info()).delivery;
}

async function untilEveryNodeSees(clients, nodes) {
  for (const [i, client] of clients.entries()) {
    await waitFor(async () => (await delivery(client))?.cluster_nodes === nodes, {
      timeout: 10_000,
      message: `node ${i} reports ${nodes} live nodes in INFO "delivery"`,
    });
  }
}

async function pushThroughBoth(defer, nodes, receiver, prefix) {
  const conns = [];
  for (const node of nodes) {
    const c = await RawConn.open(node.port);
    defer(() => c.destroy());
    await c.hello();
    conns.push(c);
  }
  const jobs = Array.from({ length: JOBS }, (_, n) => ({
    jid: `${prefix}-${n}`,
    jobtype: 'webhook',
    queue: 'default',
    args: [{ url: receiver.url(`/hook/${n}`), body: `payload ${n}` }],
  }));
  await Promise.all(conns.map((c, i) => eachLimited(jobs.filter((_, n) => n % 2 === i), 1, async (job) => {
    const r = await c.call(`PUSH ${JSON.stringify(job)}`);
    assert.deepEqual(r, { type: '+', text: 'OK' }, `PUSH ${job.jid}`);
  })));
  await waitFor(() => receiver.received >= JOBS, {
    timeout: DRAIN_TIMEOUT_MS,
    message: `all ${JOBS} deliveries received (got ${receiver.received})`,
  });
}

async function setUp(t, delivery) {
  const defer = cleanupStack(t);
  const pki = makePki();
  defer(() => fs.rmSync(pki.dir, { recursive: true, force: true }));
  const redis = await startRedis(defer);
  const receiver = await startSlowReceiver(defer, pki);
  const config = `allow_private_targets = true
delivery_ca_file = "${pki.file('ca.crt')}"
[delivery]
${delivery}
`;
  const nodes = await startNodes(defer, 2, { store: `redis://${redis.endpoint}`, config });
  const clients = nodes.map((node) => newClient(defer, node.url));
  // Until a node's heartbeat has seen the other, it takes the whole cap: push only once both do.
  await untilEveryNodeSees(clients, 2);
  return { defer, receiver, nodes, clients };
}

test('the per-host cap holds for two nodes together; a survivor grows back to the whole cap', async (t) => {
  const { defer, receiver, nodes, clients } = await setUp(t, 'host_cap_initial = 8\nhost_cap_max = 8');
  for (const client of clients) {
    const d = await delivery(client);
    assert.equal(d.host_cap_max, 4, `each node's share of host_cap_max 8: ${JSON.stringify(d)}`);
  }
  await pushThroughBoth(defer, nodes, receiver, 'cap-host');
  t.diagnostic(`at most ${receiver.peak} deliveries in flight at the endpoint (cap 8 for the cluster)`);
  assert.ok(receiver.peak <= 8, `the endpoint saw ${receiver.peak} in flight, over the cluster cap 8`);

  await nodes[1].kill9();
  await waitFor(async () => (await delivery(clients[0]))?.cluster_nodes === 1, {
    timeout: 10_000,
    message: 'the survivor reports 1 live node once the killed node\'s heartbeat has expired',
  });
  assert.equal((await delivery(clients[0])).host_cap_max, 8, 'the survivor takes the whole cap');
});

test('the global cap holds for two nodes together', async (t) => {
  const { defer, receiver, nodes, clients } =
    await setUp(t, 'global_max_in_flight = 6\nhost_cap_initial = 16\nhost_cap_max = 16');
  for (const client of clients) {
    const d = await delivery(client);
    assert.equal(d.max_in_flight, 3, `each node's share of global_max_in_flight 6: ${JSON.stringify(d)}`);
  }
  await pushThroughBoth(defer, nodes, receiver, 'cap-global');
  t.diagnostic(`at most ${receiver.peak} deliveries in flight at the endpoint (cap 6 for the cluster)`);
  assert.ok(receiver.peak <= 6, `the endpoint saw ${receiver.peak} in flight, over the cluster cap 6`);
});
