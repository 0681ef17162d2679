// The incident replay on two nodes: `bulkhead replay --store redis://… --nodes 2` starts two
// `bulkhead serve` processes on one redis-server namespace, a timeline worker on each, spreads the
// load over both, and passes the same verdicts as on one node (exit code 0).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { cleanupStack } from '../interop/lib/server.mjs';
import { startRedis } from './lib/redis.mjs';

function run(binary, args, timeoutMs) {
  return new Promise((resolve) => {
    execFile(binary, args, { timeout: timeoutMs }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.code ?? 'killed') : 0, stdout, stderr });
    });
  });
}

test('bulkhead replay --store redis --nodes 2 passes its verdicts', async (t) => {
  const defer = cleanupStack(t);
  const redis = await startRedis(defer);
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bulkhead-replay-cluster-'));
  defer(() => fs.rmSync(out, { recursive: true, force: true }));

  const r = await run(process.env.BULKHEAD_BINARY, [
    'replay', '--store', `redis://${redis.endpoint}`, '--nodes', '2', '--duration', '10',
    '--no-progress', '--out', out,
  ], 120_000);
  t.diagnostic(r.stdout);
  assert.equal(r.code, 0, `replay exit code (stderr: ${r.stderr.slice(-2000)})`);
  assert.match(r.stdout, /store: redis, 2 nodes/);
  assert.doesNotMatch(r.stdout, /^FAIL/m);
  const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
  assert.ok(summary, 'summary.json written');
});
