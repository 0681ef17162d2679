// The push relay (docs/relay.md) on two nodes sharing one redis-server namespace: messages POSTed
// to either node's relay port are stored in the shared store and forwarded to a fake APNs
// (tests/interop/fakes/fake_apns.mjs) by both nodes' delivery engines; node B is killed with
// SIGKILL while APNs holds its answers, and node A forwards everything B had accepted once the
// reaper gives B's reservations back. Nothing accepted is lost; only what B had in flight may
// reach APNs twice.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { test } from 'node:test';

import { makeP8Key, startFakeApns } from '../interop/fakes/fake_apns.mjs';
import { makePki } from '../interop/lib/pki.mjs';
import { cleanupStack, freePort, startServer, waitFor } from '../interop/lib/server.mjs';
import { key, LIVENESS_CONFIG, nodeIdOf } from './lib/cluster.mjs';
import { startRedis } from './lib/redis.mjs';

const MESSAGES = 400;
const REAPED_WITHIN_MS = 30_000;

function post(pki, agent, url, body) {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: 'POST', agent, ca: pki.ca,
      headers: { 'content-encoding': 'aes128gcm', ttl: '3600', 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('relay messages through two nodes, one killed while APNs holds its answers: none lost', async (t) => {
  const defer = cleanupStack(t);
  const pki = makePki();
  defer(() => fs.rmSync(pki.dir, { recursive: true, force: true }));
  const p8 = makeP8Key();
  const keyFile = path.join(pki.dir, 'AuthKey_KEY1234567.p8');
  fs.writeFileSync(keyFile, p8.pem, { mode: 0o600 });
  const tokens = Array.from({ length: MESSAGES }, () => crypto.randomBytes(32).toString('hex'));
  const apns = await startFakeApns({
    cert: fs.readFileSync(pki.file('server.crt')), key: fs.readFileSync(pki.file('server.key')),
    topic: 'cx.c3.toot', keyId: 'KEY1234567', teamId: 'TEAM123456', publicKey: p8.publicKey,
    tokens: { production: new Set(tokens), development: new Set() }, environment: 'production',
  });
  defer(() => apns.close());
  let open;
  apns.state.gate = new Promise((r) => { open = r; });
  const redis = await startRedis(defer);
  const nodes = [];
  for (let i = 0; i < 2; i++) {
    const relayPort = await freePort();
    const config = `${LIVENESS_CONFIG}
tls_cert_file = "${pki.file('server.crt')}"
tls_key_file = "${pki.file('server.key')}"
relay_listen = "127.0.0.1:${relayPort}"
allow_private_targets = true
delivery_ca_file = "${pki.file('ca.crt')}"
[[relay.apns]]
name = "toot"
topic = "cx.c3.toot"
team_id = "TEAM123456"
key_id = "KEY1234567"
key_file = "${keyFile}"
production_url = "${apns.url}"
rate_per_second = 0
`;
    const node = await startServer(defer, { store: `redis://${redis.endpoint}`, config });
    node.relayBase = `https://127.0.0.1:${relayPort}`;
    await waitFor(() => node.stderr.includes('relay: serving'), { message: 'the relay listener' });
    nodes.push(node);
  }
  const [a, b] = nodes;
  const bId = await nodeIdOf(redis, b);
  const agent = new https.Agent({ keepAlive: true, maxSockets: 16, ca: pki.ca });
  defer(() => agent.destroy());
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < MESSAGES) {
      const i = next++;
      const node = nodes[i % 2];
      const status = await post(pki, agent, `${node.relayBase}/relay-to/production/${tokens[i]}`, Buffer.from(tokens[i]));
      assert.equal(status, 201, `message ${i} through node ${i % 2 ? 'B' : 'A'}`);
    }
  }));
  await waitFor(() => apns.state.inFlight > 0, { message: 'forwards held by APNs' });
  agent.destroy();
  await b.kill9();
  const heldAtTheKill = apns.state.inFlight;
  apns.state.gate = null;
  open();
  await waitFor(async () => {
    const nodeIds = (await redis.cli('SMEMBERS', key('nodes'))).split('\n');
    return !nodeIds.includes(bId);
  }, { timeout: REAPED_WITHIN_MS, message: `node ${bId} declared dead and its reservations given back` });
  await waitFor(() => new Set(apns.state.received.map((r) => r.token)).size === MESSAGES,
    { timeout: 90_000, interval: 200, message: `all ${MESSAGES} messages at APNs (got ${new Set(apns.state.received.map((r) => r.token)).size})` });
  const twice = apns.state.received.length - MESSAGES;
  assert.ok(twice <= heldAtTheKill, `${twice} forwarded twice, more than the ${heldAtTheKill} in flight at the kill`);
  t.diagnostic(`${twice} messages reached APNs twice (in flight when node B died; ${heldAtTheKill} were held)`);
  void a;
});
