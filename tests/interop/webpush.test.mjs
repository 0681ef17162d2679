// Web Push end to end against the npm `web-push-testing` mock push service (run in-process on a
// free port): bulkhead encrypts (aes128gcm, or legacy aesgcm on request), signs VAPID with its own
// key from the data dir — or with Mastodon's key pair, from its VAPID_PRIVATE_KEY /
// VAPID_PUBLIC_KEY or imported with `bulkhead vapid-key import` — the service verifies the JWT
// against the subscribed applicationServerKey and decrypts; an expired subscription answers 410
// and bulkhead reports it with a `bulkhead.webpush_gone` job. The headers of a job in Mastodon's
// shape (Ttl, Urgency, Unsubscribe-URL) are checked on a local recording peer, which
// web-push-testing is not (it passes only the headers it needs to its model).
//
// web-push-testing 1.2.2 has no per-subscription content encoding (its /subscribe accepts only
// userVisibleOnly and applicationServerKey): it decrypts whichever of aes128gcm and aesgcm the
// request's Content-Encoding names, aesgcm with the legacy headers (Encryption: salt=…,
// Crypto-Key: dh=…;p256ecdsa=…, Authorization: WebPush <jwt>, the key checked against the
// subscription's applicationServerKey). The tests record the encoding of each notification it
// accepted, so an aesgcm job is known to have arrived as aesgcm.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';

import { startFaultServer } from './lib/fault_servers.mjs';
import { RawConn } from './lib/fwp.mjs';
import { startPushService, vapidKeyCli, vapidPublicKey } from './lib/push_service.mjs';
import { cleanupStack, startServer, waitFor } from './lib/server.mjs';

const require = createRequire(import.meta.url);
const webpush = require('web-push');

async function setUp(t, serverOptions = {}) {
  const server = await startServer(t, { config: 'allow_private_targets = true\n', ...serverOptions });
  const push = await startPushService(t);
  const key = vapidPublicKey(server);
  assert.match(key, /^[A-Za-z0-9_-]{87}$/, 'uncompressed P-256 point, base64url');
  const { data } = await push.call('/subscribe', { userVisibleOnly: 'true', applicationServerKey: key });
  const conn = await RawConn.open(server.port);
  t.after(() => conn.destroy());
  await conn.hello();
  return { server, push, conn, subscription: data, key };
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
  const context = { web_push_subscription_id: 12345, kind: 'mention' };
  assert.deepEqual(await conn.call(webpushJob('webpush-gone-001', subscription, 'bye', { context })),
    { type: '+', text: 'OK' });
  const gone = await waitFor(async () => {
    const r = await conn.call('FETCH bulkhead');
    return r.type === '$' ? JSON.parse(r.text) : null;
  }, { timeout: 15_000, message: 'a bulkhead.webpush_gone job in queue bulkhead' });
  assert.equal(gone.jobtype, 'bulkhead.webpush_gone');
  assert.equal(gone.args.length, 1, 'one argument: the outcome object');
  const { at, ...outcome } = gone.args[0];
  assert.ok(!Number.isNaN(Date.parse(at)), at);
  assert.deepEqual(outcome, {
    event: 'webpush_gone', host: new URL(subscription.endpoint).host, status: 410,
    reason: 'http 410', jid: 'webpush-gone-001', jobtype: 'webpush', url: subscription.endpoint,
    context,
  });
  const sets = JSON.parse((await conn.call('INFO')).text).faktory.sets;
  assert.equal(sets.retries, 0, 'a gone subscription is not retried');
  assert.equal(sets.dead, 0, 'nor sent to the dead set');
  assert.deepEqual(await conn.call(`ACK ${JSON.stringify({ jid: gone.jid })}`), { type: '+', text: 'OK' });
});

// What Mastodon's Web::PushNotificationWorker sends (app/lib/web_push_request.rb, 4.4+): Ttl
// 172800, Urgency normal, Unsubscribe-URL, no Topic; aes128gcm for `standard` subscriptions, else
// aesgcm. And a 404 (Mastodon destroys the subscription on it) is reported with its status.
test('a job in Mastodon\'s shape sends Ttl, Urgency and Unsubscribe-URL; a 404 is gone with its status',
  async (t) => {
    const defer = cleanupStack(t);
    const server = await startServer(defer, { config: 'allow_private_targets = true\n' });
    const relay = await startFaultServer(defer, 'respond',
      { respond: (req) => ({ status: req.path.endsWith('/gone') ? 404 : 201 }) });
    const conn = await RawConn.open(server.port);
    defer(() => conn.destroy());
    await conn.hello();
    const p256dh = crypto.createECDH('prime256v1');
    p256dh.generateKeys();
    const keys = { p256dh: p256dh.getPublicKey('base64url'), auth: crypto.randomBytes(16).toString('base64url') };
    const unsubscribe = 'http://127.0.0.1:1/api/web/push_subscriptions/7/unsubscribe?token=a%2Fb';
    const job = (jid, path, encoding) => `PUSH ${JSON.stringify({
      jid, jobtype: 'webpush', queue: 'push',
      args: [{
        subscription: { endpoint: relay.url(path), keys }, payload: '{"title":"hi"}', ttl: 172800,
        urgency: 'normal', content_encoding: encoding, unsubscribe_url: unsubscribe,
        context: { web_push_subscription_id: 7 },
      }],
    })}`;
    for (const [jid, encoding] of [['webpush-standard-1', 'aes128gcm'], ['webpush-legacy-001', 'aesgcm']]) {
      assert.deepEqual(await conn.call(job(jid, `/relay-to/${jid}`, encoding)), { type: '+', text: 'OK' });
    }
    await waitFor(() => relay.requests.length === 2, { message: 'both pushes at the relay' });
    for (const [i, encoding] of ['aes128gcm', 'aesgcm'].entries()) {
      const { headers } = relay.requests.find((r) => r.path.endsWith(i === 0 ? 'standard-1' : 'legacy-001'));
      assert.equal(headers.ttl, '172800');
      assert.equal(headers.urgency, 'normal');
      assert.equal(headers['unsubscribe-url'], unsubscribe);
      assert.equal(headers['content-encoding'], encoding);
      assert.equal(headers.topic, undefined, 'no Topic, as Mastodon');
    }
    assert.deepEqual(await conn.call(job('webpush-gone-404', '/gone', 'aes128gcm')), { type: '+', text: 'OK' });
    const gone = await waitFor(async () => {
      const r = await conn.call('FETCH bulkhead');
      return r.type === '$' ? JSON.parse(r.text) : null;
    }, { timeout: 15_000, message: 'the bulkhead.webpush_gone job of the 404' });
    assert.equal(gone.jobtype, 'bulkhead.webpush_gone');
    assert.equal(gone.args[0].status, 404);
    assert.equal(gone.args[0].jid, 'webpush-gone-404');
    assert.deepEqual(gone.args[0].context, { web_push_subscription_id: 7 });
    // An Unsubscribe-URL that is not a URL is refused at PUSH, naming the field.
    const bad = await conn.call(job('webpush-bad-url-1', '/x', 'aes128gcm').replace(unsubscribe, 'javascript:alert(1)'));
    assert.equal(bad.type, '-');
    assert.match(bad.text, /webpush: unsubscribe_url: /);
  });

// Mastodon's VAPID_PRIVATE_KEY / VAPID_PUBLIC_KEY in Mastodon's form: Ruby's
// Base64.urlsafe_encode64 (padded) of the private scalar as OpenSSL::BN#to_s(2) writes it (a
// leading zero byte dropped: 31 bytes here) and of the public point. Drawn from npm web-push's
// generateVAPIDKeys until its scalar starts with a zero byte (one in 256).
function mastodonVapidKeys() {
  const ruby = (bytes) => bytes.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
  for (;;) {
    const keys = webpush.generateVAPIDKeys();
    const scalar = Buffer.from(keys.privateKey, 'base64url');
    if (scalar[0] !== 0) continue;
    return {
      VAPID_PRIVATE_KEY: ruby(scalar.subarray(1)),
      VAPID_PUBLIC_KEY: ruby(Buffer.from(keys.publicKey, 'base64url')),
      publicKey: keys.publicKey,  // unpadded base64url: what browsers subscribe with
    };
  }
}

// The `k=` of a VAPID Authorization header, and the key of its JWT's signature check.
function vapidKeyOf(authorization) {
  const match = /^vapid t=([^,]+),\s*k=(.+)$/.exec(authorization);
  assert.ok(match, authorization);
  return match[2];
}

test('bulkhead signs with Mastodon\'s VAPID key pair from its environment, and once imported',
  async (t) => {
    const mastodon = mastodonVapidKeys();
    assert.equal(mastodon.VAPID_PRIVATE_KEY.length, 44, 'a 31-byte scalar, = padded');
    const env = { VAPID_PRIVATE_KEY: mastodon.VAPID_PRIVATE_KEY, VAPID_PUBLIC_KEY: mastodon.VAPID_PUBLIC_KEY };
    const { server, push, conn, subscription, key } = await setUp(t, { env });
    assert.equal(key, mastodon.publicKey, 'vapid-key prints the public key of the environment');
    const compare = vapidKeyCli(['--data-dir', server.dataDir, '--mastodon'], env);
    assert.equal(compare.stdout, `VAPID_PUBLIC_KEY=${mastodon.VAPID_PUBLIC_KEY}\n`, compare.stderr);
    assert.deepEqual(await conn.call(webpushJob('webpush-mastodon-01', subscription, 'signed by Mastodon\'s key')),
      { type: '+', text: 'OK' });
    await waitFor(async () => {
      const { data } = await push.call('/get-notifications', { clientHash: subscription.clientHash });
      return data.messages.length === 1;
    }, { message: 'web-push-testing to accept the VAPID token of the imported key' });
    assert.equal(vapidKeyOf(push.authorizations[0]), mastodon.publicKey,
      'the token is signed by, and names, Mastodon\'s public key');
    assert.ok(!server.stderr.includes(mastodon.VAPID_PRIVATE_KEY), 'the private key is never logged');
    assert.ok(!server.stderr.includes(mastodon.VAPID_PRIVATE_KEY.slice(0, 20)));
    assert.ok(!fs.existsSync(path.join(server.dataDir, 'vapid.pem')), 'no key file generated');

    // `bulkhead vapid-key import` from Mastodon's env file, then a server without the variables.
    await server.stop();
    const envFile = path.join(server.dataDir, '.env.production');
    fs.writeFileSync(envFile, `LOCAL_DOMAIN=social.example\nVAPID_PRIVATE_KEY=${mastodon.VAPID_PRIVATE_KEY}\n` +
      `VAPID_PUBLIC_KEY=${mastodon.VAPID_PUBLIC_KEY}\n`, { mode: 0o600 });
    const imported = vapidKeyCli(['import', '--env-file', envFile, '--data-dir', server.dataDir]);
    assert.equal(imported.status, 0, imported.stderr);
    assert.equal(imported.stdout.trim(), mastodon.publicKey);
    assert.equal(fs.statSync(path.join(server.dataDir, 'vapid.pem')).mode & 0o777, 0o600);
    server.options.env = {};
    await server.start();
    const again = await RawConn.open(server.port);
    t.after(() => again.destroy());
    await again.hello();
    assert.deepEqual(await again.call(webpushJob('webpush-imported-1', subscription, 'after import')),
      { type: '+', text: 'OK' });
    await waitFor(async () => {
      const { data } = await push.call('/get-notifications', { clientHash: subscription.clientHash });
      return data.messages.length === 2 && data.messages[1] === 'after import';
    }, { message: 'the push signed with the imported key' });
    assert.equal(vapidKeyOf(push.authorizations[1]), mastodon.publicKey);
  });

test('a server refuses to start with VAPID halves that do not match, naming why', async (t) => {
  const mastodon = mastodonVapidKeys();
  const other = mastodonVapidKeys();
  const env = { VAPID_PRIVATE_KEY: mastodon.VAPID_PRIVATE_KEY, VAPID_PUBLIC_KEY: other.VAPID_PUBLIC_KEY };
  await assert.rejects(startServer(t, { env }),
    /VAPID_PUBLIC_KEY is not the public key of VAPID_PRIVATE_KEY \(the environment\)/);
  const cli = vapidKeyCli(['--data-dir', '/nonexistent-bulkhead-dir'], env);
  assert.equal(cli.status, 1);
  assert.match(cli.stderr, /VAPID_PUBLIC_KEY is not the public key of VAPID_PRIVATE_KEY/);
  assert.ok(!cli.stderr.includes(mastodon.VAPID_PRIVATE_KEY));
});
