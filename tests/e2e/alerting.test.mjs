// End to end: bulkhead /metrics → real Prometheus (shipped rules) → real Alertmanager (shipped
// routes, group_by and inhibit rules) → webhook receiver.
//
// The story: a Mastodon admin's queue-latency alert never paged, because another alert was already
// firing and the new one was folded into it (Alertmanager grouping), and the StatsD gauges froze
// because they were only updated when a job finished, i.e. never while every worker was stuck.
// This test reproduces that situation and proves that with bulkhead's figures (computed at scrape
// time) and its shipped configuration the latency alert still reaches the pager, as its own
// notification (its own group key, so PagerDuty/Opsgenie would open a new incident), promptly.
//
// Why these "first" alerts (both stay firing for the whole test):
//   * BulkheadNoWorkers on a second bulkhead instance ("other"), which has jobs waiting and no
//     worker. It is critical, so it goes to the same `pager` receiver as the latency alert: had
//     group_by been coarse ([] or [job] or [severity]), the latency alert would have joined this
//     already-notified group and only been sent at its next group_interval tick (45 s here, beyond
//     the bound), under the same group key: the incident's failure. BulkheadNoWorkers cannot be
//     used on the main instance: the latency incident needs a connected (stuck) worker there,
//     which resolves it.
//   * BulkheadDeadSetGrowing on the main instance (jobs pushed with retry: -1 and FAILed, so they
//     go straight to the dead set): an unrelated alert firing on the very server whose queue then
//     stalls. delta(...[1h]) keeps it firing for an hour, far longer than the test.
//   A side effect, left in on purpose: the other instance's waiting "mail" jobs also make its
//   BulkheadQueueLatencyCritical{queue="mail"} fire during phase 2, so the new page must also
//   stay apart from a firing alert of the same name on another queue.
//
// Only the things a test must change are rewritten in temp copies (tests/e2e/lib/configs.mjs):
// receiver URLs, the root route's group_wait/group_interval/repeat_interval, `for:` (minutes →
// seconds) and the two latency thresholds (÷10). Prometheus runs with
// --rules.alert.resend-delay=1s so an alert evaluated before Prometheus has discovered the
// Alertmanager is resent within a second instead of a minute.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import faktory from 'faktory-worker';

import { cleanupStack, freePort, startServer, waitFor } from '../interop/lib/server.mjs';
import {
  AM_GROUP_INTERVAL_S, AM_GROUP_WAIT_S, EVAL_INTERVAL_S, FOR_SCALE, SCRAPE_INTERVAL_S,
  alertmanagerCopyChanges, prometheusConfig, rewriteAlertmanagerForTest, scaleRulesForTest,
  scaledThreshold, shippedForSeconds,
} from './lib/configs.mjs';
import { Child, startWebhookReceiver } from './lib/procs.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SHIPPED_RULES = path.join(REPO, 'deploy/prometheus/bulkhead.rules.yml');
const SHIPPED_AM = path.join(REPO, 'deploy/alertmanager/alertmanager.yml');
const PROMETHEUS = process.env.PROMETHEUS_BINARY || '/usr/bin/prometheus';
const ALERTMANAGER = process.env.ALERTMANAGER_BINARY || '/usr/bin/prometheus-alertmanager';

// Slack on top of every derived bound: Prometheus' rule-group and scrape phase offsets, the
// notifier's batching, Alertmanager's dispatch, HTTP round trips, a loaded CI machine.
const SLACK_S = 6;
const DEAD_JOBS = 25;          // > the shipped threshold of 20 (delta over 1h)
const STUCK_QUEUE_JOBS = 5;    // one is fetched by the stuck worker, four wait

const secondsSince = (t0) => ((Date.now() - t0) / 1000).toFixed(1);

async function getJson(url) {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

const labelsMatch = (labels, want) => Object.entries(want).every(([k, v]) => labels?.[k] === v);

// The receiver's notifications at `receiverPath` that carry a firing alert with these labels.
function notificationsWith(receiver, receiverPath, want) {
  return receiver.notifications.filter((n) => n.path === receiverPath &&
    (n.body.alerts || []).some((a) => a.status === 'firing' && labelsMatch(a.labels, want)));
}

test('a stalled queue pages on its own while an unrelated alert is already firing', { timeout: 150_000 },
  async (t) => {
    const defer = cleanupStack(t);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bulkhead-e2e-alerting-'));
    defer(() => fs.rmSync(tmp, { recursive: true, force: true }));
    const diagnostics = [];  // () => Promise<string>, run only when the test fails

    try {
      // ---- bulkhead: the main instance and a second one ---------------------------------------
      const main = await startServer(defer, { store: 'memory' });
      const other = await startServer(defer, { store: 'memory' });
      const mainInstance = `127.0.0.1:${main.httpPort}`;
      const otherInstance = `127.0.0.1:${other.httpPort}`;
      diagnostics.push(async () => `--- bulkhead main (${mainInstance}) log tail ---\n${main.stderr.split('\n').slice(-30).join('\n')}`);
      diagnostics.push(async () => `--- bulkhead other (${otherInstance}) log tail ---\n${other.stderr.split('\n').slice(-30).join('\n')}`);

      // ---- webhook receiver ---------------------------------------------------------------------
      const receiver = await startWebhookReceiver();
      defer(() => receiver.close());
      diagnostics.push(async () => `--- webhook notifications ---\n${receiver.summary()}`);

      // ---- Alertmanager with a copy of the shipped config --------------------------------------
      const shippedAm = fs.readFileSync(SHIPPED_AM, 'utf8');
      const amText = rewriteAlertmanagerForTest(shippedAm, receiver.base);
      alertmanagerCopyChanges(shippedAm, amText);  // throws if group_by/routes/inhibit changed
      const amConfig = path.join(tmp, 'alertmanager.yml');
      fs.writeFileSync(amConfig, amText);
      fs.mkdirSync(path.join(tmp, 'am-data'));
      const amPort = await freePort();
      const amBase = `http://127.0.0.1:${amPort}`;
      const am = new Child('alertmanager', ALERTMANAGER, [
        `--config.file=${amConfig}`, `--storage.path=${path.join(tmp, 'am-data')}`,
        `--web.listen-address=127.0.0.1:${amPort}`, '--cluster.listen-address=', '--log.level=info',
      ]);
      defer(() => am.stop());
      diagnostics.push(async () => `--- alertmanager log tail ---\n${am.tail()}`);
      diagnostics.push(async () => {
        const alerts = await getJson(`${amBase}/api/v2/alerts`);
        return `--- alertmanager alerts ---\n${alerts.map((a) => `  ${JSON.stringify(a.labels)} ${a.status.state}` +
          `${a.status.inhibitedBy.length ? ` inhibitedBy=${a.status.inhibitedBy}` : ''} receivers=${a.receivers.map((r) => r.name)}`).join('\n')}`;
      });
      await am.waitReady(`${amBase}/-/ready`);

      // ---- Prometheus with a copy of the shipped rules -----------------------------------------
      const shippedRules = fs.readFileSync(SHIPPED_RULES, 'utf8');
      const rulesPath = path.join(tmp, 'bulkhead.rules.yml');
      fs.writeFileSync(rulesPath, scaleRulesForTest(shippedRules));
      const promConfig = path.join(tmp, 'prometheus.yml');
      fs.writeFileSync(promConfig, prometheusConfig({
        rulesPath, alertmanager: `127.0.0.1:${amPort}`, targets: [mainInstance, otherInstance],
      }));
      const promPort = await freePort();
      const promBase = `http://127.0.0.1:${promPort}`;
      const prom = new Child('prometheus', PROMETHEUS, [
        `--config.file=${promConfig}`, `--storage.tsdb.path=${path.join(tmp, 'prom-data')}`,
        `--web.listen-address=127.0.0.1:${promPort}`, '--rules.alert.resend-delay=1s', '--log.level=info',
      ]);
      defer(() => prom.stop());
      diagnostics.push(async () => `--- prometheus log tail ---\n${prom.tail()}`);
      diagnostics.push(async () => {
        const { data } = await getJson(`${promBase}/api/v1/alerts`);
        return `--- prometheus alerts ---\n${data.alerts.map((a) => `  ${JSON.stringify(a.labels)} ${a.state} ` +
          `since ${a.activeAt} value=${a.value}`).join('\n') || '  (none)'}`;
      });
      await prom.waitReady(`${promBase}/-/ready`);

      const promQuery = async (q) => (await getJson(`${promBase}/api/v1/query?query=${encodeURIComponent(q)}`)).data.result;
      const promAlerts = async () => (await getJson(`${promBase}/api/v1/alerts`)).data.alerts;

      // The whole pipeline works: the always-firing Watchdog reaches its dead-man's-switch receiver.
      await waitFor(() => notificationsWith(receiver, '/alerts/heartbeat', { alertname: 'Watchdog' }).length > 0, {
        timeout: 30_000, interval: 100,
        message: 'the Watchdog heartbeat at the webhook receiver (Prometheus → Alertmanager → receiver path broken)',
      });

      // ---- Phase 1: unrelated alerts fire and stay firing --------------------------------------
      const phase1 = Date.now();
      // (a) The other instance: jobs wait, no worker ever connects → BulkheadNoWorkers (critical).
      const otherClient = new faktory.Client({ url: other.url });
      defer(() => otherClient.close());
      await otherClient.pushBulk(Array.from({ length: 3 }, (_, i) => ({ jobtype: 'Mail', args: [i], queue: 'mail' })));

      // (b) The main instance: jobs fail permanently → BulkheadDeadSetGrowing (warning). Only after
      // Prometheus has a sample of the dead set at 0, or delta() would see no growth at all.
      await waitFor(async () => {
        const r = await promQuery(`bulkhead_dead_set_size{instance="${mainInstance}"}`);
        return r.length === 1 && r[0].value[1] === '0';
      }, { timeout: 15_000, interval: 100, message: `a scraped bulkhead_dead_set_size 0 from ${mainInstance}` });
      const failing = new faktory.Worker({
        url: main.url, queues: ['mail'], concurrency: 5,
        registry: { Doomed: () => { throw new Error('permanent failure (e2e alerting test)'); } },
      });
      failing.on('error', () => {});  // the failures are the point; keep the output quiet
      let failingStopped = false;
      const stopFailing = async () => {
        if (failingStopped) return;
        failingStopped = true;
        await failing.stop();
      };
      defer(stopFailing);
      await failing.work();
      const mainClient = new faktory.Client({ url: main.url });
      defer(() => mainClient.close());
      const rejected = await mainClient.pushBulk(Array.from({ length: DEAD_JOBS },
        (_, i) => ({ jobtype: 'Doomed', args: [i], queue: 'mail', retry: -1 })));
      assert.deepEqual(rejected, {}, 'PUSHB of the doomed jobs');
      await waitFor(async () => (await main.httpInfo()).faktory.sets.dead === DEAD_JOBS,
        { timeout: 15_000, interval: 50, message: `${DEAD_JOBS} jobs in the dead set of the main instance` });
      await stopFailing();

      // Both reach the receiver. Bound: `for` (5m → 5s) + a scrape + an evaluation + group_wait
      // + slack, plus the dead-set setup above.
      const phase1Bound = 5 + SCRAPE_INTERVAL_S + EVAL_INTERVAL_S + AM_GROUP_WAIT_S + SLACK_S;
      const noWorkersLabels = { alertname: 'BulkheadNoWorkers', instance: otherInstance };
      const deadSetLabels = { alertname: 'BulkheadDeadSetGrowing', instance: mainInstance };
      await waitFor(() => notificationsWith(receiver, '/alerts/pager', noWorkersLabels).length > 0 &&
        notificationsWith(receiver, '/alerts/chat', deadSetLabels).length > 0, {
        timeout: phase1Bound * 1000 + (Date.now() - phase1), interval: 100,
        message: `BulkheadNoWorkers(${otherInstance}) at /alerts/pager and BulkheadDeadSetGrowing(${mainInstance}) ` +
          `at /alerts/chat within ${phase1Bound} s of their trigger (for 5s + scrape ${SCRAPE_INTERVAL_S}s + ` +
          `eval ${EVAL_INTERVAL_S}s + group_wait ${AM_GROUP_WAIT_S}s + slack ${SLACK_S}s)`,
      });
      const firstGroupKeys = new Set([
        ...notificationsWith(receiver, '/alerts/pager', noWorkersLabels),
        ...notificationsWith(receiver, '/alerts/chat', deadSetLabels),
      ].map((n) => n.body.groupKey));
      t.diagnostic(`phase 1: both unrelated alerts notified after ${secondsSince(phase1)} s`);

      // ---- Phase 2: every worker of the main instance is stuck; queue "default" stalls ---------
      let release;
      const gate = new Promise((r) => { release = r; });
      const stuck = new faktory.Worker({
        url: main.url, queues: ['default'], concurrency: 1, timeout: 30,
        registry: { SlowDelivery: () => gate },  // never returns until the test is over
      });
      stuck.on('error', () => {});
      defer(async () => {
        release();  // let the handler finish so stop() ACKs instead of aborting (which exits)
        await stuck.stop();
      });
      await stuck.work();  // heartbeats: the worker is connected, just stuck

      const phase2 = Date.now();
      await mainClient.pushBulk(Array.from({ length: STUCK_QUEUE_JOBS },
        (_, i) => ({ jobtype: 'SlowDelivery', args: [`https://slow.example/inbox/${i}`], queue: 'default' })));
      await waitFor(async () => {
        const info = (await main.httpInfo()).faktory;
        return info.sets.working === 1 && info.queues?.default === STUCK_QUEUE_JOBS - 1;
      }, { timeout: 10_000, interval: 50, message: 'one job held by the stuck worker and the rest waiting in "default"' });

      // The bound for the page, from the moment the jobs were pushed: the oldest waiting job
      // crosses the (scaled) threshold, stays above it for the (scaled) `for`, plus one scrape
      // and one rule evaluation to see it, plus group_wait for the alert's new group, plus slack.
      const threshold = scaledThreshold('BulkheadQueueLatencyCritical');
      const forS = shippedForSeconds(shippedRules, 'BulkheadQueueLatencyCritical') * FOR_SCALE;
      const pageBound = threshold + forS + SCRAPE_INTERVAL_S + EVAL_INTERVAL_S + AM_GROUP_WAIT_S + SLACK_S;
      const boundText = `${pageBound} s = threshold ${threshold}s + for ${forS}s + scrape ${SCRAPE_INTERVAL_S}s + ` +
        `eval ${EVAL_INTERVAL_S}s + group_wait ${AM_GROUP_WAIT_S}s + slack ${SLACK_S}s`;
      // Sanity: the bound must stay below group_interval, or the test could not tell a new group
      // (flushed after group_wait) from the alert joining an existing group (next group_interval).
      assert.ok(pageBound < AM_GROUP_INTERVAL_S - 5, `bound ${pageBound}s must stay well below group_interval ${AM_GROUP_INTERVAL_S}s`);

      const latencyLabels = { alertname: 'BulkheadQueueLatencyCritical', queue: 'default', instance: mainInstance };
      await waitFor(() => notificationsWith(receiver, '/alerts/pager', latencyLabels).length > 0, {
        timeout: Math.max(0, phase2 + pageBound * 1000 - Date.now()), interval: 100,
        message: `the BulkheadQueueLatencyCritical{queue="default"} page at /alerts/pager within ${boundText} ` +
          `of the jobs being pushed, while BulkheadNoWorkers and BulkheadDeadSetGrowing are firing ` +
          `(group_interval is ${AM_GROUP_INTERVAL_S}s: missing this bound means the alert did not get a group of its own)`,
      });
      const pagedAfter = secondsSince(phase2);
      const page = notificationsWith(receiver, '/alerts/pager', latencyLabels)[0];
      t.diagnostic(`phase 2: queue-latency page after ${pagedAfter} s (bound ${pageBound} s)`);

      // The notification names the queue, is about that queue only, and is a new group.
      assert.equal(page.body.receiver, 'pager');
      assert.equal(page.body.status, 'firing');
      assert.equal(page.body.groupLabels?.alertname, 'BulkheadQueueLatencyCritical', 'groupLabels.alertname');
      assert.equal(page.body.groupLabels?.queue, 'default', 'the page\'s groupLabels name the queue');
      assert.equal(page.body.commonLabels?.queue, 'default', 'the page\'s commonLabels name the queue');
      for (const a of page.body.alerts) {
        assert.equal(a.labels.alertname, 'BulkheadQueueLatencyCritical', `an unrelated alert rode along in the page: ${JSON.stringify(a.labels)}`);
        assert.equal(a.labels.queue, 'default', `alert labels name the queue: ${JSON.stringify(a.labels)}`);
        assert.equal(a.labels.severity, 'critical');
        assert.match(a.annotations.summary, /queue default latency/, 'the summary names the queue');
      }
      assert.ok(!firstGroupKeys.has(page.body.groupKey),
        `the page has a group key of its own (${page.body.groupKey}), not one of the already-firing alerts' ` +
        `(${[...firstGroupKeys].join(' | ')}): an incident keyed on it would be new, not appended to an open one`);
      // Nothing else was ever notified under that key either (by now the other instance's "mail"
      // queue, whose jobs wait with no worker, also has a BulkheadQueueLatencyCritical firing: the
      // same alertname on another queue and instance, which must be a separate group too).
      const sharing = receiver.notifications.filter((n) => n.body.groupKey === page.body.groupKey &&
        n.body.alerts.some((a) => !labelsMatch(a.labels, latencyLabels)));
      assert.deepEqual(sharing.map((n) => n.body.alerts.map((a) => a.labels)), [],
        'no other alert was ever notified under the page\'s group key');

      // ...while the first alerts are still firing, in Prometheus and in Alertmanager, and were
      // never resolved.
      const firing = (await promAlerts()).filter((a) => a.state === 'firing');
      for (const want of [noWorkersLabels, deadSetLabels]) {
        assert.ok(firing.some((a) => labelsMatch(a.labels, want)),
          `${JSON.stringify(want)} still firing in Prometheus when the page arrived`);
      }
      const amAlerts = await getJson(`${amBase}/api/v2/alerts`);
      for (const want of [noWorkersLabels, deadSetLabels]) {
        assert.ok(amAlerts.some((a) => labelsMatch(a.labels, want) && a.status.state === 'active'),
          `${JSON.stringify(want)} still active (not resolved, not inhibited) in Alertmanager`);
      }
      const resolved = receiver.notifications.filter((n) => (n.body.alerts || []).some((a) => a.status === 'resolved'));
      assert.deepEqual(resolved.map((n) => n.body.groupKey), [], 'no alert was resolved during the test');

      // The figure behind it was computed at scrape time while every worker was stuck.
      const metrics = await (await fetch(`${main.httpBase}/metrics`)).text();
      const gauge = (re) => Number((metrics.match(re) || [])[1]);
      const latency = gauge(/^bulkhead_queue_latency_seconds\{queue="default"\} (\S+)$/m);
      assert.ok(latency > threshold, `bulkhead_queue_latency_seconds{queue="default"} is ${latency}, above ${threshold}`);
      assert.equal(gauge(/^bulkhead_working_jobs (\S+)$/m), 1, 'bulkhead_working_jobs: the stuck job');
      assert.ok(gauge(/^bulkhead_workers_connected (\S+)$/m) >= 1, 'the stuck worker is still connected');

      // The shipped inhibit rule: the critical alert of queue "default" mutes the warning of
      // queue "default" (and only that; the first alerts stayed active above). Bound: the
      // warning's own threshold + for + scrape + eval + slack, from the push.
      const highLabels = { alertname: 'BulkheadQueueLatencyHigh', queue: 'default', instance: mainInstance };
      const highFor = shippedForSeconds(shippedRules, 'BulkheadQueueLatencyHigh') * FOR_SCALE;
      const highBound = scaledThreshold('BulkheadQueueLatencyHigh') + highFor + SCRAPE_INTERVAL_S + EVAL_INTERVAL_S + SLACK_S;
      await waitFor(async () => (await getJson(`${amBase}/api/v2/alerts`)).some((a) => labelsMatch(a.labels, highLabels) &&
        a.status.state === 'suppressed' && a.status.inhibitedBy.length > 0), {
        timeout: Math.max(0, phase2 + Math.max(highBound, pageBound) * 1000 - Date.now()), interval: 100,
        message: `BulkheadQueueLatencyHigh{queue="default"} in Alertmanager, inhibited by the critical alert of the same queue`,
      });
    } catch (err) {
      const parts = [];
      for (const d of diagnostics) {
        try {
          parts.push(await d());
        } catch (e) {
          parts.push(`(diagnostic failed: ${e.message})`);
        }
      }
      err.message += `\n\n${parts.join('\n\n')}`;
      throw err;
    }
  });
