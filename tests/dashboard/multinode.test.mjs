// The dashboard with two `bulkhead serve` nodes on one redis-server namespace: node A's
// dashboard finds a job reserved through node B by its jid, and its Busy page lists that job
// under the wid of the worker connected to node B (the holder is kept in the store, not in the
// node that made the reservation), with the quiet and terminate buttons that reach it; its
// Workers table lists the workers connected to node B, idle ones too, with node B's id.
// Plain HTTP: the browser checks are dashboard.test.mjs's.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import faktory from 'faktory-worker';

import { nodeIdOf, startNodes } from '../cluster/lib/cluster.mjs';
import { startRedis } from '../cluster/lib/redis.mjs';
import { cleanupStack, waitFor } from '../interop/lib/server.mjs';

test('a dashboard on node A shows the job a worker of node B holds', { timeout: 120_000 }, async (t) => {
  const defer = cleanupStack(t);
  const redis = await startRedis(defer);
  const [a, b] = await startNodes(defer, 2, { store: `redis://${redis.endpoint}` });
  const client = new faktory.Client({ url: a.url });
  defer(() => client.close());
  const worker = new faktory.Client({ url: b.url, wid: 'worker-on-b' });
  defer(() => worker.close());
  await worker.connect();

  const jid = 'multinode-held-0001';
  await client.push({ jid, jobtype: 'Held', queue: 'shared', args: [] });
  await client.push({ jid: 'multinode-queued-01', jobtype: 'Waiting', queue: 'waiting', args: [] });
  const got = await worker.fetch('shared');
  assert.equal(got.jid, jid);

  const page = async (p) => {
    const res = await fetch(a.httpBase + p);
    assert.equal(res.status, 200, p);
    return res.text();
  };
  assert.match(await page(`/search?jid=${jid}`), /in Busy \(reserved\)/);
  assert.match(await page('/search?jid=multinode-queued-01'), /in queue waiting/);
  const busy = await page('/busy');
  const section = busy.slice(busy.indexOf('data-wid="worker-on-b"'));
  assert.ok(busy.includes('data-wid="worker-on-b"'), 'node A lists the wid connected to node B');
  // Until node B's next heartbeat publishes its roster, node A knows the worker only through the
  // job it holds ("not connected to this node"); after it, through that roster ("on node B"). The
  // heartbeat may come at any moment of the test, so either is right.
  assert.match(section, /not connected to this node|on node /);
  // Its quiet and terminate buttons are there: node A sends the signal to the other nodes
  // (Engine::SignalWorker; tests/cluster/nodes.test.mjs follows one to the worker's BEAT).
  const header = section.slice(0, section.indexOf('</h3>'));
  for (const action of ['quiet', 'terminate']) {
    assert.match(header, new RegExp(`name="wid" value="worker-on-b"><input type="hidden" name="action" value="${action}"`));
  }
  assert.match(section.slice(0, section.indexOf('</section>')), new RegExp(`job\\?jid=${jid}"`));
  assert.match(await page(`/job?jid=${jid}`), /<span class="data" id="holder">worker-on-b<\/span>/);

  // The reservation ends through node B: node A's Busy page no longer lists it.
  await worker.ack(jid);
  assert.ok(!(await page('/busy')).includes('data-wid="worker-on-b"'));

  // Node A's Workers table lists both of node B's workers, the idle one too, with node B's id
  // (node B publishes its roster with its heartbeat), and their quiet/terminate buttons.
  const bId = await nodeIdOf(redis, b);
  const idle = new faktory.Client({ url: b.url, wid: 'idle-on-b' });
  defer(() => idle.close());
  await idle.beat();  // its first command opens its connection (HELLO with the wid)
  const workersTable = async () => {
    const html = await page('/busy');
    return html.slice(html.indexOf('<table id="workers">'), html.indexOf('</table>', html.indexOf('<table id="workers">')));
  };
  const table = await waitFor(async () => {
    const t = await workersTable();
    return t.includes('>idle-on-b<') && t;
  }, { timeout: 5_000, message: 'node A listing the idle worker of node B' });
  for (const wid of ['worker-on-b', 'idle-on-b']) {
    assert.ok(table.includes(`<td class="data">${wid}</td><td class="data node">${bId}</td>`), wid);
    assert.ok(table.includes(`name="wid" value="${wid}"><input type="hidden" name="action" value="quiet"`), wid);
  }
  assert.ok(table.includes('<th>Node</th>'));
});
