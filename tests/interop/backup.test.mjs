// `bulkhead backup` and `bulkhead restore` against real server processes: a backup taken while a
// faktory-worker client pushes, fetches and acks restores to a server that serves every job whose
// PUSH was acknowledged before the backup started (~10 MB: several steps of the copy) (and still holds the job a worker had reserved);
// the copy is mode 0600; restoring onto a running server's store is refused; bad paths and
// stores without a file are refused naming the problem.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import faktory from 'faktory-worker';

import { startRedis } from '../cluster/lib/redis.mjs';
import { cleanupStack, startServer } from './lib/server.mjs';

// Runs the bulkhead CLI; resolves with {code, stdout, stderr} (never rejects on exit status).
function cli(args) {
  return new Promise((resolve) => {
    execFile(process.env.BULKHEAD_BINARY, args, { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

function tempDir(defer) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulkhead-backup-'));
  defer(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const KEPT = 3000;

test('a backup under load restores every job acknowledged by PUSH before it started', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer, { store: 'sqlite' });
  const dir = tempDir(defer);
  const client = new faktory.Client({ url: server.url });
  defer(() => client.close());

  const kept = [];
  for (let b = 0; b < KEPT; b += 500) {
    const batch = [];
    for (let i = b; i < b + 500; i += 1) {
      const jid = `kept-${String(i).padStart(6, '0')}`;
      kept.push(jid);
      batch.push({ jid, jobtype: 'Kept', queue: 'kept', args: [i, 'x'.repeat(3000)] });
    }
    assert.deepEqual(await client.pushBulk(batch), {}, `PUSHB at ${b}`);
  }
  // A job a worker holds at backup time.
  await client.push({ jid: 'held-job-0001', jobtype: 'Held', queue: 'held', args: [] });
  const held = await client.fetch('held');
  assert.equal(held?.jid, 'held-job-0001');

  // Load: push, fetch and ack on another queue until the backup is over.
  let loading = true;
  let loadOps = 0;
  const load = (async () => {
    const loader = new faktory.Client({ url: server.url });
    try {
      for (let i = 0; loading; i += 1) {
        await loader.push({ jid: `load-job-${i}`, jobtype: 'Load', queue: 'load', args: [i] });
        const job = await loader.fetch('load');
        if (job) await loader.ack(job.jid);
        loadOps += 1;
      }
    } finally {
      await loader.close();
    }
  })();

  const copy = path.join(dir, 'copy.db');
  const started = Date.now();
  const backup = await cli(['backup', copy, '--http', `127.0.0.1:${server.httpPort}`]);
  t.diagnostic(`backup took ${Date.now() - started} ms under load`);
  loading = false;
  await load;
  assert.equal(backup.code, 0, `backup failed: ${backup.stderr}`);
  const pages = Number(/^backup written to .*copy\.db \(\d+ bytes, (\d+) pages/.exec(backup.stdout)?.[1]);
  assert.ok(pages > 1024, `the copy took a single step (${pages} pages): ${backup.stdout}`);
  assert.match(backup.stderr, /backup: \d+\/\d+ pages/, 'no progress shown');
  assert.ok(loadOps > 0, 'the load made no progress while the backup ran');
  assert.equal(fs.statSync(copy).mode & 0o777, 0o600, 'the backup holds signing keys: mode 0600');
  assert.ok(!fs.existsSync(`${copy}.tmp`), 'the temporary file was left behind');

  // Restoring onto the running server's store is refused, and changes nothing.
  const storePath = server.store.slice('sqlite:'.length);
  const sizeBefore = fs.statSync(storePath).size;
  const refused = await cli(['restore', copy, '--store', server.store]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /is in use: process \d+ .*stop the server first/);
  assert.equal(fs.statSync(storePath).size, sizeBefore);
  assert.ok(!fs.existsSync(`${storePath}.before-restore`));

  await client.close();
  await server.stop();
  const restore = await cli(['restore', copy, '--store', server.store]);
  assert.equal(restore.code, 0, `restore failed: ${restore.stderr}`);
  assert.match(restore.stdout, /schema version \d+/);
  const queued = Number(/queued (\d+)/.exec(restore.stdout)?.[1]);
  assert.ok(queued >= KEPT, `${queued} queued jobs restored, ${KEPT} were pushed before the backup`);
  // The held job, and the loader's job when the copy ended between its FETCH and its ACK (the
  // loader holds one at a time).
  const working = Number(/working (\d+)/.exec(restore.stdout)?.[1]);
  assert.ok(working === 1 || working === 2, `${working} reserved jobs restored: ${restore.stdout}`);
  assert.match(restore.stdout, /kept as .*store\.db\.before-restore/);
  await server.start();

  const after = new faktory.Client({ url: server.url });
  defer(() => after.close());
  // The worker that held held-1 can still finish it: its reservation was restored.
  await after.ack('held-job-0001');
  // Drained by 8 clients at once (a FETCH of the empty queue answers null after its block time).
  const served = new Set();
  await Promise.all(Array.from({ length: 8 }, async () => {
    const drain = new faktory.Client({ url: server.url });
    try {
      for (let job = await drain.fetch('kept'); job; job = await drain.fetch('kept')) {
        served.add(job.jid);
        await drain.ack(job.jid);
      }
    } finally {
      await drain.close();
    }
  }));
  const missing = kept.filter((jid) => !served.has(jid));
  assert.deepEqual(missing.slice(0, 10), [], `${missing.length} jobs pushed before the backup are missing`);
});

test('backup refuses bad paths and stores without a file, naming the problem', async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer, { store: 'sqlite' });
  const dir = tempDir(defer);
  const http = ['--http', `127.0.0.1:${server.httpPort}`];

  const missingDir = path.join(dir, 'no-such-dir', 'copy.db');
  let r = await cli(['backup', missingDir, ...http]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`backup path ${missingDir}: its directory .*No such file or directory`));

  r = await cli(['backup', dir, ...http]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /is a directory: name the backup file/);

  const notes = path.join(dir, 'notes.txt');
  fs.writeFileSync(notes, 'not a backup');
  r = await cli(['backup', notes, ...http]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /exists and is not an SQLite database: refusing to replace it/);
  assert.equal(fs.readFileSync(notes, 'utf8'), 'not a backup');

  r = await cli(['backup', server.store.slice('sqlite:'.length), ...http]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /is the store's own file/);

  r = await cli(['restore', path.join(dir, 'absent.db'), '--store', `sqlite:${path.join(dir, 's.db')}`]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /the backup .*absent\.db cannot be read/);

  const memory = await startServer(defer, { store: 'memory' });
  r = await cli(['backup', path.join(dir, 'm.db'), '--http', `127.0.0.1:${memory.httpPort}`]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /memory: store keeps nothing on disk/);
  r = await cli(['restore', path.join(dir, 'm.db'), '--store', 'memory:']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /restore replaces a sqlite: store/);

  const redis = await startRedis(defer);
  const onRedis = await startServer(defer, { store: `redis://${redis.endpoint}` });
  r = await cli(['backup', path.join(dir, 'r.db'), '--http', `127.0.0.1:${onRedis.httpPort}`]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /the Redis store lives in Redis: back it up there, with BGSAVE .* or AOF/);
});
