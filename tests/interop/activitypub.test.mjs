// ActivityPub deliveries end to end: a signing key registered with the real `bulkhead keys add`
// CLI (through the running server's HTTP API), `activitypub` jobs pushed with the npm
// `faktory-worker` client, and a local Node inbox that checks every request with the npm
// `http-signature` verifier (draft-cavage rsa-sha256) and the Digest header against the body.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';

import faktory from 'faktory-worker';

import {
  KEY_ID, SIGNED_HEADERS, digestMatches, fingerprint, keysCli, rsaKeyPair, signatureVerifies,
  startInbox, writePrivate,
} from './lib/inbox.mjs';
import { cleanupStack, startServer, waitFor } from './lib/server.mjs';

function activityJob(jid, inbox, activity, keyId = KEY_ID) {
  return { jid, jobtype: 'activitypub', queue: 'default', args: [{ inbox, activity, key_id: keyId }] };
}

function newClient(defer, server) {
  const client = new faktory.Client({ url: server.url });
  defer(() => client.close());
  return client;
}

// Waits until the job is delivered and acknowledged: nothing reserved, retrying or dead.
async function waitUntilSettled(client, message) {
  return waitFor(async () => {
    const { sets } = (await client.info()).faktory;
    return sets.working === 0 && sets.retries === 0 && sets.dead === 0 ? sets : null;
  }, { message });
}

test('a key added with `bulkhead keys add` signs deliveries that http-signature verifies', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer, { config: 'allow_private_targets = true\n' });
  const inbox = await startInbox(defer);
  const { publicKey, privateKey } = rsaKeyPair();
  const pemFile = writePrivate(server.dataDir, 'alice.pem', privateKey);

  const added = await keysCli(server, ['add', KEY_ID, pemFile]);
  assert.equal(added.code, 0, added.stderr);
  assert.match(added.stdout, /^added https:\/\/social\.example\/users\/alice#main-key \(rsa-sha256, 2048 bits, /);
  assert.ok(added.stdout.includes(fingerprint(publicKey)), added.stdout);
  assert.ok(added.stdout.includes('-----BEGIN PUBLIC KEY-----'), added.stdout);
  assert.ok(!added.stdout.includes('PRIVATE KEY'));

  // Listings show the public half only.
  for (const args of [['list'], ['list', '--json']]) {
    const listed = await keysCli(server, args);
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(listed.stdout.includes(KEY_ID), listed.stdout);
    assert.ok(!listed.stdout.includes('PRIVATE KEY'), listed.stdout);
  }
  const api = await fetch(`${server.httpBase}/api/keys`);
  const apiText = await api.text();
  assert.equal(api.status, 200);
  assert.ok(!apiText.includes('PRIVATE KEY'));
  assert.deepEqual(JSON.parse(apiText), [{
    key_id: KEY_ID, algorithm: 'rsa-sha256', bits: 2048, public_key_pem: publicKey,
    fingerprint: fingerprint(publicKey),
  }]);

  const client = newClient(defer, server);
  const activity = {
    '@context': 'https://www.w3.org/ns/activitystreams',
    id: 'https://social.example/users/alice/statuses/1/activity',
    type: 'Create',
    actor: 'https://social.example/users/alice',
    object: { type: 'Note', content: 'Grüße ✓ — signed by bulkhead' },
  };
  await client.push(activityJob('ap-deliver-0001', inbox.url, activity));
  const [request] = await waitFor(() => (inbox.received.length > 0 ? inbox.received : null),
    { message: 'the activity to reach the inbox' });
  assert.equal(request.method, 'POST');
  assert.equal(request.url, '/inbox');
  assert.equal(request.headers['content-type'], 'application/activity+json');
  assert.ok(signatureVerifies(request, publicKey), 'http-signature verifies the delivery');
  assert.ok(digestMatches(request), 'the Digest header matches the body');
  assert.deepEqual(JSON.parse(request.body.toString('utf8')), activity);
  await waitUntilSettled(client, 'the delivery to be acknowledged');
  assert.equal(inbox.received.length, 1, 'delivered once');

  // Tampering: one byte of the body changed breaks the digest; a signed header changed breaks
  // the signature.
  const tamperedBody = Buffer.from(request.body);
  tamperedBody[tamperedBody.length - 2] ^= 0x01;
  assert.ok(!digestMatches({ ...request, body: tamperedBody }), 'a changed body fails the digest');
  for (const [name, value] of [['content-type', 'application/json'], ['date', new Date(Date.now() + 1000).toUTCString()],
    ['digest', `SHA-256=${crypto.createHash('sha256').update(tamperedBody).digest('base64')}`]]) {
    assert.notEqual(request.headers[name], value);
    const changed = { ...request, headers: { ...request.headers, [name]: value } };
    assert.ok(!signatureVerifies(changed, publicKey), `a changed ${name} header fails verification`);
  }
  const otherKey = rsaKeyPair().publicKey;
  assert.ok(!signatureVerifies(request, otherKey), 'another key does not verify');

  // An unknown key id is refused at PUSH, with the reason.
  await assert.rejects(client.push(activityJob('ap-unknown-001', inbox.url, activity,
    'https://social.example/users/mallory#main-key')),
  /no signing key is registered for "https:\/\/social\.example\/users\/mallory#main-key"/);

  // The key is kept in the store: after a restart on the same data dir it still signs.
  await client.close();
  await server.restart();
  const listed = await keysCli(server, ['list']);
  assert.equal(listed.code, 0, listed.stderr);
  assert.ok(listed.stdout.includes(KEY_ID), listed.stdout);
  const again = newClient(defer, server);
  await again.push(activityJob('ap-deliver-0002', inbox.url, { ...activity, id: `${activity.id}/2` }));
  await waitFor(() => inbox.received.length === 2, { message: 'the second delivery after restart' });
  assert.ok(signatureVerifies(inbox.received[1], publicKey));
  assert.ok(digestMatches(inbox.received[1]));
  await waitUntilSettled(again, 'the second delivery to be acknowledged');

  // Removed keys are refused at PUSH again.
  const removed = await keysCli(server, ['remove', KEY_ID]);
  assert.equal(removed.code, 0, removed.stderr);
  await assert.rejects(again.push(activityJob('ap-removed-001', inbox.url, activity)),
    /no signing key is registered/);
  const missing = await keysCli(server, ['remove', KEY_ID]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no signing key is registered .*HTTP 404/);
});

test('with a password the keys API needs the bearer token; bad keys are refused with the reason', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer, { password: 'open sesame' });
  const { privateKey } = rsaKeyPair();
  const pemFile = writePrivate(server.dataDir, 'alice.pem', privateKey);
  const keyUrl = `${server.httpBase}/api/keys/${encodeURIComponent(KEY_ID)}`;

  const anonymous = await fetch(keyUrl, { method: 'PUT', body: privateKey });
  assert.equal(anonymous.status, 401);
  assert.match(anonymous.headers.get('www-authenticate'), /^Bearer /);
  assert.match((await anonymous.json()).error, /Authorization: Bearer/);
  const wrong = await fetch(keyUrl, { method: 'PUT', body: privateKey, headers: { authorization: 'Bearer nope' } });
  assert.equal(wrong.status, 401);
  assert.equal((await fetch(`${server.httpBase}/api/keys`)).status, 401);
  assert.equal((await fetch(`${server.httpBase}/api/workers/some-worker/quiet`, { method: 'POST' })).status, 401);
  assert.equal((await server.setWorkerState('some-worker', 'quiet')).status, 404, 'with the token: unknown worker');

  const noPassword = await keysCli(server, ['add', KEY_ID, pemFile]);
  assert.equal(noPassword.code, 1);
  assert.match(noPassword.stderr, /needs its password: set BULKHEAD_PASSWORD/);
  const withPassword = await keysCli(server, ['add', KEY_ID, pemFile], { password: 'open sesame' });
  assert.equal(withPassword.code, 0, withPassword.stderr);
  const bearer = await fetch(keyUrl, { method: 'PUT', body: privateKey, headers: { authorization: 'Bearer open sesame' } });
  assert.equal(bearer.status, 200, 'replacing an existing key answers 200');

  // Refusals name the problem and never echo the key.
  const small = writePrivate(server.dataDir, 'small.pem', rsaKeyPair(1024).privateKey);
  const encrypted = writePrivate(server.dataDir, 'encrypted.pem',
    rsaKeyPair(2048, { cipher: 'aes-256-cbc', passphrase: 'pw' }).privateKey);
  const ec = writePrivate(server.dataDir, 'ec.pem', crypto.generateKeyPairSync('ec', {
    namedCurve: 'P-256', privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  }).privateKey);
  for (const [file, reason] of [[small, /at least 2048 bits, has 1024/], [encrypted, /encrypted/],
    [ec, /must be an RSA key/]]) {
    const r = await keysCli(server, ['add', 'https://social.example/users/bob#main-key', file],
      { password: 'open sesame' });
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, reason);
    assert.match(r.stderr, /HTTP 400/);
    assert.ok(!r.stderr.includes('BEGIN'), r.stderr);
  }
  const listed = await keysCli(server, ['list'], { password: 'open sesame' });
  assert.equal(listed.code, 0, listed.stderr);
  assert.equal(listed.stdout.trim().split('\n').length, 1, listed.stdout);
  assert.ok(!server.stderr.includes('PRIVATE KEY'), 'the server never logs key material');
});

// What Mastodon's ActivityPub::DeliveryWorker does that a job must be able to say: the activity
// as the JSON bytes Mastodon serialised (the Digest covers them), and follower synchronisation's
// Collection-Synchronization header, signed with the others (app/lib/request.rb). And a 4xx is
// dead at once, reported with its status and the job's context.
test('a string activity arrives byte for byte with Collection-Synchronization signed; a 403 is dead with its status',
  async (t) => {
    const defer = cleanupStack(t);
    const server = await startServer(defer, { config: 'allow_private_targets = true\n' });
    const inbox = await startInbox(defer, (req) => (req.url.startsWith('/forbidden') ? 403 : 202));
    const { publicKey, privateKey } = rsaKeyPair();
    const added = await keysCli(server, ['add', KEY_ID, writePrivate(server.dataDir, 'alice.pem', privateKey)]);
    assert.equal(added.code, 0, added.stderr);
    const client = newClient(defer, server);

    // Spacing, key order, escapes and non-ASCII as the application wrote them.
    const activity = '{"@context":"https://www.w3.org/ns/activitystreams",  "type" :"Create",\n' +
      '"id":"https://social.example/users/alice/statuses/2/activity","object":{"content":' +
      '"caf\\u00e9 Grüße \\"q\\"","n":1.50}}\n';
    const sync = 'collectionId="https://social.example/users/alice/followers", ' +
      'url="https://social.example/users/alice/followers_synchronization", ' +
      'digest="b08ab6951c7d6cc2b91e17ebd9557da7fae02489728e9ea8d4fc1fa6c2e1bd1e"';
    await client.push({
      jid: 'ap-string-0001', jobtype: 'activitypub', queue: 'push',
      args: [{ inbox: inbox.url, activity, key_id: KEY_ID, headers: { 'Collection-Synchronization': sync } }],
    });
    const [request] = await waitFor(() => (inbox.received.length > 0 ? inbox.received : null),
      { message: 'the activity to reach the inbox' });
    assert.ok(request.body.equals(Buffer.from(activity, 'utf8')), `body: ${request.body}`);
    assert.ok(digestMatches(request), 'the Digest header matches the bytes sent');
    assert.equal(request.headers['collection-synchronization'], sync);
    assert.match(request.headers.signature,
      /headers="\(request-target\) host date digest content-type collection-synchronization"/);
    assert.ok(signatureVerifies(request, publicKey, [...SIGNED_HEADERS, 'collection-synchronization']),
      'http-signature verifies the signature over collection-synchronization too');
    const changed = { ...request, headers: { ...request.headers, 'collection-synchronization': `${sync} ` } };
    assert.ok(!signatureVerifies(changed, publicKey), 'a changed Collection-Synchronization fails');
    await waitUntilSettled(client, 'the delivery to be acknowledged');

    // Headers other than Collection-Synchronization are refused at PUSH, naming the rule.
    await assert.rejects(client.push({
      jid: 'ap-header-0001', jobtype: 'activitypub', queue: 'push',
      args: [{ inbox: inbox.url, activity, key_id: KEY_ID, headers: { 'User-Agent': 'x' } }],
    }), /an activitypub job may set only Collection-Synchronization/);

    const forbidden = inbox.url.replace('/inbox', '/forbidden/inbox');
    const context = { status_id: '110', account_id: 3 };
    await client.push({
      jid: 'ap-forbidden-01', jobtype: 'activitypub', queue: 'push',
      args: [{ inbox: forbidden, activity, key_id: KEY_ID, context }],
    });
    const dead = await waitFor(async () => {
      const job = await client.fetch('bulkhead');
      return job ?? null;
    }, { timeout: 15_000, message: 'the bulkhead.delivery_dead job' });
    assert.equal(dead.jobtype, 'bulkhead.delivery_dead');
    const { at, ...outcome } = dead.args[0];
    assert.ok(!Number.isNaN(Date.parse(at)));
    assert.deepEqual(outcome, {
      event: 'delivery_dead', host: new URL(forbidden).host, status: 403, reason: 'http 403',
      jid: 'ap-forbidden-01', jobtype: 'activitypub', url: forbidden, context,
    });
    await client.ack(dead.jid);
    assert.equal(inbox.received.length, 2, 'the 403 was not retried');
  });
