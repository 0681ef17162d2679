// The Mastodon adapter (integrations/mastodon/bulkhead.rb) end to end, every part a real process
// on loopback, started and stopped by the test: the initializer in a real `sidekiq` process
// (Debian's ruby-sidekiq) over stand-ins of Mastodon's models and workers
// (integrations/mastodon/test/), a real redis-server as Mastodon's Redis, a real bulkhead taking
// the jobs through its Sidekiq bridge, web-push-testing as the push service, an inbox on loopback.
// What Mastodon's workers would decide is decided in Mastodon's Sidekiq; what they would send is
// sent by bulkhead; what bulkhead learns comes back as outcome jobs the initializer runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import webpush from 'web-push';

import { startRedis } from '../cluster/lib/redis.mjs';
import { KEY_ID, rsaKeyPair, signatureVerifies, startInbox } from '../interop/lib/inbox.mjs';
import { startPushService, vapidPublicKey } from '../interop/lib/push_service.mjs';
import { cleanupStack, waitFor } from '../interop/lib/server.mjs';
import { bridgeInfo, startBridged } from '../sidekiq/lib/sidekiq.mjs';
import { startMastodon, startVapidCheckingProxy, throughProxy } from './lib/mastodon.mjs';

const sum = (hash) => Object.values(hash).reduce((a, v) => a + Number(v), 0);

// HGETALL's raw redis-cli output as an object.
async function hgetall(redis, key) {
  const raw = await redis.cli('HGETALL', key);
  const lines = raw === '' ? [] : raw.split('\n');
  const out = {};
  for (let i = 0; i + 1 < lines.length; i += 2) out[lines[i]] = lines[i + 1];
  return out;
}

// Rows for the stand-in database: alice, bob, a French user, a mention from alice to bob.
const ALICE = 1;
const NOTIFICATION = 1;
const USER = 1;
function people({ privateKey = null } = {}) {
  return {
    users: [{ id: USER, locale: 'fr' }],
    accounts: [{ id: ALICE, username: 'alice', private_key: privateKey }, { id: 2, username: 'bob' }],
    notifications: [{ id: NOTIFICATION, type: 'mention', account_id: 2, from_account_id: ALICE, activity_id: 1 }],
  };
}

test('Web Push: a notification reaches the push service rendered in the subscription\'s locale; ' +
  'a gone subscription is destroyed; a burst of 403 (a wrong VAPID key) destroys nothing',
async (t) => {
  const defer = cleanupStack(t);
  const redis = await startRedis(defer);
  const server = await startBridged(defer, redis, { config: 'allow_private_targets = true\n' });
  const push = await startPushService(t);
  const key = vapidPublicKey(server);
  const subscribe = async (applicationServerKey) => (await push.call('/subscribe',
    { userVisibleOnly: 'true', applicationServerKey })).data;
  const live = await subscribe(key);
  const gone = await subscribe(key);
  await push.call(`/expire-subscription/${gone.clientHash}`);
  const otherKey = webpush.generateVAPIDKeys().publicKey;  // made for another server's key
  const refused = await Promise.all([1, 2, 3, 4].map(() => subscribe(otherKey)));
  const proxy = await startVapidCheckingProxy(defer, new URL(live.endpoint).port);

  const mastodon = await startMastodon(defer, redis, {
    bulkhead: server, env: { BULKHEAD_REFUSAL_BURST: '3', BULKHEAD_REFUSAL_WINDOW: '2' },
  });
  const subscriptions = [live, gone, ...refused].map((s, i) => ({
    id: i + 1, endpoint: throughProxy(s.endpoint, proxy), key_p256dh: s.keys.p256dh, key_auth: s.keys.auth,
    standard: true, data: JSON.stringify({ alerts: { mention: true } }), user_id: USER, access_token_id: 7,
  }));
  const [liveId, goneId, ...refusedIds] = subscriptions.map((s) => s.id);
  await mastodon.console({
    insert: { ...people(), web_push_subscriptions: subscriptions },
    perform_async: subscriptions.map((s) => ['Web::PushNotificationWorker', s.id, NOTIFICATION]),
  });

  const messages = await waitFor(async () => {
    const { data } = await push.call('/get-notifications', { clientHash: live.clientHash });
    return data.messages.length > 0 ? data.messages : null;
  }, { timeout: 30_000, message: 'the notification decrypted by web-push-testing' });
  const payload = JSON.parse(messages[0]);
  assert.equal(payload.title, 'alice vous a mentionné', 'rendered in the subscription\'s locale (fr)');
  assert.equal(payload.access_token, 'token-7');
  assert.ok(push.encodings.includes('aes128gcm'), `a standard subscription: aes128gcm (${push.encodings})`);

  const remaining = async () => (await mastodon.query('SELECT id FROM web_push_subscriptions')).map((r) => r.id);
  await waitFor(async () => !(await remaining()).includes(goneId),
    { timeout: 30_000, message: 'the expired subscription destroyed by Bulkhead::WebpushGone' });

  // Four refusals from one push service within the window: the third makes a burst, and the two
  // before it, decided a window later, are kept too.
  let seen = {};
  const kept = await waitFor(async () => {
    const hash = await hgetall(redis, 'bulkhead:webpush_refusals_kept');
    const scheduled = Number(await redis.cli('ZCARD', 'schedule'));
    seen = { kept: hash, scheduled, retry: Number(await redis.cli('ZCARD', 'retry')), rows: await remaining() };
    return sum(hash) >= 4 && scheduled === 0 ? hash : null;
  }, { timeout: 45_000, message: 'four refused subscriptions decided (bulkhead:webpush_refusals_kept)' })
    .catch((e) => { throw new Error(`${e.message}; seen ${JSON.stringify(seen)}\n${mastodon.sidekiq.log.slice(-3000)}`); });
  assert.deepEqual(Object.keys(kept), [`127.0.0.1:${proxy.port}`]);
  assert.deepEqual((await remaining()).sort(), [liveId, ...refusedIds].sort(), 'a burst destroys nothing');
  // Outcomes run on several Sidekiq threads, so the count the first line names is the burst size (3)
  // or more; a refusal arriving a window (2 s) after that line logs once more.
  const lines = [...mastodon.sidekiq.log.matchAll(/refused (\d+) Web Push notifications with 401\/403/g)];
  assert.ok(lines.length >= 1 && lines.length <= 2 && Number(lines[0][1]) >= 3,
    `an error line for the burst: ${JSON.stringify(lines.map((m) => m[0]))}\n${mastodon.sidekiq.log.slice(-3000)}`);
  assert.equal((await bridgeInfo(server)).taken, 6);

  // The testing clock does not move on a server started without --testing-clock.
  const moved = await fetch(`${server.httpBase}/api/testing/clock`,
    { method: 'POST', body: JSON.stringify({ advance_seconds: 60 }) });
  assert.equal(moved.status, 404);
  assert.match((await moved.json()).error, /--testing-clock/);
});

test('ActivityPub: deliveries signed with the key registered through the keys API; a failing ' +
  'inbox becomes an UnavailableDomain after bulkhead\'s unavailable period on its testing clock',
async (t) => {
  const defer = cleanupStack(t);
  const redis = await startRedis(defer);
  const server = await startBridged(defer, redis, {
    config: 'allow_private_targets = true\ndelivery.unavailable_after_days = 1\n', args: ['--testing-clock'],
  });
  const inbox = await startInbox(defer, () => 500);
  const { publicKey, privateKey } = rsaKeyPair();
  const mastodon = await startMastodon(defer, redis, { bulkhead: server });
  const activity = JSON.stringify({ type: 'Create', actor: 'https://social.example/users/alice', object: 'Hi ✓' });
  const deliver = (insert = {}) => mastodon.console({
    insert, perform_async: [['ActivityPub::DeliveryWorker', activity, ALICE, inbox.url]],
  });
  const unavailable = () => mastodon.query('SELECT domain FROM unavailable_domains');

  await deliver(people({ privateKey }));
  await waitFor(() => inbox.received.length >= 1, { timeout: 30_000, message: 'the first delivery' });
  const first = inbox.received[0];
  assert.equal(first.body.toString(), activity, 'the body Mastodon would send, byte for byte');
  assert.ok(signatureVerifies(first, publicKey), 'signed with alice\'s key, registered by the initializer');
  const keys = await (await fetch(`${server.httpBase}/api/keys`)).json();
  assert.deepEqual(keys.map((k) => k.key_id), [KEY_ID]);
  assert.deepEqual(await unavailable(), [], 'one failure is not an unavailable host');

  const answer = await fetch(`${server.httpBase}/api/testing/clock`,
    { method: 'POST', body: JSON.stringify({ advance_seconds: 86_400 + 60 }) });
  assert.equal(answer.status, 200, await answer.clone().text());
  assert.equal((await answer.json()).offset_seconds, 86_460);
  await deliver();
  await waitFor(async () => (await unavailable()).length > 0,
    { timeout: 30_000, message: 'Bulkhead::HostUnavailable to create the UnavailableDomain' });
  assert.deepEqual(await unavailable(), [{ domain: '127.0.0.1' }]);

  // Mastodon's availability check now keeps further deliveries to that domain in Mastodon.
  const taken = (await bridgeInfo(server)).taken;
  const processed = Number(await redis.cli('GET', 'stat:processed'));
  await deliver();
  await waitFor(async () => Number(await redis.cli('GET', 'stat:processed')) > processed,
    { timeout: 20_000, message: 'the third ActivityPub::DeliveryWorker job to run' });
  assert.equal((await bridgeInfo(server)).taken, taken, 'no job for an unavailable domain');
});

test('a Mastodon whose workers have another shape keeps them untouched and says why in one line',
  async (t) => {
    const defer = cleanupStack(t);
    const redis = await startRedis(defer);
    const mastodon = await startMastodon(defer, redis, { shape: 'changed' });
    await mastodon.console({
      insert: { webhooks: [{ id: 1, url: 'https://hooks.example/in', secret: 's' }] },
      perform_async: [['Webhooks::DeliveryWorker', 1, '{"event":"x"}']],
    });
    await waitFor(async () => Number(await redis.cli('LLEN', 'test:mastodon_sent')) === 1,
      { timeout: 20_000, message: 'Mastodon\'s own Webhooks::DeliveryWorker to run' });
    assert.equal(Number(await redis.cli('LLEN', 'queue:bulkhead')), 0, 'nothing handed to bulkhead');
    const lines = mastodon.sidekiq.log.split('\n').filter((l) => /bulkhead: .*left untouched/.test(l));
    assert.equal(lines.length, 1, mastodon.sidekiq.log);
    assert.match(lines[0], /Web::PushNotificationWorker#perform takes 3 arguments/);
  });
