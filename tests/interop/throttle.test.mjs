// Queue throttling with the real npm `faktory-worker` client and worker against
// `bulkhead serve`: a worker process running 10 jobs at once on a queue throttled to
// `concurrency = 3` never runs more than 3 of them at the same time, and INFO shows the throttle.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import faktory from 'faktory-worker';

import { cleanupStack, startServer, waitFor } from './lib/server.mjs';

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

for (const store of ['sqlite', 'memory']) {
  test(`a throttled queue runs at most its concurrency at once (${store})`, async (t) => {
    const defer = cleanupStack(t);
    const server = await startServer(defer, {
      store,
      config: '[throttles]\nthrottled = { concurrency = 3, timeout = 60 }\n',
    });
    const client = new faktory.Client({ url: server.url });
    defer(() => client.close());

    const kJobs = 60;
    for (let i = 0; i < kJobs; i += 1) {
      const job = client.job('Slow', i);
      job.queue = 'throttled';
      await job.push();
    }
    for (let i = 0; i < 20; i += 1) {
      const job = client.job('Other', i);
      job.queue = 'other';
      await job.push();
    }

    let active = 0;
    let maxActive = 0;
    let done = 0;
    let othersDone = 0;
    let othersWhileFull = 0;
    const worker = new faktory.Worker({
      url: server.url,
      concurrency: 10,
      queues: ['throttled', 'other'],
      registry: {
        Slow: async () => {
          active += 1;
          maxActive = Math.max(maxActive, active);
          await sleep(25);  // the job's work
          active -= 1;
          done += 1;
        },
        Other: async () => {
          if (active === 3) othersWhileFull += 1;
          await sleep(5);
          othersDone += 1;
        },
      },
    });
    defer(() => worker.stop());
    await worker.work();

    const seenInfo = await waitFor(async () => {
      const i = await client.info();
      const thr = i.throttles?.throttled;
      return thr && thr.in_use === 3 && i;
    }, { timeout: 10_000, message: 'INFO shows the throttle with all 3 slots in use' });
    assert.deepEqual({ ...seenInfo.throttles.throttled, in_use: 3 },
      { concurrency: 3, timeout: 60, in_use: 3 });

    await waitFor(() => done === kJobs && othersDone === 20,
      { timeout: 30_000, message: `all jobs ran (throttled ${done}/${kJobs}, other ${othersDone}/20)` });
    assert.ok(maxActive <= 3, `at most 3 throttled jobs at once, saw ${maxActive}`);
    assert.equal(maxActive, 3, 'the 10 worker slots filled the throttle');
    assert.ok(othersWhileFull > 0,
      'the worker ran `other` jobs while `throttled` was full (a full queue is skipped)');
    await waitFor(async () => {
      const i = await client.info();
      return i.faktory.total_processed === kJobs + 20 && i.throttles.throttled.in_use === 0;
    }, { timeout: 10_000, message: 'INFO: every job processed, no slot held' });
  });
}
