// Temp copies of the shipped alerting configuration for the end-to-end alerting test, with only
// what a test must change rewritten. Every rewrite is a small, explicit text substitution that
// must match an exact number of times, so a change to the shipped files fails the test loudly
// instead of silently testing something else.
//
// What is NOT rewritten, because it is what the test proves: every `expr`, every `labels` block,
// the Alertmanager `route` tree (matchers, receivers, every `group_by`) and `inhibit_rules`.
// alertmanagerCopyChanges() checks that by diffing the copy against the shipped file line by line.

// ---- Prometheus rules ------------------------------------------------------------------------

// `for:` durations are scaled from minutes to seconds (÷60): 5m → 5s, 10m → 10s, 2m → 2s,
// 30m → 30s. The queue-latency thresholds are scaled ÷10 (60 s → 6 s, 10 s → 1 s), because even
// with `for` shortened, a 60 s threshold alone would take longer than this test may run.
// Nothing else changes (range windows such as delta(...[1h]) stay as shipped: they only make
// the alerts stay firing longer, which this test wants).
export const FOR_SCALE = 1 / 60;          // a shipped `for: Nm` becomes `for: Ns`
export const LATENCY_THRESHOLD_SCALE = 1 / 10;

// The shipped latency thresholds, in seconds, and what this test turns them into.
export const SHIPPED_LATENCY_THRESHOLDS = { BulkheadQueueLatencyHigh: 10, BulkheadQueueLatencyCritical: 60 };
export const scaledThreshold = (alert) => SHIPPED_LATENCY_THRESHOLDS[alert] * LATENCY_THRESHOLD_SCALE;

// Parses the `for:` of one alert from the shipped rules text (in seconds, as shipped).
export function shippedForSeconds(rulesText, alert) {
  const block = alertBlock(rulesText, alert);
  const m = /^\s*for:\s*(\d+)([smh])\s*$/m.exec(block);
  if (!m) throw new Error(`alert ${alert} has no for: in the shipped rules`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2]];
}

function alertBlock(rulesText, alert) {
  const start = rulesText.indexOf(`- alert: ${alert}\n`);
  if (start < 0) throw new Error(`alert ${alert} not found in the shipped rules`);
  const next = rulesText.indexOf('- alert: ', start + 1);
  return rulesText.slice(start, next < 0 ? undefined : next);
}

function replaceExactly(text, pattern, replacer, expectedCount, what) {
  let n = 0;
  const out = text.replace(pattern, (...args) => {
    n += 1;
    return replacer(...args);
  });
  if (n !== expectedCount) {
    throw new Error(`rewriting ${what}: expected ${expectedCount} match(es) in the shipped file, found ${n} ` +
      '(the shipped file changed: update tests/e2e/lib/configs.mjs)');
  }
  return out;
}

// Returns the rules text with `for: Nm` → `for: Ns` and the two latency thresholds scaled.
export function scaleRulesForTest(rulesText) {
  const forCount = (rulesText.match(/^\s+for: \d+m\s*$/gm) || []).length;
  if (forCount === 0) throw new Error('no `for: Nm` in the shipped rules');
  if (/^\s+for: \d+[sh]\s*$/m.test(rulesText)) {
    throw new Error('the shipped rules use a `for:` unit other than minutes: extend scaleRulesForTest');
  }
  let out = replaceExactly(rulesText, /^(\s+for: )(\d+)m(\s*)$/gm,
    (_, pre, n, post) => `${pre}${Number(n) * 60 * FOR_SCALE}s${post}`, forCount, 'for: durations');
  for (const [alert, threshold] of Object.entries(SHIPPED_LATENCY_THRESHOLDS)) {
    const block = alertBlock(out, alert);
    const re = new RegExp(`^(\\s+expr: bulkhead_queue_latency_seconds > )${threshold}(\\s*)$`, 'gm');
    const scaled = replaceExactly(block, re, (_, pre, post) => `${pre}${scaledThreshold(alert)}${post}`,
      1, `${alert} threshold`);
    out = out.replace(block, () => scaled);
  }
  return out;
}

// ---- Alertmanager ----------------------------------------------------------------------------

// Timings of the root route (which the pager and chat routes inherit) for the test. The Watchdog
// route's own timings are left as shipped (group_wait 0s already).
//
// group_interval deliberately stays LONGER than the bound the test allows for the latency
// notification: if the new latency alert joined a group that already exists (the incident's
// failure mode: too coarse a group_by), Alertmanager would only send it at that group's next
// group_interval tick, after the bound, and the test would fail. With the shipped group_by it
// gets a group of its own, flushed after group_wait.
export const AM_TIMINGS = { group_wait: '1s', group_interval: '45s', repeat_interval: '1h' };
export const AM_GROUP_WAIT_S = 1;
export const AM_GROUP_INTERVAL_S = 45;

// The shipped receiver URLs all point at http://127.0.0.1:5001/alerts/<name>; the copy points
// them at the local webhook receiver, keeping the path (so the receiver sees which one it was).
export function rewriteAlertmanagerForTest(amText, webhookBase) {
  let out = replaceExactly(amText, /^(\s+- url: )http:\/\/127\.0\.0\.1:5001(\/alerts\/\w+)\s*$/gm,
    (_, pre, p) => `${pre}${webhookBase}${p}`, 3, 'receiver URLs');
  // Root route timings only: they are the only lines at exactly two spaces of indentation.
  out = replaceExactly(out, /^ {2}group_wait: 30s(.*)$/gm, (_, c) => `  group_wait: ${AM_TIMINGS.group_wait}${c}`,
    1, 'root group_wait');
  out = replaceExactly(out, /^ {2}group_interval: 5m(.*)$/gm,
    (_, c) => `  group_interval: ${AM_TIMINGS.group_interval}${c}`, 1, 'root group_interval');
  out = replaceExactly(out, /^ {2}repeat_interval: 4h(.*)$/gm,
    (_, c) => `  repeat_interval: ${AM_TIMINGS.repeat_interval}${c}`, 1, 'root repeat_interval');
  return out;
}

// The lines the copy changed, as [shipped, copy]; throws if any changed line is not a receiver URL
// or a root timing, i.e. if group_by, matchers, routes or inhibit_rules were touched.
export function alertmanagerCopyChanges(shipped, copy) {
  const a = shipped.split('\n');
  const b = copy.split('\n');
  if (a.length !== b.length) throw new Error('the Alertmanager copy has a different number of lines');
  const changed = [];
  for (let i = 0; i < a.length; i += 1) {
    if (a[i] === b[i]) continue;
    if (!/^\s+(- url|group_wait|group_interval|repeat_interval): /.test(a[i])) {
      throw new Error(`the Alertmanager copy changed line ${i + 1} (${JSON.stringify(a[i])}), ` +
        'which is not a receiver URL or a timing');
    }
    changed.push([a[i], b[i]]);
  }
  return changed;
}

// ---- Prometheus ------------------------------------------------------------------------------

export const SCRAPE_INTERVAL_S = 1;
export const EVAL_INTERVAL_S = 1;

export function prometheusConfig({ rulesPath, alertmanager, targets }) {
  return `# Written by tests/e2e/alerting.test.mjs
global:
  scrape_interval: ${SCRAPE_INTERVAL_S}s
  scrape_timeout: ${SCRAPE_INTERVAL_S}s
  evaluation_interval: ${EVAL_INTERVAL_S}s
rule_files:
  - ${JSON.stringify(rulesPath)}
alerting:
  alertmanagers:
    - static_configs:
        - targets: [${JSON.stringify(alertmanager)}]
scrape_configs:
  - job_name: bulkhead    # the shipped rules expect job="bulkhead"
    static_configs:
      - targets: [${targets.map((x) => JSON.stringify(x)).join(', ')}]
`;
}
