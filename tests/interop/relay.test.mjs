// The push relay (docs/relay.md) end to end: Mastodon-shaped senders — npm `web-push` and
// bulkhead's own `webpush` jobs, both encodings — POST to the relay's compatible URLs over TLS,
// the relay stores each message and forwards it over HTTP/2 to a fake APNs (fakes/fake_apns.mjs,
// strict as Apple's documentation), and the payload that reaches it decrypts, device-side, to
// what was sent (RFC 8291 / the aesgcm draft through web-push's own `http_ece`). Then the outcomes
// (410 → Unsubscribe-URL DELETE; BadDeviceToken dead) and the faults: APNs holding every answer,
// and kill -9 of the relay with thousands of accepted messages.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, test } from 'node:test';

import { makeP8Key, startFakeApns } from './fakes/fake_apns.mjs';
import { makeServiceAccount, startFakeFcm } from './fakes/fake_fcm.mjs';
import { makePki } from './lib/pki.mjs';
import { cleanupStack, freePort, startServer, waitFor } from './lib/server.mjs';

const require = createRequire(import.meta.url);
const webpush = require('web-push');
const ece = require('http_ece');
const faktory = require('faktory-worker');

const Z85 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#';

// The apps' decoder of the relays' base85 (4-byte blocks to 5 digits; a tail of n bytes, n + 1).
function base85Decode(text) {
  const out = [];
  for (let i = 0; i < text.length; i += 5) {
    const group = text.slice(i, i + 5);
    const bytes = group.length === 5 ? 4 : group.length - 1;
    let v = 0n;
    for (const c of group) v = v * 85n + BigInt(Z85.indexOf(c));
    for (let j = bytes - 1; j >= 0; j--) out.push(Number((v >> BigInt(8 * j)) & 0xffn));
  }
  return Buffer.from(out);
}

// A device: its P-256 key pair and auth secret, as a browser subscription holds them.
function makeDevice() {
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  return {
    ecdh,
    auth: crypto.randomBytes(16),
    token: crypto.randomBytes(32).toString('hex'),
    keys() {
      return { p256dh: ecdh.getPublicKey().toString('base64url'), auth: this.auth.toString('base64url') };
    },
  };
}

// What the app does on the device with the fields the relay delivered.
function decryptOnDevice(device, payload) {
  const body = base85Decode(payload.p);
  if (payload.k === undefined) {
    return ece.decrypt(body, { version: 'aes128gcm', privateKey: device.ecdh, authSecret: device.auth });
  }
  return ece.decrypt(body, {
    version: 'aesgcm', privateKey: device.ecdh, authSecret: device.auth,
    dh: base85Decode(payload.k).toString('base64url'), salt: base85Decode(payload.s).toString('base64url'),
  });
}

// A recording HTTP peer for Unsubscribe-URL DELETEs.
async function startUnsubscribeSink(t) {
  const calls = [];
  const server = http.createServer((req, res) => {
    calls.push({ method: req.method, url: req.url });
    res.writeHead(200).end();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(() => r())));
  return { calls, base: `http://127.0.0.1:${server.address().port}` };
}

// The relay: bulkhead with TLS, relay_listen, one APNs app pointing at `prod` and `dev` fakes.
async function startRelay(defer, { pki, key, prod, dev, store = 'sqlite', limits = '', fcm = '' }) {
  const relayPort = await freePort();
  const config = [
    `tls_cert_file = "${pki.file('server.crt')}"`,
    `tls_key_file = "${pki.file('server.key')}"`,
    `relay_listen = "127.0.0.1:${relayPort}"`,
    'allow_private_targets = true',
    `delivery_ca_file = "${pki.file('ca.crt')}"`,
    '[[relay.apns]]',
    'name = "toot"',
    'topic = "cx.c3.toot"',
    'team_id = "TEAM123456"',
    'key_id = "KEY1234567"',
    `key_file = "${key}"`,
    `production_url = "${prod.url}"`,
    `development_url = "${dev.url}"`,
    limits,
    fcm,
    '',
  ].join('\n');
  const server = await startServer(defer, { config, store });
  server.relayPort = relayPort;
  server.relayBase = `https://127.0.0.1:${relayPort}`;
  await waitFor(() => server.stderr.includes('relay: serving'), { message: 'the relay listener' });
  return server;
}

// POSTs raw bytes to the relay; resolves {status, headers, body, ms}.
function post(relay, pki, urlPath, body, headers) {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = https.request(`${relay.relayBase}${urlPath}`, {
      method: 'POST', ca: pki.ca, agent: relay.agent,
      headers: { 'content-length': body.length, ...headers },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({
        status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString(),
        ms: Number(process.hrtime.bigint() - started) / 1e6,
      }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// GET over https with the test CA; resolves with the body (rejects on a status other than 200).
function getText(url, pki) {
  return new Promise((resolve, reject) => https.get(url, { ca: pki.ca }, (res) => {
    let body = '';
    res.on('data', (c) => { body += c; });
    res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: ${res.statusCode}`))));
  }).on('error', reject));
}

async function setup(t, extra = {}) {
  const fcmSetup = extra.fcm;
  delete extra.fcm;
  const wrongKey = extra.wrongKey;
  delete extra.wrongKey;
  const defer = cleanupStack(t);
  const pki = makePki();
  defer(() => fs.rmSync(pki.dir, { recursive: true, force: true }));
  const p8 = makeP8Key();
  const keyFile = path.join(pki.dir, 'AuthKey_KEY1234567.p8');
  fs.writeFileSync(keyFile, p8.pem, { mode: 0o600 });
  const tokens = { production: new Set(), development: new Set() };
  const common = {
    cert: fs.readFileSync(pki.file('server.crt')), key: fs.readFileSync(pki.file('server.key')),
    topic: 'cx.c3.toot', keyId: 'KEY1234567', teamId: 'TEAM123456', tokens,
    // wrongKey: APNs knows another key under this key id (a revoked or mistyped key).
    publicKey: wrongKey ? makeP8Key().publicKey : p8.publicKey,
  };
  const prod = await startFakeApns({ ...common, environment: 'production' });
  defer(() => prod.close());
  const dev = await startFakeApns({ ...common, environment: 'development' });
  defer(() => dev.close());
  let fcm = null;
  let fcmConfig = '';
  if (fcmSetup) {
    const fcmOptions = { ...common, projectId: 'droid-123', tokens: new Set() };
    fcm = await startFakeFcm(fcmOptions);
    defer(() => fcm.close());
    fcmOptions.account = makeServiceAccount({ projectId: 'droid-123', tokenUri: fcm.tokenUri });
    fcm.tokens = fcmOptions.tokens;
    const file = path.join(pki.dir, 'firebase.json');
    fs.writeFileSync(file, JSON.stringify(fcmOptions.account.json), { mode: 0o600 });
    fcmConfig = `[[relay.fcm]]\nname = "droid"\nservice_account_file = "${file}"\nurl = "${fcm.url}"\n`;
  }
  const relay = await startRelay(defer, { pki, key: keyFile, prod, dev, fcm: fcmConfig, ...extra });
  relay.agent = new https.Agent({ keepAlive: true, maxSockets: 64, ca: pki.ca });
  defer(() => relay.agent.destroy());
  return { defer, pki, prod, dev, relay, tokens, keyFile, common, fcm };
}

const vapid = webpush.generateVAPIDKeys();

describe('push relay', () => {
  test('web-push and bulkhead webpush jobs reach APNs and decrypt to what was sent', async (t) => {
    const { pki, prod, relay, tokens } = await setup(t);
    const sent = new Map();  // token -> plaintext
    const devices = new Map();
    for (const encoding of ['aes128gcm', 'aesgcm']) {
      const device = makeDevice();
      tokens.production.add(device.token);
      devices.set(device.token, device);
      const text = JSON.stringify({ notification_id: encoding, title: `via web-push ${encoding}` });
      sent.set(device.token, text);
      const res = await webpush.sendNotification(
        { endpoint: `${relay.relayBase}/relay-to/production/${device.token}/account/42`, keys: device.keys() },
        text,
        { contentEncoding: encoding, TTL: 3600, urgency: 'low', topic: 'news',
          vapidDetails: { subject: 'mailto:ops@social.example', publicKey: vapid.publicKey, privateKey: vapid.privateKey },
          agent: new https.Agent({ ca: pki.ca }) });
      assert.equal(res.statusCode, 201);
    }
    // bulkhead's own webpush jobs, as Mastodon pushes them, sent to the relay over TLS.
    const client = new faktory.Client({ host: '127.0.0.1', port: relay.port, tlsOptions: { ca: pki.ca } });
    t.after(() => client.close());
    for (const encoding of ['aes128gcm', 'aesgcm']) {
      const device = makeDevice();
      tokens.production.add(device.token);
      devices.set(device.token, device);
      const text = JSON.stringify({ notification_id: `job-${encoding}`, body: 'héllo 🎺' });
      sent.set(device.token, text);
      await client.push({
        jobtype: 'webpush', queue: 'push', retry: 5,
        args: [{ subscription: { endpoint: `${relay.relayBase}/relay-to/production/${device.token}`, keys: device.keys() },
          payload: text, content_encoding: encoding, ttl: 172800, urgency: 'normal' }],
      });
    }
    await waitFor(() => prod.state.received.length >= 4,
      { timeout: 20_000, message: `4 notifications at the fake APNs (got ${prod.state.received.length}; answers ${JSON.stringify(prod.state.answers)})` });
    for (const r of prod.state.received) {
      const device = devices.get(r.token);
      assert.ok(device, `a notification for an unknown token ${r.token}`);
      assert.equal(decryptOnDevice(device, r.payload).toString(), sent.get(r.token));
      assert.equal(r.payload.aps.alert, '🎺');
      assert.equal(r.payload.aps['mutable-content'], 1);
      assert.equal(r.headers['apns-topic'], 'cx.c3.toot');
      assert.equal(r.headers['apns-push-type'], 'alert');
    }
    const viaWebPush = prod.state.received.filter((r) => r.payload.x === 'account/42');
    assert.equal(viaWebPush.length, 2);
    for (const r of viaWebPush) {
      assert.equal(r.headers['apns-priority'], '5');  // Urgency: low
      assert.equal(r.headers['apns-collapse-id'], 'news');
      const expiration = Number(r.headers['apns-expiration']);
      assert.ok(Math.abs(expiration - (Date.now() / 1000 + 3600)) < 120, `apns-expiration ${expiration}`);
    }
    // INFO's "relay" object and the dashboard's Relay page show the app.
    const https_ = relay.httpBase.replace('http:', 'https:');
    const info = JSON.parse(await getText(`${https_}/api/info`, pki));
    const app = info.relay.apps.find((a) => a.app === 'toot');
    assert.equal(app.accepted, 4);  // two from web-push, two from bulkhead's webpush jobs
    assert.equal(app.target, 'cx.c3.toot');
    const page = await getText(`${https_}/relay`, pki);
    assert.match(page, /<tr data-app="toot"><td>toot<\/td><td>APNs<\/td>/);
    // Many streams on few connections: one HTTP/2 connection served them all.
    assert.equal(new Set(prod.state.received.map((r) => r.session)).size, 1);
  });

  test('410 DELETEs the Unsubscribe-URL; BadDeviceToken is dead; 413 and 415 at the relay', async (t) => {
    const { pki, prod, dev, relay, tokens } = await setup(t);
    const sink = await startUnsubscribeSink(t);
    const gone = crypto.randomBytes(32).toString('hex');  // APNs does not know it: 410
    let r = await post(relay, pki, `/relay-to/production/${gone}`, Buffer.from('cipher'),
      { 'content-encoding': 'aes128gcm', ttl: '60', 'unsubscribe-url': `${sink.base}/api/web/push_subscriptions/7/unsubscribe` });
    assert.equal(r.status, 201, r.body);
    await waitFor(() => sink.calls.length === 1, { timeout: 20_000, message: 'the Unsubscribe-URL DELETE' });
    assert.deepEqual(sink.calls[0], { method: 'DELETE', url: '/api/web/push_subscriptions/7/unsubscribe' });
    // A production token sent to the sandbox: BadDeviceToken, dead, never unsubscribed.
    const prodToken = crypto.randomBytes(32).toString('hex');
    tokens.production.add(prodToken);
    r = await post(relay, pki, `/relay-to/development/${prodToken}`, Buffer.from('cipher'),
      { 'content-encoding': 'aes128gcm', 'unsubscribe-url': `${sink.base}/never` });
    assert.equal(r.status, 201);
    await waitFor(() => dev.state.answers.some((a) => a.reason === 'BadDeviceToken'),
      { timeout: 20_000, message: 'BadDeviceToken from the sandbox' });
    const metrics = () => getText(`${relay.httpBase.replace('http:', 'https:')}/metrics`, pki);
    await waitFor(async () => /bulkhead_relay_messages_total\{app="toot",event="dead"\} 1/.test(await metrics()),
      { message: 'the dead message counted' });
    assert.equal(sink.calls.length, 1, 'BadDeviceToken must not unsubscribe');
    // Refused at the relay, never stored.
    r = await post(relay, pki, `/relay-to/production/${prodToken}`, crypto.randomBytes(3400),
      { 'content-encoding': 'aes128gcm' });
    assert.equal(r.status, 413, r.body);
    r = await post(relay, pki, `/relay-to/production/${prodToken}`, Buffer.from('x'), { 'content-encoding': 'br' });
    assert.equal(r.status, 415);
    r = await post(relay, pki, '/relay-to/staging/abc', Buffer.from('x'), { 'content-encoding': 'aes128gcm' });
    assert.equal(r.status, 400);
    assert.equal(await getText(`${relay.relayBase}/relay-to/_health`, pki), 'OK\n');
    const text = await metrics();
    assert.match(text, /bulkhead_relay_refused_total\{app="toot",status="413"\} 1/);
    assert.match(text, /bulkhead_relay_reasons_total\{app="toot",reason="Unregistered"\} 1/);
    assert.equal(prod.state.received.length, 0);
  });

  test('while APNs holds every answer the relay still answers at once', async (t) => {
    const { pki, prod, relay, tokens } = await setup(t);
    prod.state.delayMs = 30_000;
    const slow = [];
    for (let i = 0; i < 200; i++) {
      const token = crypto.randomBytes(32).toString('hex');
      tokens.production.add(token);
      slow.push(post(relay, pki, `/relay-to/production/${token}`, crypto.randomBytes(100),
        { 'content-encoding': 'aes128gcm', ttl: '600' }));
    }
    const answers = await Promise.all(slow);
    assert.deepEqual([...new Set(answers.map((a) => a.status))], [201]);
    await waitFor(() => prod.state.inFlight > 0, { message: 'forwards held by APNs' });
    // Answered before APNs answered anything.
    assert.equal(prod.state.answers.length, 0);
  });

  test('APNs down: the relay answers 201 at once and forwards once APNs is back', async (t) => {
    const { pki, prod, relay, tokens, common, defer } = await setup(t);
    const port = prod.port;
    await prod.close();  // connections refused from now on
    const sent = [];
    for (let i = 0; i < 20; i++) {
      const token = crypto.randomBytes(32).toString('hex');
      tokens.production.add(token);
      sent.push(token);
      const r = await post(relay, pki, `/relay-to/production/${token}`, Buffer.from(token), { 'content-encoding': 'aes128gcm', ttl: '600' });
      assert.equal(r.status, 201);
    }
    const metrics = () => getText(`${relay.httpBase.replace('http:', 'https:')}/metrics`, pki);
    await waitFor(async () => /bulkhead_relay_messages_total\{app="toot",event="retried"\} [1-9]/.test(await metrics()),
      { timeout: 20_000, message: 'failed forwards while APNs is down' });
    const back = await startFakeApns({ ...common, environment: 'production', port });
    defer(() => back.close());
    await waitFor(() => new Set(back.state.received.map((r) => r.token)).size === 20,
      { timeout: 120_000, interval: 200, message: `the 20 messages after APNs came back (got ${back.state.received.length})` });
    assert.deepEqual(new Set(back.state.received.map((r) => r.token)), new Set(sent));
  });

  test('APNs refuses the provider token: the app stops and says why, no storm', async (t) => {
    const { pki, prod, relay, tokens } = await setup(t, { wrongKey: true });
    for (let i = 0; i < 10; i++) {
      const token = crypto.randomBytes(32).toString('hex');
      tokens.production.add(token);
      const r = await post(relay, pki, `/relay-to/production/${token}`, Buffer.from('x'), { 'content-encoding': 'aes128gcm', ttl: '3600' });
      assert.equal(r.status, 201, 'accepted all the same: delivered once the key is fixed, within the TTL');
    }
    const metrics = () => getText(`${relay.httpBase.replace('http:', 'https:')}/metrics`, pki);
    await waitFor(async () => /bulkhead_relay_app_stopped\{app="toot",reason="InvalidProviderToken"\} 1/.test(await metrics()),
      { timeout: 20_000, message: 'the app stopped' });
    const refusals = prod.state.answers.length;
    assert.ok(refusals <= 10, `${refusals} requests: at most those in flight when the first 403 came back`);
    assert.equal(relay.stderr.match(/relay: app toot stopped: APNs refused its credentials/g).length, 1, 'one log line');
    const page = await getText(`${relay.httpBase.replace('http:', 'https:')}/relay`, pki);
    assert.match(page, /stopped: InvalidProviderToken/);
    // Held: more messages wait parked instead of hammering APNs.
    for (let i = 0; i < 10; i++) {
      const token = crypto.randomBytes(32).toString('hex');
      assert.equal((await post(relay, pki, `/relay-to/production/${token}`, Buffer.from('x'), { 'content-encoding': 'aes128gcm' })).status, 201);
    }
    const info = JSON.parse(await getText(`${relay.httpBase.replace('http:', 'https:')}/api/info`, pki));
    assert.equal(info.relay.apps[0].stopped.reason, 'InvalidProviderToken');
    assert.equal(prod.state.answers.length, refusals, 'nothing sent while the app is stopped');
  });

  test('certificate authentication: a legacy .p12 presented to APNs over TLS', async (t) => {
    const defer = cleanupStack(t);
    const pki = makePki();
    defer(() => fs.rmSync(pki.dir, { recursive: true, force: true }));
    // The app's push certificate as Keychain Access exported it before macOS 14: RC2/3DES .p12.
    const sh = (...args) => execFileSync('openssl', args, { cwd: pki.dir, stdio: ['ignore', 'ignore', 'pipe'] });
    sh('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'push.key', '-out', 'push.csr', '-subj', '/CN=Apple Push Services: cx.c3.toot');
    sh('x509', '-req', '-in', 'push.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'push.crt', '-days', '2');
    sh('pkcs12', '-export', '-legacy', '-in', 'push.crt', '-inkey', 'push.key', '-out', 'push.p12', '-passout', 'pass:k3ychain');
    fs.writeFileSync(pki.file('push.pass'), 'k3ychain\n', { mode: 0o600 });
    const device = makeDevice();
    const apns = await startFakeApns({
      cert: fs.readFileSync(pki.file('server.crt')), key: fs.readFileSync(pki.file('server.key')),
      clientCa: pki.ca, topic: 'cx.c3.toot', tokens: { production: new Set([device.token]), development: new Set() },
      environment: 'production',
    });
    defer(() => apns.close());
    const relayPort = await freePort();
    const relay = await startServer(defer, { config: [
      `tls_cert_file = "${pki.file('server.crt')}"`, `tls_key_file = "${pki.file('server.key')}"`,
      `relay_listen = "127.0.0.1:${relayPort}"`, 'allow_private_targets = true',
      `delivery_ca_file = "${pki.file('ca.crt')}"`,
      '[[relay.apns]]', 'name = "toot"', 'topic = "cx.c3.toot"',
      `certificate_file = "${pki.file('push.p12')}"`, `certificate_password_file = "${pki.file('push.pass')}"`,
      `production_url = "${apns.url}"`, '',
    ].join('\n') });
    relay.relayBase = `https://127.0.0.1:${relayPort}`;
    await waitFor(() => relay.stderr.includes('relay: serving'), { message: 'the relay listener' });
    assert.match(relay.stderr, /APNs app toot \(topic cx\.c3\.toot, certificate authentication\)/);
    const res = await webpush.sendNotification(
      { endpoint: `${relay.relayBase}/relay-to/production/${device.token}`, keys: device.keys() }, 'via certificate',
      { vapidDetails: { subject: 'mailto:ops@social.example', publicKey: vapid.publicKey, privateKey: vapid.privateKey },
        agent: new https.Agent({ ca: pki.ca }) });
    assert.equal(res.statusCode, 201);
    await waitFor(() => apns.state.received.length === 1,
      { timeout: 20_000, message: `the notification at APNs (answers ${JSON.stringify(apns.state.answers)})` });
    const r = apns.state.received[0];
    assert.equal(r.headers.authorization, undefined, 'no provider token with a certificate');
    assert.equal(decryptOnDevice(device, r.payload).toString(), 'via certificate');
  });

  test('FCM: web-push through the OAuth2 token to FCM HTTP v1; UNREGISTERED; refused credentials stop the app', async (t) => {
    const { pki, relay, fcm } = await setup(t, { fcm: true });
    const devices = new Map();
    const sent = new Map();
    for (const encoding of ['aes128gcm', 'aesgcm']) {
      const device = makeDevice();
      device.token = `fcm-${encoding}:${crypto.randomBytes(40).toString('base64url')}`;
      fcm.tokens.add(device.token);
      devices.set(device.token, device);
      const text = `{"title":"via FCM ${encoding}"}`;
      sent.set(device.token, text);
      const res = await webpush.sendNotification(
        { endpoint: `${relay.relayBase}/relay-to/fcm/${device.token}/acct`, keys: device.keys() }, text,
        { contentEncoding: encoding, TTL: 600, topic: 'dm',
          vapidDetails: { subject: 'mailto:ops@social.example', publicKey: vapid.publicKey, privateKey: vapid.privateKey },
          agent: new https.Agent({ ca: pki.ca }) });
      assert.equal(res.statusCode, 201);
    }
    await waitFor(() => fcm.state.received.length === 2,
      { timeout: 20_000, message: `2 messages at the fake FCM (answers ${JSON.stringify(fcm.state.answers)})` });
    for (const msg of fcm.state.received) {
      const device = devices.get(msg.token);
      const data = msg.android.data;
      const payload = { p: data.p, k: data.k, s: data.s };
      assert.equal(decryptOnDevice(device, payload).toString(), sent.get(msg.token));
      assert.equal(data.x, 'acct');
      assert.equal(data.rfc, data.k === undefined ? '1' : undefined);
      assert.equal(msg.android.ttl, '600s');
      assert.equal(msg.android.collapse_key, 'dm');
      assert.equal(msg.android.priority, 'HIGH');
      assert.equal(msg.android.notification.title, '🎺');
    }
    assert.equal(fcm.state.exchanges, 1, 'one access token for both messages');
    // An unknown token without Unsubscribe-URL: a bulkhead.relay_token_gone outcome job.
    const r = await post(relay, pki, '/relay-to/fcm/gone-token', Buffer.from('x'), { 'content-encoding': 'aes128gcm' });
    assert.equal(r.status, 201);
    const client = new faktory.Client({ host: '127.0.0.1', port: relay.port, tlsOptions: { ca: pki.ca } });
    t.after(() => client.close());
    let outcome = null;
    await waitFor(async () => {
      outcome = await client.fetch('bulkhead');
      return outcome !== null;
    }, { timeout: 20_000, message: 'the relay_token_gone outcome job' });
    assert.equal(outcome.jobtype, 'bulkhead.relay_token_gone');
    assert.equal(outcome.args[0].event, 'relay_token_gone');
    assert.equal(outcome.args[0].status, 404);
    assert.equal(outcome.args[0].host, 'fcm:droid');
    // Refused credentials: the app stops and says why, with one token request, not a storm.
    fcm.state.refuseGrants = true;
    fcm.state.issued.clear();  // every access token is now invalid: 401, then a new exchange
    const before = fcm.state.exchanges;
    for (let i = 0; i < 20; i++) {
      const token = `t${i}`;
      fcm.tokens.add(token);
      assert.equal((await post(relay, pki, `/relay-to/fcm/${token}`, Buffer.from('x'), { 'content-encoding': 'aes128gcm' })).status, 201);
    }
    const metrics = () => getText(`${relay.httpBase.replace('http:', 'https:')}/metrics`, pki);
    await waitFor(async () => /bulkhead_relay_app_stopped\{app="droid",reason="credentials"\} 1/.test(await metrics()),
      { timeout: 20_000, message: 'the app stopped' });
    assert.match(relay.stderr, /relay: app droid stopped: FCM refused its credentials/);
    assert.ok(fcm.state.exchanges - before <= 2, `${fcm.state.exchanges - before} token requests`);
  });

  test('kill -9 with 5,000 accepted messages: none lost, none forwarded twice', async (t) => {
    const { pki, prod, relay, tokens } = await setup(t, { limits: 'rate_per_second = 0' });
    prod.state.fixed = { status: 503, reason: 'ServiceUnavailable', retryAfter: 1 };  // nothing forwarded
    const expected = new Set();
    const queue = [];
    for (let i = 0; i < 5000; i++) {
      const token = crypto.randomBytes(32).toString('hex');
      tokens.production.add(token);
      expected.add(token);
      queue.push(token);
    }
    const workers = Array.from({ length: 32 }, async () => {
      while (queue.length > 0) {
        const token = queue.pop();
        const r = await post(relay, pki, `/relay-to/production/${token}`, Buffer.from(token),
          { 'content-encoding': 'aes128gcm', ttl: '3600' });
        assert.equal(r.status, 201, r.body);
      }
    });
    await Promise.all(workers);
    relay.agent.destroy();
    await relay.kill9();
    prod.state.fixed = null;
    await relay.start();
    await waitFor(() => prod.state.received.length >= 5000,
      { timeout: 120_000, interval: 200, message: `5000 forwarded after the restart (got ${prod.state.received.length})` });
    const got = prod.state.received.map((r) => r.token);
    assert.equal(new Set(got).size, 5000);
    for (const token of got) assert.ok(expected.has(token));
    assert.equal(got.length, 5000, 'forwarded twice');
  });
});
