// `bulkhead replay --pipeline sidekiq`, scaled down to 8 s a run: a real Sidekiq process (15
// threads on `default`) and a real redis-server, the story's blackholed push relay. The 2019 way
// (the Sidekiq threads make the push requests) must stall as the incident did; the pushes handed
// to bulkhead through its Sidekiq bridge must keep the timeline under a second with every healthy
// push delivered on time. The replay starts and stops every process itself; this test checks that
// none is left behind.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { cleanupStack } from '../interop/lib/server.mjs';

function run(binary, args, timeoutMs) {
  return new Promise((resolve) => {
    execFile(binary, args, { timeout: timeoutMs, killSignal: 'SIGTERM' }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.code ?? 'killed') : 0, stdout, stderr });
    });
  });
}

// What the replay started and must have stopped: its `bulkhead serve` (whose arguments name the
// replay's scratch dir) and its Sidekiq process (which retitles itself, but keeps the replay's
// REPLAY_PUSH in its environment). redis-server is stopped on the same path as both.
function replayProcessesLeft() {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  const left = out.split('\n').filter((line) => line.includes('bulkhead-replay-sidekiq-'));
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let env = '';
    try {
      env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
    } catch {
      continue; // gone, or not ours
    }
    if (env.split('\0').some((v) => v.startsWith('REPLAY_PUSH='))) left.push(`pid ${pid} (sidekiq)`);
  }
  return left;
}

test('replay --pipeline sidekiq: the 2019 way stalls, handed to bulkhead it does not',
  async (t) => {
    const defer = cleanupStack(t);
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bulkhead-replay-sidekiq-test-'));
    defer(() => fs.rmSync(out, { recursive: true, force: true }));

    const r = await run(process.env.BULKHEAD_BINARY, [
      'replay', '--pipeline', 'sidekiq', '--duration', '8', '--no-progress', '--out', out,
    ], 150_000);
    t.diagnostic(r.stdout);
    assert.equal(r.code, 0, `replay exit code (stdout: ${r.stdout.slice(-3000)}\nstderr: ` +
      `${r.stderr.slice(-3000)})`);
    assert.match(r.stdout, /the 2019 way stalled, as in the incident/);

    const read = (leg) => JSON.parse(fs.readFileSync(path.join(out, leg, 'summary.json'), 'utf8'));
    const old = read('sidekiq-2019');
    const bridged = read('sidekiq-bulkhead');
    // 2019: every thread ends up waiting on the blackhole; timeline jobs stop running.
    assert.ok(old.run.timeline.run < old.run.timeline.enqueued,
      `2019: some timeline jobs never ran (${old.run.timeline.run} of ${old.run.timeline.enqueued})`);
    assert.ok(old.run.timeline.p99_ms > 1000, `2019: timeline p99 ${old.run.timeline.p99_ms} ms`);
    // Handed over: all timeline jobs ran, p99 under a second, every healthy push arrived.
    assert.equal(bridged.pass, true, JSON.stringify(bridged.verdicts));
    assert.equal(bridged.run.timeline.run, bridged.run.timeline.enqueued);
    assert.ok(bridged.run.timeline.p99_ms < 1000, `bridged p99 ${bridged.run.timeline.p99_ms} ms`);
    assert.equal(bridged.run.healthy.arrived, bridged.run.healthy.pushed);
    for (const leg of ['sidekiq-2019', 'sidekiq-bulkhead']) {
      assert.ok(fs.statSync(path.join(out, leg, 'replay.svg')).size > 0, `${leg}/replay.svg`);
    }
    assert.deepEqual(replayProcessesLeft(), [], 'every process the replay started has stopped');
  });
