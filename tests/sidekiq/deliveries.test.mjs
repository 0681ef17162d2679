// Deliveries through the Sidekiq bridge, with real parts on loopback: jobs pushed by Ruby's
// Sidekiq::Client (Debian's ruby-sidekiq) onto a Sidekiq queue in a real redis-server, taken by
// bulkhead; Web Push delivered to the npm `web-push-testing` service (it verifies the VAPID JWT
// against the subscription's applicationServerKey and decrypts the payload); an expired
// subscription's 410 coming back as a Bulkhead::WebpushGone Sidekiq job that a real `sidekiq`
// process runs; ActivityPub deliveries checked by an inbox that verifies the signature, the
// Digest and the signed Collection-Synchronization header.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { startRedis } from '../cluster/lib/redis.mjs';
import {
  KEY_ID, digestMatches, keysCli, rsaKeyPair, signatureVerifies, startInbox, writePrivate,
} from '../interop/lib/inbox.mjs';
import { startPushService, vapidPublicKey } from '../interop/lib/push_service.mjs';
import { cleanupStack, waitFor } from '../interop/lib/server.mjs';
import {
  bridgeInfo, outcomesRecorded, sidekiqPush, startBridged, startSidekiq,
} from './lib/sidekiq.mjs';

const webpushArgs = (subscription, payload, context) => [{
  subscription: { endpoint: subscription.endpoint, keys: subscription.keys },
  payload,
  ttl: 60,
  context,
}];

test('webpush jobs from Sidekiq::Client.push and push_bulk are delivered; a 410 comes back as a ' +
  'Bulkhead::WebpushGone job that Sidekiq runs', async (t) => {
  const defer = cleanupStack(t);
  const redis = await startRedis(defer);
  const server = await startBridged(defer, redis, { config: 'allow_private_targets = true\n' });
  const push = await startPushService(t);
  const key = vapidPublicKey(server);
  const { data: live } = await push.call('/subscribe', { userVisibleOnly: 'true', applicationServerKey: key });
  const { data: gone } = await push.call('/subscribe', { userVisibleOnly: 'true', applicationServerKey: key });
  await push.call(`/expire-subscription/${gone.clientHash}`);

  const payloads = ['{"title":"single ✓"}', '{"title":"bulk 1"}', '{"title":"bulk 2"}'];
  const context = { web_push_subscription_id: 42, notification_id: 109 };
  const { jids } = await sidekiqPush(redis, {
    push: [{ class: 'webpush', queue: 'bulkhead', retry: 5, args: webpushArgs(live, payloads[0], { n: 0 }) }],
    push_bulk: [{
      class: 'webpush', queue: 'bulkhead',
      args: [webpushArgs(live, payloads[1], { n: 1 }), webpushArgs(live, payloads[2], { n: 2 })],
    }],
  });
  assert.equal(jids.length, 3);
  const messages = await waitFor(async () => {
    const { data } = await push.call('/get-notifications', { clientHash: live.clientHash });
    return data.messages.length >= 3 ? data.messages : null;
  }, { timeout: 20_000, message: 'three notifications decrypted by web-push-testing' });
  assert.deepEqual([...messages].sort(), [...payloads].sort(), 'each payload decrypts exactly');

  // The 410: an outcome job in the application's Sidekiq, run by its own worker class.
  await sidekiqPush(redis, {
    push: [{ class: 'webpush', queue: 'bulkhead', args: webpushArgs(gone, 'bye', context) }],
  });
  await startSidekiq(defer, redis);
  const recorded = await waitFor(async () => {
    const all = await outcomesRecorded(redis);
    return all.length > 0 ? all : null;
  }, { timeout: 30_000, message: 'Bulkhead::WebpushGone run by sidekiq' });
  assert.equal(recorded.length, 1);
  assert.equal(recorded[0].class, 'Bulkhead::WebpushGone');
  assert.match(recorded[0].jid, /^[0-9a-f]{24}$/);
  const { at, ...outcome } = recorded[0].args[0];
  assert.ok(!Number.isNaN(Date.parse(at)), at);
  assert.equal(outcome.event, 'webpush_gone');
  assert.equal(outcome.status, 410);
  assert.equal(outcome.jobtype, 'webpush');
  assert.equal(outcome.url, gone.endpoint);
  assert.deepEqual(outcome.context, context, 'the job\'s context, unchanged');

  const info = await bridgeInfo(server);
  assert.equal(info.up, true);
  assert.equal(info.taken, 4);
  assert.equal(info.dead, 0);
  assert.equal(info.outcomes_written, 1);
  // The queues' sizes are read from Redis once a poll (every second): wait for a poll that
  // follows the last take rather than expect the scrape to come after one.
  const metrics = await waitFor(async () => {
    const text = await (await fetch(`${server.httpBase}/metrics`)).text();
    return /^bulkhead_sidekiq_queue_size\{queue="bulkhead"\} 0$/m.test(text) ? text : null;
  }, { timeout: 10_000, message: 'bulkhead_sidekiq_queue_size{queue="bulkhead"} 0 (polled)' });
  assert.match(metrics, /^bulkhead_sidekiq_bridge_up 1$/m);
  assert.match(metrics, /^bulkhead_sidekiq_taken_total 4$/m);
});

test('activitypub jobs from Sidekiq reach an inbox that verifies the signature, Digest and ' +
  'Collection-Synchronization', async (t) => {
  const defer = cleanupStack(t);
  const redis = await startRedis(defer);
  const server = await startBridged(defer, redis, {
    config: 'allow_private_targets = true\n', sidekiq: 'queues = ["push", "bulkhead"]\n',
  });
  const inbox = await startInbox(defer);
  const { publicKey, privateKey } = rsaKeyPair();
  const added = await keysCli(server, ['add', KEY_ID, writePrivate(server.dataDir, 'alice.pem', privateKey)]);
  assert.equal(added.code, 0, added.stderr);
  const activity = JSON.stringify({
    '@context': 'https://www.w3.org/ns/activitystreams', type: 'Create',
    actor: 'https://social.example/users/alice', object: { type: 'Note', content: '<p>Hi ✓</p>' },
  });
  const sync = 'collectionId="https://social.example/users/alice/followers", ' +
    'url="https://social.example/users/alice/followers_synchronization", digest="b08ab695"';
  await sidekiqPush(redis, {
    push: [
      { class: 'activitypub', queue: 'push', retry: 16,
        args: [{ inbox: inbox.url, activity, key_id: KEY_ID, headers: { 'Collection-Synchronization': sync } }] },
      { class: 'activitypub', queue: 'bulkhead', args: [{ inbox: inbox.url, activity, key_id: KEY_ID }] },
    ],
  });
  await waitFor(() => inbox.received.length >= 2, { timeout: 20_000, message: 'two deliveries' });
  for (const request of inbox.received) {
    assert.equal(request.body.toString(), activity, 'the activity byte for byte');
    assert.ok(digestMatches(request), 'Digest is the body\'s SHA-256');
  }
  const synced = inbox.received.find((r) => r.headers['collection-synchronization']);
  assert.ok(synced, 'the header was sent');
  assert.equal(synced.headers['collection-synchronization'], sync);
  assert.ok(signatureVerifies(synced, publicKey,
    ['(request-target)', 'host', 'date', 'digest', 'content-type', 'collection-synchronization']),
  'signed, with collection-synchronization among the signed headers');
  const plain = inbox.received.find((r) => !r.headers['collection-synchronization']);
  assert.ok(signatureVerifies(plain, publicKey));
  assert.equal((await bridgeInfo(server)).taken, 2);
});
