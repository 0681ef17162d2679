// The fan-out's world: which hosts exist, at which loopback address, which inboxes and push
// endpoints they serve, and the deliveries the benchmark asks for. Pure data, no I/O, shared by
// the benchmark (bench/fanout/fanout.mjs) and its small-scale test
// (tests/interop/fanout_receivers.test.mjs).
//
// Inbox hosts h0001.fanout.test ... are 127.1.X.Y (one address each); push services
// push1.fanout.test ... are 127.2.0.N. Every delivery has an index that names it on both sides:
// activitypub k = host * inboxesPerHost + inbox (path /users/uNN/inbox, one delivery per inbox
// per run, as one status fanned out to followers on servers without a shared inbox), webpush k
// (path /push/sK, one subscription per job).
import crypto from 'node:crypto';

export const DOMAIN = 'fanout.test';
export const KEY_ID = 'https://origin.fanout.test/users/alice#main-key';

const pad = (n, w) => String(n).padStart(w, '0');

// `count` inbox hosts and `pushCount` push-service hosts, each {name, ip, index, kind}.
export function makeHosts(count, pushCount) {
  if (count > 250 * 250) throw new Error(`at most ${250 * 250} inbox hosts`);
  const inboxes = [];
  for (let i = 0; i < count; i += 1) {
    inboxes.push({
      name: `h${pad(i + 1, 4)}.${DOMAIN}`, ip: `127.1.${Math.floor(i / 250)}.${(i % 250) + 1}`,
      index: i, kind: 'inbox',
    });
  }
  const pushes = [];
  for (let p = 0; p < pushCount; p += 1) {
    pushes.push({ name: `push${p + 1}.${DOMAIN}`, ip: `127.2.0.${p + 1}`, index: p, kind: 'push' });
  }
  return { inboxes, pushes };
}

// /etc/hosts lines for `hosts` (appended to the machine's own file inside the private mount
// namespace, so that bulkhead's getaddrinfo and Ruby's resolver both read them).
export function hostsFileLines(hosts) {
  return hosts.map((h) => `${h.ip}\t${h.name}`).join('\n') + '\n';
}

// A seeded PRNG (mulberry32): the same shuffled order on every run.
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function shuffled(values, seed) {
  const out = values.slice();
  const rnd = seededRandom(seed);
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

// One Create/Note activity of about `bytes` bytes of JSON (Mastodon's are 1.5-3 KB).
export function makeActivity(bytes = 2048) {
  const activity = {
    '@context': ['https://www.w3.org/ns/activitystreams', 'https://w3id.org/security/v1'],
    id: 'https://origin.fanout.test/users/alice/statuses/109876543210/activity',
    type: 'Create',
    actor: 'https://origin.fanout.test/users/alice',
    published: '2026-12-03T08:00:00Z',
    to: ['https://www.w3.org/ns/activitystreams#Public'],
    cc: ['https://origin.fanout.test/users/alice/followers'],
    object: {
      id: 'https://origin.fanout.test/users/alice/statuses/109876543210',
      type: 'Note',
      attributedTo: 'https://origin.fanout.test/users/alice',
      content: '',
    },
  };
  const base = JSON.stringify(activity).length;
  activity.object.content = `<p>${'Fan-out benchmark status. '.repeat(200)}`
    .slice(0, Math.max(0, bytes - base - 4)) + '</p>';
  return JSON.stringify(activity);
}

// What a Mastodon web push carries (app/serializers/web/notification_serializer.rb's fields).
export function makePushPayload() {
  return JSON.stringify({
    access_token: 'x'.repeat(43), preferred_locale: 'en', notification_id: 109876543210,
    notification_type: 'mention', icon: 'https://origin.fanout.test/avatars/original/missing.png',
    title: 'Alice mentioned you', body: 'Fan-out benchmark status, as a push notification.',
  });
}

// The inbox URL of delivery k.
export function inboxUrl(hosts, k, inboxesPerHost, port) {
  const h = hosts.inboxes[Math.floor(k / inboxesPerHost)];
  return `https://${h.name}:${port}/users/u${pad((k % inboxesPerHost) + 1, 2)}/inbox`;
}

// The push endpoint of subscription k (push services take turns).
export function pushEndpoint(hosts, k, port) {
  const h = hosts.pushes[k % hosts.pushes.length];
  return `https://${h.name}:${port}/push/s${k}`;
}

// Reads a request path back into its delivery index; -1 when it is neither form.
export function inboxIndex(hostIndex, path, inboxesPerHost) {
  const m = /^\/users\/u(\d{2})\/inbox$/.exec(path);
  if (!m) return -1;
  const inbox = Number(m[1]) - 1;
  return inbox >= 0 && inbox < inboxesPerHost ? hostIndex * inboxesPerHost + inbox : -1;
}

export function pushIndex(path) {
  const m = /^\/push\/s(\d+)$/.exec(path);
  return m ? Number(m[1]) : -1;
}

// `count` subscriber key pairs (RFC 8291 user agent keys: P-256 + a 16-byte auth secret), as
// base64url strings. Subscription k uses pair k % count, so the receivers can decrypt any push
// with a small table.
export function makeSubscriberKeys(count) {
  const keys = [];
  for (let i = 0; i < count; i += 1) {
    const ecdh = crypto.createECDH('prime256v1');
    ecdh.generateKeys();
    keys.push({
      p256dh: ecdh.getPublicKey().toString('base64url'),
      privateKey: ecdh.getPrivateKey().toString('base64url'),
      auth: crypto.randomBytes(16).toString('base64url'),
    });
  }
  return keys;
}

// Faktory jobs (bulkhead's built-in types, dispatch/delivery_job.h). The activity goes as a
// string, as Mastodon hands ActivityPub::DeliveryWorker its JSON serialised once.
export function activityPubJob(k, url, activity, runTag) {
  return {
    jid: `fo-${runTag}-ap-${k}`, jobtype: 'activitypub', queue: 'default',
    args: [{ inbox: url, activity, key_id: KEY_ID }],
  };
}

export function webPushJob(k, endpoint, keys, payload, runTag) {
  return {
    jid: `fo-${runTag}-wp-${k}`, jobtype: 'webpush', queue: 'default',
    args: [{
      subscription: { endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth } },
      payload, ttl: 172800, urgency: 'normal',
    }],
  };
}
