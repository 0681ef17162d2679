// The fan-out's summary: a table of every run and the ratios measured within the run (bulkhead
// against the Sidekiq way, against the machine's crypto limit, raised caps against defaults, and
// healthy hosts' rate beside never-answering hosts against their rate alone). Printed, and
// written as Markdown for docs/benchmarks.md. Returns false when a receiver check failed.
import fs from 'node:fs';

const f = (x, d = 0) => (Number.isFinite(x) ? x.toLocaleString('en-US', {
  minimumFractionDigits: d, maximumFractionDigits: d,
}) : '?');
const ratio = (a, b) => (a > 0 && b > 0 ? (a / b).toFixed(2) : 'n/a');

function table(results) {
  const rows = [
    '| run | load | delivered | s | deliveries/s | CPU s / 1,000 | peak RSS MB | TLS handshakes (resumed) | connections | PUSH→arrival p50 / p99 ms |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const split = r.cpuSplit ? ` (Sidekiq ${f((1000 * r.cpuSplit.sidekiq) / r.delivered, 2)} + redis)` : '';
    rows.push(`| ${r.name} | ${f(r.load, 1)} | ${f(r.delivered)}${r.complete ? '' : ` of ${f(r.expected)} (cut)`} | ` +
      `${f(r.seconds, 1)} | ${f(r.rate)} | ${f(r.cpuPer1000, 2)}${split} | ${f(r.peakRssMb)} | ` +
      `${f(r.handshakes)} (${f(r.resumed)}) | ${f(r.connections)} | ${f(r.p50Ms)} / ${f(r.p99Ms)} |`);
  }
  return rows;
}

function ratios({ limits, results }) {
  const by = Object.fromEntries(results.map((r) => [r.name, r]));
  const rate = (n) => by[n]?.rate;
  const lines = [];
  for (const s of ['fast', 'slow', 'stuck']) {
    const sk = rate(`${s}-ap-sidekiq`);
    lines.push(`${s}: activitypub deliveries/s, bulkhead / Sidekiq way: defaults ` +
      `${ratio(rate(`${s}-ap-bulkhead-defaults`), sk)}, caps raised ${ratio(rate(`${s}-ap-bulkhead-raised`), sk)}`);
  }
  const cpuB = by['fast-ap-bulkhead-defaults']?.cpuPer1000;
  const cpuS = by['fast-ap-sidekiq']?.cpuPer1000;
  lines.push(`fast: CPU per activitypub delivery, Sidekiq way (Sidekiq + redis) / bulkhead defaults: ${ratio(cpuS, cpuB)}`);
  // Each bulkhead run against the limit measured just before it (`limit`), and against the mean
  // of the limits measured before and after all runs.
  const vsLimit = (n, mean) => (by[n] ? `${ratio(by[n].rate, by[n].limit)} (${ratio(by[n].rate, mean)})` : 'n/a');
  for (const caps of ['defaults', 'raised']) {
    const ap = ['fast', 'slow', 'stuck'].map((s) => `${s} ${vsLimit(`${s}-ap-bulkhead-${caps}`, limits.rsaSign)}`);
    const wp = ['fast', 'slow'].map((s) => `${s} ${vsLimit(`${s}-wp-bulkhead-${caps}`, limits.pushTwoOps)}`);
    lines.push(`bulkhead ${caps}: activitypub/s ÷ RSA-2048 sign limit of the ${limits.cores} cores just ` +
      `before the run (in brackets: ÷ the mean of before/after all runs, ${f(limits.rsaSign)}/s): ${ap.join(', ')}; ` +
      `webpush/s ÷ P-256 limit for one ECDH + one ECDSA sign per push (mean ${f(limits.pushTwoOps)}/s): ${wp.join(', ')}`);
  }
  for (const [s, k] of [['fast', 'ap'], ['slow', 'ap'], ['stuck', 'ap'], ['fast', 'wp'], ['slow', 'wp']]) {
    lines.push(`${s} ${k}: caps raised / defaults ${ratio(rate(`${s}-${k}-bulkhead-raised`), rate(`${s}-${k}-bulkhead-defaults`))}`);
  }
  const keep2 = (a, b) => {
    const x = a / b;
    return Number.isFinite(x) ? `${x.toFixed(2)} (${x >= 0.95 ? 'meets' : 'BELOW'} 0.95)` : 'n/a';
  };
  const keep = (a, b) => keep2(rate(a), rate(b));
  lines.push(`never-answering hosts: healthy hosts' rate beside them / alone (run just before): ` +
    `bulkhead defaults ${keep('stuck-ap-bulkhead-defaults', 'alone-ap-bulkhead-defaults')}, caps raised ` +
    `${keep('stuck-ap-bulkhead-raised', 'alone-ap-bulkhead-raised')}, Sidekiq way ` +
    `${keep('stuck-ap-sidekiq', 'alone-ap-sidekiq')}`);
  const cpuUp = (a, b) => ratio(by[a]?.cpuPer1000, by[b]?.cpuPer1000);
  lines.push(`never-answering hosts: CPU per healthy delivery beside them / alone: bulkhead defaults ` +
    `${cpuUp('stuck-ap-bulkhead-defaults', 'alone-ap-bulkhead-defaults')}, caps raised ` +
    `${cpuUp('stuck-ap-bulkhead-raised', 'alone-ap-bulkhead-raised')}, Sidekiq way ${cpuUp('stuck-ap-sidekiq', 'alone-ap-sidekiq')}`);
  // openssl speed divides by CPU user time (its -elapsed is off): signs per CPU-second, which
  // other load on the machine moves far less than it moves rates per wall-clock second.
  const perCpu = (n) => (by[n] ? 1000 / by[n].cpuPer1000 : NaN);
  const apCpu = ['fast', 'slow'].map((s) => `${s} ${ratio(perCpu(`${s}-ap-bulkhead-defaults`), limits.rsaSign / limits.cores)}`);
  const wpCpu = ['fast', 'slow'].map((s) => `${s} ${ratio(perCpu(`${s}-wp-bulkhead-raised`), limits.pushTwoOps / limits.cores)}`);
  lines.push(`per CPU-second (less moved by other load): bulkhead activitypub deliveries per CPU-second ` +
    `(defaults) ÷ RSA-2048 signs per CPU-second: ${apCpu.join(', ')}; webpush per CPU-second (raised) ` +
    `÷ pushes per CPU-second at one ECDH + one ECDSA sign: ${wpCpu.join(', ')}`);
  return lines;
}

export function printReport(summary, mdFile) {
  const rows = table(summary.results);
  const lines = ratios(summary);
  console.log('--- summary');
  for (const l of rows) console.log(l);
  console.log('--- ratios (same run)');
  for (const l of lines) console.log(l);
  const l = summary.limits;
  const b = summary.limitsBefore ?? l;
  const a = summary.limitsAfter ?? l;
  fs.writeFileSync(mdFile, [
    `openssl speed -multi ${l.cores} (mean of before / after the runs): RSA-2048 ${f(l.rsaSign)} signs/s ` +
      `(${f(b.rsaSign)} / ${f(a.rsaSign)}); P-256 ECDH ${f(l.ecdh)}/s (${f(b.ecdh)} / ${f(a.ecdh)}), ` +
      `ECDSA ${f(l.ecdsaSign)} signs/s (${f(b.ecdsaSign)} / ${f(a.ecdsaSign)})`, '', ...rows, '', ...lines.map((x) => `- ${x}`), '',
  ].join('\n'));
  const bad = summary.results.filter((r) => r.failures > 0);
  for (const r of bad) {
    console.log(`${r.name}: receiver checks FAILED (${r.failures}): ${r.failureSamples.join(' | ')}`);
  }
  // Over the whole run, the samples must have been checked in full at least once per kind.
  for (const [kind, field] of [['activitypub', 'signature'], ['webpush', 'push']]) {
    const runs = summary.results.filter((r) => r.kind === kind);
    if (runs.length > 0 && runs.every((r) => r.checked[field] === 0)) {
      console.log(`${kind}: no ${field} was checked in full (FANOUT_SAMPLE too large for the run)`);
      bad.push(kind);
    }
  }
  return bad.length === 0;
}
