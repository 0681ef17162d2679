// Web Push end to end against the npm `web-push-testing` mock push service (run in-process on a
// free port): bulkhead encrypts (aes128gcm, or legacy aesgcm on request), signs VAPID with its own
// key from the data dir, the service verifies the JWT against the subscribed applicationServerKey
// and decrypts; an expired subscription answers 410 and bulkhead reports it with a
// `bulkhead.webpush_gone` job.
//
// web-push-testing 1.2.2 has no per-subscription content encoding (its /subscribe accepts only
// userVisibleOnly and applicationServerKey): it decrypts whichever of aes128gcm and aesgcm the
// request's Content-Encoding names, aesgcm with the legacy headers (Encryption: salt=…,
// Crypto-Key: dh=…;p256ecdsa=…, Authorization: WebPush <jwt>, the key checked against the
// subscription's applicationServerKey). The tests record the encoding of each notification it
// accepted, so an aesgcm job is known to have arrived as aesgcm.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { test } from 'node:test';

import { RawConn } from './lib/fwp.mjs';
import { freePort, startServer, waitFor } from './lib/server.mjs';

const require = createRequire(import.meta.url);
const WebPushTestingServer = require('web-push-testing/src/server.js');
const { PushApiModel } = require('web-push-testing/src/PushApiModel.js');

// Starts web-push-testing on a free port; stopped by t.after.
async function startPushService(t) {
  const port = await freePort();
  const model = new PushApiModel();
  const encodings = [];  // Content-Encoding of each notification the service decrypted
  const handleNotification = model.handleNotification.bind(model);
  model.handleNotification = async (clientHash, headers, body) => {
    const result = await handleNotification(clientHash, headers, body);
    encodings.push(headers.encoding);
    return result;
  };
  const service = new WebPushTestingServer(model, port);
  const log = console.log;
  console.log = () => {};  // its "Server running on port" line
  try {
    service.startServer();
  } finally {
    console.log = log;
  }
  t.after(() => new Promise((resolve) => service._server.close(() => resolve())));
  const base = `http://localhost:${port}`;
  await waitFor(async () => (await fetch(`${base}/status`, { method: 'POST' })).ok,
    { message: 'web-push-testing to answer /status' });
  const call = async (path, body) => {
    const r = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body ?? {}),
    });
    const text = await r.text();
    assert.ok(r.ok, `web-push-testing ${path}: ${r.status} ${text}`);
    return r.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
  };
  return { call, encodings };
}

function vapidPublicKey(server) {
  const r = spawnSync(server.binary ?? process.env.BULKHEAD_BINARY,
    ['vapid-key', '--data-dir', server.dataDir], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(r.status, 0, `bulkhead vapid-key failed: ${r.stderr}`);
  return r.stdout.trim();
}

async function setUp(t) {
  const server = await startServer(t, { config: 'allow_private_targets = true\n' });
  const push = await startPushService(t);
  const key = vapidPublicKey(server);
  assert.match(key, /^[A-Za-z0-9_-]{87}$/, 'uncompressed P-256 point, base64url');
  const { data } = await push.call('/subscribe', { userVisibleOnly: 'true', applicationServerKey: key });
  const conn = await RawConn.open(server.port);
  t.after(() => conn.destroy());
  await conn.hello();
  return { server, push, conn, subscription: data };
}

const webpushJob = (jid, subscription, payload, extra = {}) => `PUSH ${JSON.stringify({
  jid,
  jobtype: 'webpush',
  queue: 'push',
  args: [{
    subscription: { endpoint: subscription.endpoint, keys: subscription.keys },
    payload,
    ttl: 60,
    ...extra,
  }],
})}`;

// Pushes a webpush job (with `extra` in its argument), checks that web-push-testing decrypted it to
// the exact payload under `encoding` and that bulkhead acknowledged it.
async function deliversExactly(t, jid, encoding, extra = {}) {
  const { push, conn, subscription } = await setUp(t);
  const payload = JSON.stringify({ title: 'Grüße ✓', body: 'x'.repeat(2000), n: 42 });
  assert.deepEqual(await conn.call(webpushJob(jid, subscription, payload, extra)),
    { type: '+', text: 'OK' });
  const messages = await waitFor(async () => {
    const { data } = await push.call('/get-notifications', { clientHash: subscription.clientHash });
    return data.messages.length > 0 ? data.messages : null;
  }, { message: 'the notification to arrive at web-push-testing' });
  assert.deepEqual(messages, [payload]);
  const info = await waitFor(async () => {
    const doc = JSON.parse((await conn.call('INFO')).text);
    return doc.faktory.sets.working === 0 ? doc : null;
  }, { message: 'the delivery to be acknowledged' });
  assert.equal(info.faktory.sets.retries, 0);
  assert.ok(info.hosts.some((h) => h.host.startsWith('localhost:') && h.successes === 1),
    `INFO hosts shows the push service: ${JSON.stringify(info.hosts)}`);
  assert.deepEqual(push.encodings, [encoding]);
}

test('a webpush job reaches web-push-testing and decrypts to the exact payload', async (t) => {
  await deliversExactly(t, 'webpush-ok-0001', 'aes128gcm');
});

test('a legacy aesgcm webpush job reaches web-push-testing and decrypts to the exact payload',
  async (t) => {
    await deliversExactly(t, 'webpush-aesgcm-01', 'aesgcm', { content_encoding: 'aesgcm' });
  });

test('an expired subscription (410) produces bulkhead.webpush_gone and no retry', async (t) => {
  const { push, conn, subscription } = await setUp(t);
  await push.call(`/expire-subscription/${subscription.clientHash}`);
  assert.deepEqual(await conn.call(webpushJob('webpush-gone-001', subscription, 'bye')),
    { type: '+', text: 'OK' });
  const gone = await waitFor(async () => {
    const r = await conn.call('FETCH bulkhead');
    return r.type === '$' ? JSON.parse(r.text) : null;
  }, { timeout: 15_000, message: 'a bulkhead.webpush_gone job in queue bulkhead' });
  assert.equal(gone.jobtype, 'bulkhead.webpush_gone');
  assert.deepEqual(gone.args, [subscription.endpoint, 'webpush-gone-001']);
  const sets = JSON.parse((await conn.call('INFO')).text).faktory.sets;
  assert.equal(sets.retries, 0, 'a gone subscription is not retried');
  assert.equal(sets.dead, 0, 'nor sent to the dead set');
  assert.deepEqual(await conn.call(`ACK ${JSON.stringify({ jid: gone.jid })}`), { type: '+', text: 'OK' });
});
