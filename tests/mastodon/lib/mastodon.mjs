// Mastodon, as far as the adapter's end-to-end tests need it: the initializer
// (integrations/mastodon/bulkhead.rb) loaded into a real `sidekiq` process (Debian's
// ruby-sidekiq) together with stand-ins of the Mastodon classes it touches
// (integrations/mastodon/test/stand_ins.rb, each citing the Mastodon file it mirrors), on an
// SQLite file as the database and a test redis-server as Mastodon's Redis.
//
//   const mastodon = await startMastodon(defer, redis, { bulkhead: server, env: {...} });
//   await mastodon.console({ insert: { accounts: [{ id: 1, username: 'alice' }] },
//                           perform_async: [['Web::PushNotificationWorker', 1, 2]] });
//   await mastodon.query('SELECT id FROM web_push_subscriptions');   // sqlite3, as rows
// Each console call is a Ruby process loading ActiveRecord and Sidekiq (seconds on a busy
// machine): a test gives each call all it can (rows with their ids, then the jobs).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { redisUrl, startSidekiq } from '../../sidekiq/lib/sidekiq.mjs';

const ADAPTER_TEST_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)),
  '..', '..', '..', 'integrations', 'mastodon', 'test');

// Runs console.rb (the stand-in database and Mastodon's Sidekiq client) with `doc` on stdin.
function runConsole(env, doc) {
  return new Promise((resolve, reject) => {
    const proc = execFile('ruby', [path.join(ADAPTER_TEST_DIR, 'console.rb')],
      { env: { ...process.env, ...env }, timeout: 60_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`ruby console.rb: ${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout));
      });
    proc.stdin.end(JSON.stringify(doc));
  });
}

// The rows `sql` selects in the stand-in database (the sqlite3 shell, waiting while Sidekiq writes).
function sqliteQuery(db, sql) {
  return new Promise((resolve, reject) => {
    execFile('sqlite3', ['-json', '-cmd', '.timeout 10000', db, sql], { timeout: 20_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`sqlite3 ${db} ${sql}: ${err.message}\n${stderr}`));
      else resolve(stdout.trim() === '' ? [] : JSON.parse(stdout));
    });
  });
}

// Mastodon's Sidekiq (queues push and default, as Mastodon's config/sidekiq.yml has them, and
// the outcome jobs' queue) with the initializer installed, in the worker shape `shape`
// (stand_ins.rb: 4.4, aesgcm, changed); `bulkhead` (a BulkheadServer) answers its keys API. Its
// database tables exist once this resolves (boot.rb creates them).
export async function startMastodon(defer, redis, { bulkhead = null, shape = '4.4', env = {} } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulkhead-mastodon-'));
  defer(() => fs.rmSync(dir, { recursive: true, force: true }));
  const mastodonEnv = {
    REDIS_URL: redisUrl(redis),
    MASTODON_DB: path.join(dir, 'mastodon.db'),
    MASTODON_SHAPE: shape,
    BULKHEAD_QUEUE: 'bulkhead',
    ...(bulkhead ? { BULKHEAD_URL: bulkhead.httpBase } : {}),
    ...env,
  };
  const sidekiq = await startSidekiq(defer, redis, {
    queues: ['push', 'default'], require: path.join(ADAPTER_TEST_DIR, 'boot.rb'), env: mastodonEnv,
  });
  return {
    sidekiq,
    console: (doc) => runConsole(mastodonEnv, doc),
    query: (sql) => sqliteQuery(mastodonEnv.MASTODON_DB, sql),
  };
}

// A push service in front of web-push-testing that answers as real push services do when the
// VAPID signature does not match the subscription's applicationServerKey: 403 Forbidden (RFC 8292
// section 4.2, "a 403 (Forbidden) status code might be used if authentication is invalid").
// web-push-testing checks the signature itself and answers 400 with its reason; that 400 becomes a
// 403, every other answer passes unchanged. Stopped after the test.
export async function startVapidCheckingProxy(defer, targetPort) {
  const refusals = /Invalid authentication token supplied|Invalid Crypto-Key header sent/;
  const server = http.createServer((req, res) => {
    const forward = http.request({
      host: '127.0.0.1', port: targetPort, path: req.url, method: req.method, headers: req.headers,
    }, (answer) => {
      const chunks = [];
      answer.on('data', (c) => chunks.push(c));
      answer.on('end', () => {
        const body = Buffer.concat(chunks);
        const status = answer.statusCode === 400 && refusals.test(body.toString()) ? 403 : answer.statusCode;
        res.writeHead(status, answer.headers).end(body);
      });
    });
    forward.on('error', (e) => res.writeHead(502).end(e.message));
    req.pipe(forward);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  defer(() => new Promise((resolve) => server.close(() => resolve())));
  return { port: server.address().port };
}

// The subscription's endpoint, sent through `proxy` instead of straight to web-push-testing.
export function throughProxy(endpoint, proxy) {
  const url = new URL(endpoint);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return url.toString();
}
