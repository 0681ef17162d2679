// The nemesis suite: every scenario of lib/scenarios.mjs against three Release nodes on one
// redis-server, each node behind its own fault proxy, with recording clients; the checker's
// report per scenario. `make nemesis-test` (in `make test`) runs the short versions (seconds
// each); `make nemesis` the full ones (NEMESIS_MODE=full), writing histories and reports to
// NEMESIS_OUT (default: a temp folder). NEMESIS_ONLY=name runs one scenario.
//
// The promises every scenario must keep (a failure here is a bug): no job answered +OK is lost;
// none is handed out after its ACK was answered +OK; no duplicate outside a fault window; the
// throttle's limit outside fault windows; every due batch callback runs, and once; every cron due
// time fires, and once. What a fault may break is reported (t.diagnostic) and asserted only where the
// design promises it (see docs/reliability.md).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { summarize } from './lib/checker.mjs';
import { runScenario } from './lib/run.mjs';
import { SCENARIOS } from './lib/scenarios.mjs';

const MODE = process.env.NEMESIS_MODE ?? 'short';
const OUT = process.env.NEMESIS_OUT ?? fs.mkdtempSync(path.join(os.tmpdir(), 'bulkhead-nemesis-'));
const ONLY = process.env.NEMESIS_ONLY;

// Promises a scenario is known not to keep, with the reason (docs/reliability.md): the test
// reports them and does not fail on them.
const KNOWN = {
  'clock-ahead': ['unique', 'cron'],
  // A cron claim written on the new primary but not acknowledged by a replica within
  // redis_wait_timeout_ms is answered as failed, and its retry finds it claimed: due times of the
  // fail-over's window can be skipped (docs/reliability.md). None outside it.
  'sentinel-cut': ['cron-in-fault'],
};

for (const scenario of Object.values(SCENARIOS)) {
  if (ONLY && scenario.name !== ONLY) continue;
  test(`nemesis ${scenario.name} (${MODE})`, async (t) => {
    const report = await runScenario(t, scenario, { mode: MODE, outDir: OUT });
    const { nodeLogs, ...saved } = report;
    fs.writeFileSync(path.join(OUT, `${scenario.name}.report.json`), `${JSON.stringify(saved, null, 2)}\n`);
    nodeLogs.forEach((log, i) => fs.writeFileSync(path.join(OUT, `${scenario.name}.node-${String.fromCharCode(97 + i)}.log`), log));
    for (const line of summarize(report).split('\n')) t.diagnostic(line);
    t.diagnostic(`history: ${path.join(OUT, `${scenario.name}.jsonl`)}`);
    const known = KNOWN[scenario.name] ?? [];
    assert.ok(report.pushedOk > 100, `load ran (${report.pushedOk} jobs pushed +OK)`);
    assert.equal(report.drainError, null, `drain: ${report.drainError}`);
    assert.deepEqual(report.lost, [], 'no job answered +OK is lost');
    assert.deepEqual(report.ackedThenHanded, [], 'no job handed out after its ACK was answered +OK');
    assert.equal(report.duplicates.outsideFault, 0, 'no duplicate outside a fault window');
    for (const [q, thr] of Object.entries(report.throttles)) {
      assert.ok(!thr.over || thr.inFault, `throttle ${q}: ${thr.max} held at once, limit ${thr.limit}`);
    }
    assert.deepEqual(report.batches.missing, [], 'every due batch callback ran');
    assert.deepEqual(report.batches.multi, [], 'no batch callback ran twice');
    if (!known.includes('unique')) assert.deepEqual(report.unique, [], 'no unique job pushed while its lock held');
    assert.deepEqual(report.cron.multi, [], 'no cron due time fired twice');
    // A due time is skipped only when no node could claim it for longer than the catch-up minute
    // (engine/cron_scheduler.h); no scenario keeps the store away from every node that long.
    if (known.includes('cron-in-fault')) {
      assert.equal(report.cron.missingOutsideFault, 0, 'no cron due time skipped outside the fault');
    } else if (!known.includes('cron')) {
      assert.equal(report.cron.missing, 0, 'no cron due time skipped');
    }
  });
}
