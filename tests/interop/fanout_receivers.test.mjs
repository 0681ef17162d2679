// The fan-out benchmark's receivers (bench/fanout/receiver.mjs) at small scale, so that the fast
// path the benchmark measures cannot drift from the correct one: a real `bulkhead serve` delivers
// signed activitypub jobs to three HTTPS inboxes and webpush jobs to a push service, all on
// loopback addresses behind a local CA (`delivery_ca_file`), and the same receiver code the
// benchmark runs checks every one of them (sample of 1): Digest and draft-cavage signature with
// npm http-signature, aes128gcm decryption with npm http_ece, the VAPID token with node's crypto.
// Over HTTP/2 (what bulkhead's libcurl negotiates with an nginx-like server) and HTTP/1.1. The
// checks are shown to fail too: a request signed with another key, a push encrypted to another
// subscriber.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import faktory from 'faktory-worker';

import { makePki } from '../../bench/fanout/pki.mjs';
import { Receiver } from '../../bench/fanout/receiver.mjs';
import {
  KEY_ID, activityPubJob, inboxUrl, makeActivity, makePushPayload, makeSubscriberKeys,
  pushEndpoint, webPushJob,
} from '../../bench/fanout/topology.mjs';
import { cleanupStack, freePort, startServer, waitFor } from './lib/server.mjs';

const require = createRequire(import.meta.url);
const webpush = require('web-push');

const INBOXES_PER_HOST = 2;
const INBOX_HOSTS = ['127.0.0.11', '127.0.0.12', '127.0.0.13'];
const PUSH_HOSTS = ['127.0.0.21'];
const PUSHES = 4;

function world() {
  const inboxes = INBOX_HOSTS.map((ip, index) => ({ name: ip, ip, index, kind: 'inbox' }));
  const pushes = PUSH_HOSTS.map((ip, index) => ({ name: ip, ip, index, kind: 'push' }));
  return { inboxes, pushes };
}

function rsaKeyPair() {
  return crypto.generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}

// POSTs straight to a receiver (not through bulkhead); resolves with the status code.
function post(url, headers, body, ca) {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: 'POST', headers, ca }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// A draft-cavage rsa-sha256 signature as Mastodon makes it, with `privateKey`.
function signedHeaders(url, body, privateKey) {
  const u = new URL(url);
  const headers = {
    host: u.host, date: new Date().toUTCString(),
    digest: `SHA-256=${crypto.createHash('sha256').update(body).digest('base64')}`,
    'content-type': 'application/activity+json',
  };
  const signing = [`(request-target): post ${u.pathname}`,
    ...['host', 'date', 'digest', 'content-type'].map((h) => `${h}: ${headers[h]}`)].join('\n');
  const signature = crypto.sign('sha256', Buffer.from(signing), privateKey).toString('base64');
  headers.signature = `keyId="${KEY_ID}",algorithm="rsa-sha256",` +
    `headers="(request-target) host date digest content-type",signature="${signature}"`;
  return headers;
}

async function deliverAndCheck(t, protocol) {
  const defer = cleanupStack(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulkhead-fanout-test-'));
  defer(() => fs.rmSync(dir, { recursive: true, force: true }));
  const pki = makePki(dir, { ips: [...INBOX_HOSTS, ...PUSH_HOSTS] });
  const hosts = world();
  const port = await freePort();
  const receiver = new Receiver({
    hosts: [...hosts.inboxes, ...hosts.pushes], port, tls: pki, protocol,
  });
  await receiver.start();
  defer(() => receiver.stop());
  const { publicKey, privateKey } = rsaKeyPair();
  const pushKeys = makeSubscriberKeys(3);
  const activity = makeActivity(2048);
  const pushPayload = makePushPayload();
  const apCount = INBOX_HOSTS.length * INBOXES_PER_HOST;
  receiver.configure({
    delayMs: 0, sampleEvery: 1, inboxesPerHost: INBOXES_PER_HOST, publicKeyPem: publicKey,
    keyId: KEY_ID, pushKeys, pushPayload,
  });
  receiver.reset({ activitypub: apCount, webpush: PUSHES });

  const server = await startServer(defer, {
    config: `allow_private_targets = true\ndelivery_ca_file = "${pki.caFile}"\n`,
  });
  const put = await fetch(`${server.httpBase}/api/keys/${encodeURIComponent(KEY_ID)}`,
    { method: 'PUT', body: privateKey });
  assert.equal(put.status, 201, await put.text());
  const client = new faktory.Client({ url: server.url });
  defer(() => client.close());
  const jobs = [];
  for (let k = 0; k < apCount; k += 1) {
    jobs.push(activityPubJob(k, inboxUrl(hosts, k, INBOXES_PER_HOST, port), activity, protocol));
  }
  for (let k = 0; k < PUSHES; k += 1) {
    jobs.push(webPushJob(k, pushEndpoint(hosts, k, port), pushKeys[k % pushKeys.length],
      pushPayload, protocol));
  }
  const rejected = await client.pushBulk(jobs);
  assert.deepEqual(rejected, {}, 'every job accepted at PUSHB');

  await waitFor(() => receiver.stats.healthy + receiver.stats.failures >= apCount + PUSHES,
    { timeout: 20_000, message: `${apCount + PUSHES} deliveries at the receivers` });
  const { stats } = receiver;
  assert.deepEqual(stats.failureSamples, [], 'every delivery passes the receivers\' checks');
  assert.equal(stats.failures, 0);
  assert.deepEqual(stats.checked, { digest: apCount, signature: apCount, push: PUSHES, vapid: PUSHES });
  assert.ok([...receiver.arrivals.activitypub, ...receiver.arrivals.webpush].every((at) => at > 0),
    'each delivery recorded by its index');
  assert.ok(stats.handshakes >= INBOX_HOSTS.length + PUSH_HOSTS.length, 'a TLS handshake per host');
  if (protocol === 'h2') assert.equal(stats.h2Handshakes, stats.handshakes, 'bulkhead negotiates h2');
  else assert.equal(stats.h2Handshakes, 0);
  return { receiver, pki, hosts, port, activity, pushKeys, pushPayload };
}

async function checksCatchBadRequests({ receiver, pki, hosts, port, activity, pushKeys, pushPayload }) {
  const before = receiver.stats.failures;
  const url = inboxUrl(hosts, 1, INBOXES_PER_HOST, port);
  const forged = signedHeaders(url, activity, rsaKeyPair().privateKey);
  assert.equal(await post(url, forged, activity, pki.ca), 401, 'another key: 401');
  assert.ok(receiver.stats.failureSamples.at(-1).endsWith('Signature does not verify'),
    receiver.stats.failureSamples.at(-1));

  const endpoint = pushEndpoint(hosts, 2, port);
  const other = makeSubscriberKeys(1)[0];
  assert.notEqual(other.p256dh, pushKeys[2].p256dh);
  const vapid = webpush.generateVAPIDKeys();
  const details = webpush.generateRequestDetails(
    { endpoint, keys: { p256dh: other.p256dh, auth: other.auth } }, pushPayload,
    { vapidDetails: { subject: 'mailto:test@fanout.test', ...vapid }, contentEncoding: 'aes128gcm' });
  assert.equal(await post(endpoint, details.headers, details.body, pki.ca), 400,
    'a push encrypted to another subscriber: 400');
  assert.match(receiver.stats.failureSamples.at(-1), /push does not decrypt/);
  assert.equal(receiver.stats.failures, before + 2);
}

for (const protocol of ['h2', 'http1']) {
  test(`fan-out receivers verify every bulkhead delivery (${protocol}) and catch bad ones`, async (t) => {
    const ctx = await deliverAndCheck(t, protocol);
    await checksCatchBadRequests(ctx);
  });
}
