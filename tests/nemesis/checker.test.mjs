// The nemesis checker (lib/checker.mjs) on hand-made histories: a clean history passes, and each
// kind of broken promise is found, with whether a fault window overlapped it.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { check, cronDueMicros, parseHistory } from './lib/checker.mjs';

const meta = (extra = {}) => ({ op: 'meta', scenario: 'hand-made', throttles: {}, unique_for: 60, ...extra });
const push = (jid, t, extra = {}) => ({ op: 'push', c: 'p', node: 'a', jid, queue: 'default', reply: 'OK', t0: t, t1: t + 1, ...extra });
const fetch = (jid, t, extra = {}) => ({ op: 'fetch', c: 'w', node: 'a', jid, jobtype: 'Work', queue: 'default', t0: t, t1: t + 1, ...extra });
const ack = (jid, t, extra = {}) => ({ op: 'ack', c: 'w', node: 'a', jid, reply: 'OK', t0: t, t1: t + 1, ...extra });
const fail = (jid, t, extra = {}) => ({ op: 'fail', c: 'w', node: 'a', jid, reply: 'OK', t0: t, t1: t + 1, ...extra });

test('a clean history: every promise held', () => {
  const r = check([meta({ throttles: { thr: 1 } }),
    push('j1', 0), fetch('j1', 10), ack('j1', 20),
    push('j2', 0, { queue: 'thr' }), fetch('j2', 30, { queue: 'thr' }), ack('j2', 40),
    push('j3', 0, { queue: 'thr' }), fetch('j3', 41, { queue: 'thr' }), ack('j3', 50)]);
  assert.deepEqual(r.violations, []);
  assert.equal(r.pushedOk, 3);
  assert.equal(r.acked, 3);
  assert.equal(r.throttles.thr.max, 1);
});

test('a job answered +OK and never ACKed is lost; a refused PUSH is not', () => {
  const r = check([meta(), push('j1', 0), fetch('j1', 10), ack('j1', 20, { reply: 'ERR store unavailable' }),
    push('j2', 0, { reply: 'ERR store unavailable' })]);
  assert.deepEqual(r.lost, ['j1']);
  assert.match(r.violations.join('\n'), /1 jobs answered \+OK at PUSH were never ACKed \(j1\)/);
});

test('a FETCH after the ACK was answered +OK is found', () => {
  const r = check([meta(), push('j1', 0), fetch('j1', 10), ack('j1', 20), fetch('j1', 30, { c: 'w2', node: 'b' }), ack('j1', 40, { c: 'w2' })]);
  assert.equal(r.ackedThenHanded.length, 1);
  assert.equal(r.ackedThenHanded[0].node, 'b');
  assert.match(r.violations.join('\n'), /1 jobs handed out after their ACK was answered \+OK/);
  // A FETCH whose reply overlapped the ACK's (sent before the ACK was answered) is not.
  const overlap = check([meta(), push('j1', 0), fetch('j1', 10), ack('j1', 20), fetch('j1', 20.5, { c: 'w2' }), ack('j1', 40, { c: 'w2' })]);
  assert.equal(overlap.ackedThenHanded.length, 0);
  // A PUSH the client sent again after the ACK (its first attempt answered an error) is reported
  // apart: a new job with an old jid.
  const again = check([meta(), push('j1', 0, { reply: 'ERR store unavailable: connection lost' }), fetch('j1', 10), ack('j1', 20),
    push('j1', 25), fetch('j1', 30, { c: 'w2' }), ack('j1', 40, { c: 'w2' })]);
  assert.equal(again.ackedThenHanded.length, 0);
  assert.deepEqual(again.repushed.map((x) => x.earlierReplies), [['ERR store unavailable: connection lost']]);
  assert.deepEqual(again.violations, []);
});

test('duplicates: inside a fault window reported, outside one a violation; a retry after FAIL is none', () => {
  const inFault = check([meta(), { op: 'fault', name: 'cut', t0: 12, t1: 15 },
    push('j1', 0), fetch('j1', 10), fetch('j1', 16, { c: 'w2' }), ack('j1', 30, { c: 'w2' })]);
  assert.deepEqual([inFault.duplicates.count, inFault.duplicates.inFault], [1, 1]);
  assert.deepEqual(inFault.violations, []);
  const outside = check([meta(), { op: 'fault', name: 'cut', t0: 100, t1: 150 },
    push('j1', 0), fetch('j1', 10), fetch('j1', 16, { c: 'w2' }), ack('j1', 30, { c: 'w2' })]);
  assert.equal(outside.duplicates.outsideFault, 1);
  assert.match(outside.violations.join('\n'), /1 duplicate hand-outs outside every fault window/);
  const retried = check([meta(), push('j1', 0), fetch('j1', 10), fail('j1', 12), fetch('j1', 16), ack('j1', 30)]);
  assert.equal(retried.duplicates.count, 0);
});

test('a throttled queue with more jobs held at once than its limit is found', () => {
  const r = check([meta({ throttles: { thr: 2 } }),
    ...['a', 'b', 'c'].map((j) => push(j, 0, { queue: 'thr' })),
    fetch('a', 10, { queue: 'thr', c: 'w1' }), fetch('b', 11, { queue: 'thr', c: 'w2' }), fetch('c', 12, { queue: 'thr', c: 'w3' }),
    ack('a', 20, { c: 'w1' }), ack('b', 20, { c: 'w2' }), ack('c', 20, { c: 'w3' })]);
  assert.equal(r.throttles.thr.max, 3);
  assert.match(r.violations.join('\n'), /throttle thr: 3 jobs held at once, limit 2/);
  // Held until the ACK is sent: a FETCH answered after another's ACK went out does not overlap it.
  const seq = check([meta({ throttles: { thr: 1 } }), push('a', 0, { queue: 'thr' }), push('b', 0, { queue: 'thr' }),
    fetch('a', 10, { queue: 'thr', c: 'w1' }), ack('a', 20, { c: 'w1' }), fetch('b', 19.5, { queue: 'thr', c: 'w2' }), ack('b', 30, { c: 'w2' })]);
  assert.equal(seq.throttles.thr.max, 1);
});

test('batch success callbacks: missing and run twice are found', () => {
  const batch = (bid, members) => ({ op: 'batch', c: 'b', bid, callback: `cb-${bid}`, members, reply: 'OK', t0: 0, t1: 1 });
  const r = check([meta(),
    batch('b1', ['m1']), push('m1', 1), fetch('m1', 2), ack('m1', 3), fetch('cb-b1', 5), ack('cb-b1', 6),
    batch('b2', ['m2']), push('m2', 1), fetch('m2', 2), ack('m2', 3),
    batch('b3', ['m3']), push('m3', 1), fetch('m3', 2), ack('m3', 3),
    fetch('cb-b3', 5), ack('cb-b3', 6), fetch('cb-b3', 7, { c: 'w2' }), ack('cb-b3', 8, { c: 'w2' }),
    batch('b4', ['m4']), push('m4', 1)]);  // never ACKed: no callback due (and m4 is lost)
  assert.deepEqual(r.batches.missing, ['b2']);
  assert.deepEqual(r.batches.multi, [{ bid: 'b3', runs: 2 }]);
  assert.equal(r.batches.due, 3);
  assert.match(r.violations.join('\n'), /1 batches whose success callback never ran/);
  assert.match(r.violations.join('\n'), /1 batches whose success callback ran more than once/);
  // Run twice because its first hand-out was caught in a fault: a duplicate, not a second firing.
  const f = check([meta(), { op: 'fault', name: 'cut', t0: 4, t1: 6 }, batch('b1', ['m1']), push('m1', 1), fetch('m1', 2), ack('m1', 3),
    fetch('cb-b1', 5), fetch('cb-b1', 7, { c: 'w2' }), ack('cb-b1', 8, { c: 'w2' }), ack('cb-b1', 9)]);
  assert.deepEqual([f.batches.multi.length, f.batches.multiInFault.length], [0, 1]);
});

test('stale ACKs answered +OK: after the job was done, and ending a job another worker still holds', () => {
  const r = check([meta(), { op: 'fault', name: 'cut', t0: 5, t1: 50 }, push('j1', 0), push('j2', 0),
    fetch('j1', 1), fetch('j1', 10, { c: 'w2', node: 'b' }), ack('j1', 20, { c: 'w2', node: 'b' }), ack('j1', 60),
    fetch('j2', 1), fetch('j2', 10, { c: 'w2', node: 'b' }), ack('j2', 60), ack('j2', 70, { c: 'w2', node: 'b' })]);
  assert.equal(r.staleAcks.afterDone, 2);
  assert.deepEqual(r.staleAcks.finishedOther.map((x) => [x.jid, x.staleNode, x.holder]), [['j2', 'a', 'b']]);
});

test('a unique job pushed while the lock surely held is found; after the ACK or the expiry it is not', () => {
  const u = (jid, t) => push(jid, t, { unique: 'k1' });
  const r = check([meta({ unique_for: 1 }), u('u1', 0), u('u2', 100), fetch('u1', 200), ack('u1', 300), ack('u2', 250),
    u('u3', 301), u('u4', 2000)]);
  assert.deepEqual(r.unique.map((x) => [x.first, x.second]), [['u1', 'u2']]);
  assert.match(r.violations.join('\n'), /1 unique jobs pushed while their lock held/);
});

test('cron: a due time fired twice and due times never seen are found', () => {
  const due = (s) => (1_796_000_000 + s) * 1e6;
  const jid = (rand, s) => `${rand.padStart(16, '0')}${due(s).toString(16)}0`;
  assert.equal(cronDueMicros(jid('1', 0)), due(0));
  const tick = (j, t) => fetch(j, t, { jobtype: 'Tick' });
  const r = check([meta({ cron_jobtype: 'Tick', cron_every_s: 1 }),
    tick(jid('1', 0), 1), tick(jid('2', 1), 2), tick(jid('3', 1), 3), tick(jid('4', 4), 4)]);
  assert.deepEqual(r.cron.multi, [{ due: new Date(due(1) / 1000).toISOString(), jobs: 2 }]);
  assert.equal(r.cron.missing, 2);
  assert.match(r.violations.join('\n'), /1 cron due times fired more than once/);
});

test('parseHistory names a line that is not JSON', () => {
  assert.throws(() => parseHistory('{"op":"meta"}\n{oops\n'), /history line 2 is not JSON/);
});
