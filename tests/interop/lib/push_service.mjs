// The npm `web-push-testing` mock push service, run in-process on a free port, and the
// `bulkhead vapid-key` CLI that names the public key its subscriptions are made for. Used by the
// Web Push interop tests and the Sidekiq bridge's.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

import { freePort, waitFor } from './server.mjs';

const require = createRequire(import.meta.url);
const WebPushTestingServer = require('web-push-testing/src/server.js');
const { PushApiModel } = require('web-push-testing/src/PushApiModel.js');

// Starts web-push-testing on a free port; stopped by t.after.
export async function startPushService(t) {
  const port = await freePort();
  const model = new PushApiModel();
  const encodings = [];  // Content-Encoding of each notification the service decrypted
  const authorizations = [];  // and its Authorization header
  const handleNotification = model.handleNotification.bind(model);
  model.handleNotification = async (clientHash, headers, body) => {
    const result = await handleNotification(clientHash, headers, body);
    encodings.push(headers.encoding);
    authorizations.push(headers.authorization);
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
  return { call, encodings, authorizations };
}

// Runs `bulkhead vapid-key ARGS` with `env` (on top of this process's environment, without
// Mastodon's variables unless given); resolves with {status, stdout, stderr}.
export function vapidKeyCli(args, env = {}) {
  const all = { ...process.env };
  delete all.VAPID_PRIVATE_KEY;
  delete all.VAPID_PUBLIC_KEY;
  return spawnSync(process.env.BULKHEAD_BINARY, ['vapid-key', ...args],
    { encoding: 'utf8', timeout: 10_000, env: { ...all, ...env } });
}

export function vapidPublicKey(server) {
  const r = vapidKeyCli(['--data-dir', server.dataDir], server.options.env);
  assert.equal(r.status, 0, `bulkhead vapid-key failed: ${r.stderr}`);
  return r.stdout.trim();
}
