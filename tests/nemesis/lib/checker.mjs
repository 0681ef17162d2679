// The nemesis history checker: reads the operations the clients recorded (lib/history.mjs, one
// JSON object a line) and reports, per run, which promises held:
//
//   lost          jobs whose PUSH was answered +OK and that no ACK was ever answered +OK for
//   ackedThenHanded  a FETCH sent after an ACK of the same job had been answered +OK (the server
//                 handed out a job it had confirmed done)
//   repushed      the same after a PUSH the client sent again once the job had been ACKed (an
//                 earlier attempt was answered with an error though the store had applied it):
//                 the job runs twice; reported, not counted against the server
//   duplicates    a job handed out again while its earlier hand-out was neither ACKed nor FAILed
//                 (+OK); each says whether a fault window overlapped the earlier hand-out
//   throttles     the most jobs of a throttled queue held at once (surely: from the FETCH's reply
//                 to the start of its ACK/FAIL) against the queue's limit
//   staleAcks     ACKs answered +OK for a hand-out that was no longer the job's current one
//   batches       success callbacks run per committed batch (missing: never; multi: more than once
//                 other than by a duplicate hand-out in a fault window)
//   unique        two PUSHes of one unique key both answered +OK while the first one's lock surely
//                 held (answered before the second was sent, not yet ACKed, within unique_for)
//   cron          jobs per cron due time (more than one: fired twice) and due times never seen
//
// Times are the client's (t0: request sent, t1: reply read; milliseconds), so every check only
// counts what is certain whatever the server did inside [t0, t1].
//
// Record kinds (op): meta {throttles: {queue: limit}, unique_for, cron_every_s, cron_jobtype,
// end}, push {jid, queue, reply, t0, t1, unique?}, fetch {jid|null, jobtype, queue, t0, t1},
// ack / fail {jid, reply, t0, t1}, batch {bid, callback, members, reply}, fault {name, t0, t1}.

export function parseHistory(text) {
  return text.split('\n').filter((l) => l.trim() !== '').map((l, i) => {
    try {
      return JSON.parse(l);
    } catch (e) {
      throw new Error(`history line ${i + 1} is not JSON: ${e.message}`);
    }
  });
}

const OK = 'OK';

function groupBy(items, keyOf) {
  const m = new Map();
  for (const it of items) {
    const k = keyOf(it);
    if (!m.has(k)) m.set(k, []);
    m.get(k).push(it);
  }
  return m;
}

function overlapsFault(faults, t0, t1) {
  return faults.some((f) => f.t0 <= t1 && (f.t1 ?? Infinity) >= t0);
}

// The cron scheduler's jid (engine/cron_scheduler.cc): 16 hex digits of randomness, then the due
// time in Unix microseconds in hex, then the entry's index in hex. Microseconds of 2004 to 2112
// have 13 hex digits.
export function cronDueMicros(jid) {
  const hex = jid.slice(16, 29);
  return /^[0-9a-f]{13}$/.test(hex) ? parseInt(hex, 16) : null;
}

function lostJobs(ops) {
  const pushedOk = new Set(ops.filter((o) => o.op === 'push' && o.reply === OK).map((o) => o.jid));
  const acked = new Set(ops.filter((o) => o.op === 'ack' && o.reply === OK).map((o) => o.jid));
  return { pushedOk: pushedOk.size, acked: acked.size, lost: [...pushedOk].filter((j) => !acked.has(j)) };
}

// Per jid, its hand-outs and ends in time order.
function timelines(ops) {
  const relevant = ops.filter((o) => (o.op === 'fetch' && o.jid) || o.op === 'ack' || o.op === 'fail');
  return groupBy(relevant, (o) => o.jid);
}

function handOuts(timeline, pushes, faults) {
  const ackedThenHanded = [];
  const repushed = [];
  const duplicates = [];
  const fetches = timeline.filter((o) => o.op === 'fetch').sort((a, b) => a.t1 - b.t1);
  const okEnds = timeline.filter((o) => o.op !== 'fetch' && o.reply === OK);
  for (const f of fetches) {
    const ack = okEnds.find((e) => e.op === 'ack' && e.t1 < f.t0);
    if (!ack) continue;
    // The client sent the PUSH again after the ACK (an earlier attempt's answer was an error,
    // though the store had applied it): a new job with an old jid, not the server's doing.
    const again = pushes.find((p) => p.t0 > ack.t1 && p.t0 < f.t1);
    const entry = { jid: f.jid, ackAnswered: ack.t1, fetchSent: f.t0, node: f.node };
    if (again) repushed.push({ ...entry, pushedAgain: again.t0, earlierReplies: [...new Set(pushes.filter((p) => p.t0 < ack.t1).map((p) => p.reply.replace(/, retrying$/, '')))].slice(0, 3) });
    else ackedThenHanded.push(entry);
  }
  for (let i = 1; i < fetches.length; i += 1) {
    const prev = fetches[i - 1];
    const cur = fetches[i];
    // A FAIL answered +OK before this FETCH's reply hands the job back on purpose (a retry).
    const failed = okEnds.some((e) => e.op === 'fail' && e.t1 >= prev.t0 && e.t0 <= cur.t1);
    const acked = okEnds.some((e) => e.op === 'ack' && e.t1 < cur.t0);
    if (failed || acked) continue;
    duplicates.push({
      jid: cur.jid, first: { node: prev.node, t: prev.t1 }, again: { node: cur.node, t: cur.t1 },
      inFault: overlapsFault(faults, prev.t0, cur.t1),
    });
  }
  return { ackedThenHanded, repushed, duplicates };
}

// Max jobs of `queue` surely held at once: from each FETCH's reply to the start of the first
// ACK/FAIL of that job by the same client after it (or the end of the run).
function throttleMax(ops, queue, limit, faults, end) {
  const fetches = ops.filter((o) => o.op === 'fetch' && o.jid && o.queue === queue);
  const ends = groupBy(ops.filter((o) => (o.op === 'ack' || o.op === 'fail')), (o) => `${o.c}|${o.jid}`);
  const points = [];
  for (const f of fetches) {
    const e = (ends.get(`${f.c}|${f.jid}`) ?? []).filter((x) => x.t0 >= f.t1).sort((a, b) => a.t0 - b.t0)[0];
    const until = e ? e.t0 : end;
    if (until > f.t1) points.push([f.t1, 1], [until, -1]);
  }
  points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);  // an end before a start at the same instant
  let held = 0;
  let max = 0;
  let at = null;
  for (const [t, d] of points) {
    held += d;
    if (held > max) { max = held; at = t; }
  }
  const over = max > limit;
  return { limit, max, at, over, inFault: over && at !== null && overlapsFault(faults, at, at) };
}

// A callback run twice because its first hand-out was caught in a fault window (a duplicate,
// counted as such) is reported in multiInFault; multi is a callback run twice otherwise.
function batchCallbacks(ops, duplicates) {
  const inFault = groupBy(duplicates.filter((d) => d.inFault), (d) => d.jid);
  const multiInFault = [];
  const committed = ops.filter((o) => o.op === 'batch' && o.reply === OK);
  const ran = groupBy(ops.filter((o) => o.op === 'ack' && o.reply === OK), (o) => o.jid);
  const acked = new Set(ran.keys());
  const missing = [];
  const multi = [];
  let due = 0;
  for (const b of committed) {
    if (!b.members.every((j) => acked.has(j))) continue;  // not every member succeeded: no callback due
    due += 1;
    const runs = ran.get(b.callback)?.length ?? 0;
    if (runs === 0) missing.push(b.bid);
    const explained = inFault.get(b.callback)?.length ?? 0;
    if (runs > 1 && runs - explained > 1) multi.push({ bid: b.bid, runs });
    else if (runs > 1) multiInFault.push({ bid: b.bid, runs });
  }
  return { committed: committed.length, due, missing, multi, multiInFault };
}

// ACKs answered +OK for a hand-out that was no longer the job's current one (the job had been
// handed out again since, after a fault): `finishedOther` ended the job while a later holder still
// had it (that holder's own ACK or FAIL came after), `afterDone` came after another holder's ACK
// had ended it (nothing left to finish; +OK as Faktory answers an unknown jid).
function staleAcks(ops) {
  const finishedOther = [];
  let afterDone = 0;
  const relevant = groupBy(ops.filter((o) => (o.op === 'fetch' && o.jid) || ((o.op === 'ack' || o.op === 'fail') && o.reply === OK)), (o) => o.jid);
  for (const [jid, list] of relevant) {
    const fetches = list.filter((o) => o.op === 'fetch');
    if (fetches.length < 2) continue;
    const acks = list.filter((o) => o.op === 'ack').sort((a, b) => a.t1 - b.t1);
    for (const a of acks.slice(1)) if (a.t0 > acks[0].t1) afterDone += 1;
    for (const a of acks) {
      const mine = fetches.filter((f) => f.c === a.c && f.t1 <= a.t0).sort((x, y) => y.t1 - x.t1)[0];
      if (!mine) continue;
      const later = fetches.find((f) => f.c !== a.c && f.t0 > mine.t1 && f.t1 < a.t0);
      if (!later) continue;
      const laterEnd = list.find((e) => e.op !== 'fetch' && e.c === later.c && e.t0 >= later.t1);
      if (laterEnd && laterEnd.t0 > a.t1) finishedOther.push({ jid, staleNode: a.node, ackAnswered: a.t1, holder: later.node });
    }
  }
  return { finishedOther, afterDone };
}

function uniqueViolations(ops, uniqueForS) {
  const pushes = ops.filter((o) => o.op === 'push' && o.unique && o.reply === OK);
  const acks = groupBy(ops.filter((o) => o.op === 'ack'), (o) => o.jid);
  const violations = [];
  for (const [key, list] of groupBy(pushes, (o) => o.unique)) {
    list.sort((a, b) => a.t0 - b.t0);
    for (let i = 0; i < list.length; i += 1) {
      const a = list[i];
      const released = Math.min(a.t0 + uniqueForS * 1000, ...(acks.get(a.jid) ?? []).map((x) => x.t0));
      for (const b of list.slice(i + 1)) {
        if (b.jid !== a.jid && a.t1 < b.t0 && b.t1 < released) {
          violations.push({ key, first: a.jid, second: b.jid, node: b.node, t: b.t1 });
        }
      }
    }
  }
  return violations;
}

// Due times (µs) between the first and the last seen that no job was fetched for; inFault: due
// within a fault window or one step before its start (the look for it may come after).
function cronFirings(ops, jobtype, everyS, faults) {
  if (!jobtype) return null;
  const fetched = ops.filter((o) => o.op === 'fetch' && o.jid && o.jobtype === jobtype);
  const byDue = groupBy(fetched, (o) => cronDueMicros(o.jid));
  const multi = [];
  for (const [due, list] of byDue) {
    const jids = new Set(list.map((o) => o.jid));
    if (jids.size > 1) multi.push({ due: new Date(due / 1000).toISOString(), jobs: jids.size });
  }
  const dues = [...byDue.keys()].filter((d) => d !== null).sort((a, b) => a - b);
  const skipped = [];
  if (dues.length > 1 && everyS) {
    const step = everyS * 1e6;
    const seen = new Set(dues.map((d) => Math.round((d - dues[0]) / step)));
    const last = Math.round((dues[dues.length - 1] - dues[0]) / step);
    for (let k = 0; k <= last; k += 1) if (!seen.has(k)) skipped.push(dues[0] + k * step);
  }
  const inFault = (due) => overlapsFault(faults, due / 1000, due / 1000 + everyS * 1000);
  const missingInFault = skipped.filter(inFault).length;
  return { dueTimes: dues.length, multi, missing: skipped.length, missingInFault,
    missingOutsideFault: skipped.length - missingInFault };
}

export function check(ops) {
  const meta = ops.find((o) => o.op === 'meta') ?? {};
  const faults = ops.filter((o) => o.op === 'fault');
  const end = meta.end ?? Math.max(0, ...ops.map((o) => o.t1 ?? 0));
  const { pushedOk, acked, lost } = lostJobs(ops);
  const ackedThenHanded = [];
  const repushed = [];
  const duplicates = [];
  const pushes = groupBy(ops.filter((o) => o.op === 'push'), (o) => o.jid);
  for (const [jid, timeline] of timelines(ops)) {
    const r = handOuts(timeline, pushes.get(jid) ?? [], faults);
    ackedThenHanded.push(...r.ackedThenHanded);
    repushed.push(...r.repushed);
    duplicates.push(...r.duplicates);
  }
  const throttles = {};
  for (const [q, limit] of Object.entries(meta.throttles ?? {})) {
    throttles[q] = throttleMax(ops, q, limit, faults, end);
  }
  const report = {
    scenario: meta.scenario ?? null,
    pushedOk,
    acked,
    lost,
    ackedThenHanded,
    repushed,
    duplicates: {
      count: duplicates.length,
      inFault: duplicates.filter((d) => d.inFault).length,
      outsideFault: duplicates.filter((d) => !d.inFault).length,
      examples: duplicates.slice(0, 10),
    },
    throttles,
    staleAcks: staleAcks(ops),
    batches: batchCallbacks(ops, duplicates),
    unique: uniqueViolations(ops, meta.unique_for ?? 0),
    cron: cronFirings(ops, meta.cron_jobtype, meta.cron_every_s, faults),
    faults: faults.map((f) => ({ name: f.name, ms: Math.round(f.t1 - f.t0) })),
  };
  report.violations = violationsOf(report);
  return report;
}

// One line per broken promise (empty when every promise held).
export function violationsOf(r) {
  const v = [];
  if (r.lost.length) v.push(`${r.lost.length} jobs answered +OK at PUSH were never ACKed (${r.lost.slice(0, 5).join(', ')})`);
  if (r.ackedThenHanded.length) v.push(`${r.ackedThenHanded.length} jobs handed out after their ACK was answered +OK`);
  if (r.duplicates.outsideFault) v.push(`${r.duplicates.outsideFault} duplicate hand-outs outside every fault window`);
  for (const [q, t] of Object.entries(r.throttles)) {
    if (t.over) v.push(`throttle ${q}: ${t.max} jobs held at once, limit ${t.limit}${t.inFault ? ' (in a fault window)' : ''}`);
  }
  if (r.batches.missing.length) v.push(`${r.batches.missing.length} batches whose success callback never ran`);
  if (r.batches.multi.length) v.push(`${r.batches.multi.length} batches whose success callback ran more than once`);
  if (r.unique.length) v.push(`${r.unique.length} unique jobs pushed while their lock held`);
  if (r.cron?.multi.length) v.push(`${r.cron.multi.length} cron due times fired more than once`);
  return v;
}

// A short human summary of a report (one line per figure).
export function summarize(r) {
  const thr = Object.entries(r.throttles).map(([q, t]) => `${q} ${t.max}/${t.limit}`).join(', ');
  return [
    `scenario ${r.scenario}: faults ${r.faults.map((f) => `${f.name} ${f.ms} ms`).join(', ') || 'none'}`,
    `  pushed +OK ${r.pushedOk}, acked ${r.acked}, lost ${r.lost.length}, handed out after ACK ${r.ackedThenHanded.length}` +
      ` (re-pushed by the client after its ACK ${r.repushed.length})`,
    `  duplicates ${r.duplicates.count} (in a fault window ${r.duplicates.inFault}, outside ${r.duplicates.outsideFault}); ` +
      `stale ACKs +OK: after another's ACK ${r.staleAcks.afterDone}, ending another holder's job ${r.staleAcks.finishedOther.length}`,
    `  throttle max held ${thr || '-'}; batches ${r.batches.committed} committed, ${r.batches.due} due, ` +
      `callback missing ${r.batches.missing.length}, more than once ${r.batches.multi.length} ` +
      `(by a fault-window duplicate ${r.batches.multiInFault.length})`,
    `  unique violations ${r.unique.length}; cron due times ${r.cron?.dueTimes ?? '-'}, ` +
      `fired twice ${r.cron?.multi.length ?? '-'}, missing ${r.cron?.missing ?? '-'}` +
      ` (in a fault window ${r.cron?.missingInFault ?? '-'})`,
    ...r.violations.map((v) => `  VIOLATION: ${v}`),
  ].join('\n');
}

// The faults x promises table of docs/reliability.md, one row per report.
export function markdownTable(reports) {
  const rows = reports.map((r) => {
    const thr = Object.values(r.throttles).map((t) => `${t.max} / ${t.limit}`).join(', ');
    const b = r.batches;
    return `| ${r.scenario} | ${r.faults.map((f) => `${f.name} (${(f.ms / 1000).toFixed(1)} s)`).join('; ')} | ` +
      `${r.pushedOk} | ${r.lost.length} | ${r.ackedThenHanded.length} | ${r.duplicates.inFault} / ${r.duplicates.outsideFault} | ` +
      `${r.staleAcks.afterDone} / ${r.staleAcks.finishedOther.length} | ${r.repushed.length} | ${thr} | ` +
      `${b.due}: ${b.missing.length} / ${b.multi.length} (${b.multiInFault.length}) | ${r.unique.length} | ` +
      `${r.cron.multi.length} / ${r.cron.missing} |`;
  });
  return ['| scenario | fault | jobs +OK | lost | handed out after ACK | duplicates in / outside a fault | ' +
    'stale ACKs +OK: after done / ending another holder\'s | re-pushed after ACK | throttle max / limit | ' +
    'batch callbacks due: missing / twice (twice by a fault duplicate) | unique violations | cron fired twice / due times skipped |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|', ...rows].join('\n');
}
