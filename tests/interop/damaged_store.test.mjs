// A damaged SQLite store is refused at start: `bulkhead serve` exits non-zero with a message that
// names the file and what to do, instead of serving an empty store, invalid payloads or a store
// that silently lost acknowledged jobs. A healthy store killed with kill -9 still starts, after an
// integrity check, with every acknowledged job.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import faktory from 'faktory-worker';

import { BulkheadServer, waitFor } from './lib/server.mjs';

const N = 1000;
const PAGE = 4096;

function jidOf(i) {
  return `damaged-${String(i).padStart(6, '0')}`;
}

// A server on a fresh SQLite store (not started); disposed after the test.
function newServer(t) {
  const server = new BulkheadServer({ store: 'sqlite' });
  t.after(() => server.dispose());
  return server;
}

function storePath(server) {
  return server.store.slice('sqlite:'.length);
}

// Pushes `count` jobs, `perCall` per PUSH or PUSHB, several calls in flight (many group commits).
async function pushJobs(server, perCall, count = N) {
  const client = new faktory.Client({ url: server.url, poolSize: 4 });
  try {
    const calls = [];
    for (let b = 0; b < count; b += perCall) {
      const jobs = [];
      for (let i = b; i < Math.min(count, b + perCall); i += 1) {
        jobs.push({ jid: jidOf(i), jobtype: 'Damaged', args: [i, 'x'.repeat(200)] });
      }
      calls.push(perCall === 1 ? client.push(jobs[0]) : client.pushBulk(jobs));
    }
    await Promise.all(calls);
    assert.equal((await client.info()).faktory.queues.default, count);
  } finally {
    await client.close();
  }
}

// Starts the server on its (damaged) store and expects it to exit non-zero at startup with a
// message naming the file; returns the output.
async function expectRefused(server, ...expected) {
  await assert.rejects(server.start(), /exited during startup/);
  const exit = await server.exited;
  assert.notEqual(exit.code, 0, `exit ${JSON.stringify(exit)}`);
  assert.equal(exit.signal, null);
  const file = storePath(server);
  assert.match(server.stderr, new RegExp(`bulkhead: store file ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `),
    `the message names ${file}:\n${server.stderr}`);
  for (const e of expected) assert.ok(server.stderr.includes(e), `"${e}" in:\n${server.stderr}`);
  return server.stderr;
}

test('an existing 0-byte store file is refused, not served as an empty store', async (t) => {
  const server = newServer(t);
  fs.writeFileSync(storePath(server), '');
  await expectRefused(server, 'is empty (0 bytes)', 'restore it from a backup', 'delete');
  assert.equal(fs.statSync(storePath(server)).size, 0, 'the file is left as it was');
});

test('garbage in every page of the store is refused', async (t) => {
  const server = newServer(t);
  await server.start();
  await pushJobs(server, 100);
  await server.stop();
  const file = storePath(server);
  const size = fs.statSync(file).size;
  assert.ok(size > 50 * PAGE, `store of ${size} bytes`);
  const fd = fs.openSync(file, 'r+');
  const garbage = Buffer.alloc(64, 0xa7);
  for (let page = 1; page * PAGE < size; page += 1) fs.writeSync(fd, garbage, 0, garbage.length, page * PAGE + 2000);
  fs.closeSync(fd);
  await expectRefused(server, 'Restore');
});

test('payload rows corrupted with the sqlite3 CLI are refused, naming the rows', async (t) => {
  const server = newServer(t);
  await server.start();
  await pushJobs(server, 100);
  await server.stop();
  execFileSync('sqlite3', [storePath(server),
    "UPDATE jobs SET payload = substr(payload, 7) WHERE id % 10 = 0"]);
  const out = await expectRefused(server, `holds ${N / 10} damaged jobs`, 'payload is not a JSON object',
    '--salvage-damaged-jobs');
  assert.match(out, /id 10 \(jid "damaged-0000\d\d"\)/);
});

// At start only the first 10,000 queued payloads (by row id) are checked; the others are checked
// when FETCH first reads them: a damaged one is moved to damaged_jobs then, never handed out.
test('a damaged queued payload past the start check is set aside when fetched', async (t) => {
  const server = newServer(t);
  const count = 10_200;
  await server.start();
  await pushJobs(server, 600, count);
  await server.stop();
  const damaged = [10_050, 10_150].map(jidOf);
  execFileSync('sqlite3', [storePath(server),
    `UPDATE jobs SET payload = substr(payload, 7) WHERE jid IN ('${damaged.join("', '")}')`]);
  await server.start();
  assert.match(server.stderr, /checked 10000 of 10200 payloads at start/);
  const client = new faktory.Client({ url: server.url, poolSize: 8 });
  t.after(() => client.close());
  const served = new Set();
  for (;;) {
    const jobs = await Promise.all(Array.from({ length: 8 }, () => client.fetch('default')));
    for (const job of jobs.filter(Boolean)) {
      assert.equal(job.jid, jidOf(job.args[0]));
      served.add(job.jid);
    }
    if (jobs.some((job) => !job)) break;
  }
  assert.equal(served.size, count - damaged.length);
  for (const jid of damaged) assert.ok(!served.has(jid), `${jid} was handed out`);
  assert.equal((await client.info()).faktory.queues.default, 0);
  assert.match(server.stderr, /moved 1 damaged jobs to the table damaged_jobs \(id \d+ \(jid "damaged-010050"\): payload is not a JSON object\)/);
  await server.stop();
  const rows = execFileSync('sqlite3', [storePath(server), 'SELECT jid, reason FROM damaged_jobs ORDER BY id'])
    .toString().trim().split('\n');
  assert.deepEqual(rows, damaged.map((jid) => `${jid}|payload is not a JSON object`));
});

// The frames of the WAL's current generation (after a checkpoint SQLite rewrites the WAL from its
// start with new salts; frames further on are older and ignored): those carrying the header's salts.
function currentWalFrames(walPath) {
  if (!fs.existsSync(walPath)) return 0;
  const wal = fs.readFileSync(walPath);
  if (wal.length < 32) return 0;
  const salts = wal.subarray(16, 24);
  let frames = 0;
  while (32 + (frames + 1) * (PAGE + 24) <= wal.length &&
         wal.subarray(32 + frames * (PAGE + 24) + 8, 32 + frames * (PAGE + 24) + 16).equals(salts)) {
    frames += 1;
  }
  return frames;
}

test('garbage in the write-ahead log after kill -9 is refused as lost commits', async (t) => {
  const server = newServer(t);
  await server.start();
  await pushJobs(server, 5);  // many small commits, under the 1000-page checkpoint
  // PUSH is answered once it is in the redo log; the writer commits it to the WAL within its
  // group-commit window (5 ms). Wait until the WAL holds enough frames to damage one in the
  // middle with commits after it, however the pushes fell into transactions.
  const walPath = `${storePath(server)}-wal`;
  const frames = await waitFor(() => {
    const n = currentWalFrames(walPath);
    return n > 40 ? n : null;
  }, { timeout: 10_000, message: 'more than 40 frames in the WAL\'s current generation' });
  await server.kill9();
  // Garbage inside a frame in the middle: SQLite stops replaying there, dropping later commits.
  const frame = Math.floor(frames / 2);
  const fd = fs.openSync(`${storePath(server)}-wal`, 'r+');
  fs.writeSync(fd, Buffer.alloc(256, 0x5a), 0, 256, 32 + frame * (PAGE + 24) + 24 + 1000);
  fs.closeSync(fd);
  await expectRefused(server, 'acknowledged commits', `${storePath(server)}-commits`, 'accept the loss');
});

test('a healthy store killed with kill -9 starts after an integrity check with every job', async (t) => {
  const server = newServer(t);
  await server.start();
  await pushJobs(server, 5);
  await server.kill9();
  assert.ok(fs.statSync(`${storePath(server)}-wal`).size > 0, 'the kill left a WAL');
  await server.start();
  assert.match(server.stderr, /the last stop was not clean; quick_check passed/);
  const client = new faktory.Client({ url: server.url });
  t.after(() => client.close());
  assert.equal((await client.info()).faktory.queues.default, N);
  const job = await client.fetch('default');
  assert.equal(job.jid, jidOf(job.args[0]));
  assert.deepEqual(job.args, [job.args[0], 'x'.repeat(200)]);
  // And a clean stop skips the check at the next start.
  await server.stop();
  const before = server.stderr.length;
  await server.start();
  assert.doesNotMatch(server.stderr.slice(before), /quick_check/);
  assert.ok(fs.existsSync(path.dirname(storePath(server))));
});
