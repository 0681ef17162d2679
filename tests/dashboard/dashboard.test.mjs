// The web dashboard in a real headless Chromium (Debian `chromium`, driven by npm
// `puppeteer-core`) against a real `bulkhead serve` holding queues, retries, dead jobs, a worker
// and a failing delivery host (webhooks to a closed port), some of them carrying XSS payloads in
// their jobtype, args, error and backtrace. Checks: every page loads with no console error; the
// figures shown match INFO; each action clicked in the page changes the state INFO (or
// /api/workers, or a FETCH) then shows; the payloads never execute (no dialog, no request they
// would make); a POST without the CSRF token is refused; with a password nothing is reachable
// without it. Screenshots of every page at 1440 and 390 px go to $DASHBOARD_SCREENSHOTS (default:
// a temp folder; `make dashboard-screenshots` writes docs/img/). $DASHBOARD_STORE picks the store.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import faktory from 'faktory-worker';
import puppeteer from 'puppeteer-core';

import { closedPort } from '../interop/lib/fault_servers.mjs';
import { cleanupStack, startServer, waitFor } from '../interop/lib/server.mjs';

const CHROMIUM = process.env.CHROMIUM_BINARY || '/usr/bin/chromium';
const SHOTS = process.env.DASHBOARD_SCREENSHOTS ||
  fs.mkdtempSync(path.join(os.tmpdir(), 'bulkhead-dashboard-shots-'));
const XSS = {
  script: '<script>window.__xss=1;alert(1)</script>',
  img: '"><img src=/xss-img onerror="window.__xss=1;alert(2)">',
  js: 'javascript:alert(3)',
};

async function launch(defer) {
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  defer(() => browser.close());
  return browser;
}

// A page that records console errors, page errors, dialogs and every request it makes.
async function watchedPage(browser, origin) {
  const page = await browser.newPage();
  const seen = { errors: [], dialogs: [], requests: [] };
  page.on('console', (m) => { if (m.type() === 'error') seen.errors.push(m.text()); });
  page.on('pageerror', (e) => seen.errors.push(String(e)));
  page.on('dialog', async (d) => { seen.dialogs.push(d.message()); await d.dismiss(); });
  page.on('request', (r) => seen.requests.push(r.url()));
  page.seen = seen;
  page.origin = origin;
  return page;
}

function assertClean(page, what) {
  const { errors, dialogs, requests } = page.seen;
  assert.deepEqual(errors, [], `${what}: console errors`);
  assert.deepEqual(dialogs, [], `${what}: a payload opened a dialog`);
  const foreign = requests.filter((u) => !u.startsWith(page.origin + '/') || new URL(u).pathname === '/xss-img');
  assert.deepEqual(foreign, [], `${what}: requests a payload made`);
  assert.equal(page.__xss, undefined);
}

// Fills the server: queues, retries (two with payloads), dead jobs, a worker, a failing host.
async function seed(server, defer) {
  const client = new faktory.Client({ url: server.url });
  defer(() => client.close());
  for (let i = 0; i < 5; i++) await client.push({ jobtype: 'Mailer', queue: 'mail', args: [i] });
  await client.push({ jobtype: 'Report', queue: 'reports', args: ['monthly'] });
  await client.push({ jobtype: 'Later', queue: 'default', args: [1], at: new Date(Date.now() + 3_600_000).toISOString() });
  // A job that failed 20 times before waits about two days for its next retry (count^4 s): the
  // retry set stays put while the test runs.
  const fail = async (job) => {
    await client.push({ queue: 'work', failure: { retry_count: 20 }, ...job });
    const got = await client.fetch('work');
    const e = new Error(XSS.img);
    e.code = XSS.script;
    e.stack = `${XSS.js}\n    at ${XSS.script}\n    at handler (worker.js:12)`;
    await client.fail(got.jid, e);
  };
  await fail({ jobtype: XSS.script, args: [XSS.script, XSS.img, XSS.js] });
  await fail({ jobtype: 'Resize', args: [{ image: 'a.png' }] });
  await fail({ jobtype: 'Resize', args: [{ image: 'b.png' }] });
  await fail({ jobtype: 'Resize', args: [{ image: 'c.png' }] });
  for (let i = 0; i < 3; i++) await fail({ jobtype: 'Charge', args: [i], retry: -1 });
  await fail({ jobtype: XSS.img, args: [XSS.js], retry: -1 });
  const port = await closedPort();
  for (let i = 0; i < 8; i++) {
    await client.push({ jobtype: 'webhook', queue: 'default', args: [{ url: `http://127.0.0.1:${port}/hook`, body: `n${i}` }] });
  }
  const worker = new faktory.Client({ url: server.url, wid: 'dash-worker-1', labels: ['node', XSS.script] });
  defer(() => worker.close());
  await worker.connect();
  await waitFor(async () => {
    const res = await fetch(`${server.httpBase}/api/hosts`, { headers: server.authHeaders });
    const hosts = await res.json();
    return hosts.some((h) => h.breaker !== 'closed');
  }, { timeout: 20_000, message: 'the closed port\'s breaker to open' });
  assert.equal(await worker.beat(), 'OK');
  // A job waiting in a queue and one the worker holds (the Busy page shows it under its wid).
  await client.push({ jid: QUEUED_JID, jobtype: 'Waiting', queue: 'waiting', args: [] });
  await client.push({ jid: HELD_JID, jobtype: 'Held', queue: 'held', args: [] });
  const held = await worker.fetch('held');
  assert.equal(held.jid, HELD_JID);
  return { client, worker };
}

// The store of the first test: sqlite (default), memory, or a redis:// URL of an empty namespace
// ($DASHBOARD_STORE).
const STORE = process.env.DASHBOARD_STORE || 'sqlite';
const QUEUED_JID = 'queued-search-0001';
const HELD_JID = 'held-by-worker-0001';

const PAGES = ['/', '/queues', '/busy', '/scheduled', '/retries', '/dead', '/hosts', '/throttles'];

// A throttle on a queue nothing else uses and a cron entry due once a year, so that /throttles
// has rows without changing the queues the other checks count.
// The failing host's breaker stays open for the whole test: a half-open probe would take one of
// its parked jobs while a check counts them (the default opening is 30 s, shorter than the test).
const DELIVERY_CONFIG = '[delivery]\nbreaker_open_min_seconds = 3600\nbreaker_open_max_seconds = 3600\n';
const ENTERPRISE_CONFIG = '[throttles]\nthrottled = { concurrency = 2, timeout = 60 }\n' +
  '[[cron]]\n  schedule = "0 0 1 1 *"\n  name = "new-year"\n  [cron.job]\n    type = "NewYear"\n    queue = "yearly"\n';

async function info(client) {
  return (await client.info()).faktory;
}

// Checks the first `n` jobs of the list; returns their jids.
async function checkedBoxes(page, n) {
  const boxes = await page.$$('#jobs input[name=jid]');
  assert.ok(boxes.length >= n, `at least ${n} jobs listed`);
  const jids = [];
  for (let i = 0; i < n; i++) {
    await boxes[i].click();
    jids.push(await boxes[i].evaluate((b) => b.value));
  }
  return jids;
}

async function inRetries(origin, jid) {
  const html = await (await fetch(`${origin}/search?jid=${encodeURIComponent(jid)}`)).text();
  return html.includes('in Retries');
}

async function clickAndWait(page, selector) {
  await Promise.all([page.waitForNavigation(), page.click(selector)]);
}

test('every page renders, matches INFO, keeps payloads inert; each action changes the server', { timeout: 240_000 }, async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer, { config: 'allow_private_targets = true\n' + DELIVERY_CONFIG + ENTERPRISE_CONFIG, store: STORE });
  const { client, worker } = await seed(server, defer);
  const browser = await launch(defer);
  const origin = server.httpBase;
  fs.mkdirSync(SHOTS, { recursive: true });

  // Every page, at both widths, with a screenshot; then a job's and a host's page.
  const hosts = await (await fetch(`${origin}/api/hosts`)).json();
  const failing = hosts.find((h) => h.breaker !== 'closed');
  // The Overview last: its charts then hold the seconds the other pages took.
  const all = [...PAGES.slice(1), `/hosts?host=${encodeURIComponent(failing.host)}`, '/'];
  for (const width of [1440, 390]) {
    for (const p of all) {
      const page = await watchedPage(browser, origin);
      await page.setViewport({ width, height: 900 });
      const res = await page.goto(origin + p, { waitUntil: 'networkidle0' });
      assert.equal(res.status(), 200, p);
      const headers = res.headers();
      assert.match(headers['content-security-policy'], /script-src 'self'/);
      assert.equal(headers['x-frame-options'], 'DENY');
      assert.equal(headers['x-content-type-options'], 'nosniff');
      page.__xss = await page.evaluate(() => window.__xss);
      assertClean(page, `${p} at ${width}px`);
      const jsLinks = await page.$$eval('[href^="javascript:" i], [src^="javascript:" i], [action^="javascript:" i]', (els) => els.length);
      assert.equal(jsLinks, 0, `${p}: a javascript: URL`);
      // Times are relative, with the exact time on hover.
      const untitled = await page.$$eval('time', (els) => els.filter((e) => !/UTC$/.test(e.title)).length);
      assert.equal(untitled, 0, `${p}: a time without its exact time on hover`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${p} at ${width}px scrolls sideways by ${overflow}px`);
      const name = (p === '/' ? 'overview' : p.slice(1).replace(/\?.*/, '-detail')) + `-${width}.png`;
      await page.screenshot({ path: path.join(SHOTS, name), fullPage: true });
      await page.close();
    }
  }

  // The Enterprise page lists the configured throttle and cron entry.
  {
    const page = await watchedPage(browser, origin);
    await page.goto(origin + '/throttles', { waitUntil: 'networkidle0' });
    assert.equal(await page.$$eval('#throttles tr[data-queue="throttled"]', (els) => els.length), 1);
    assert.match(await page.$eval('#cron tbody', (e) => e.textContent), /new-year/);
    assertClean(page, 'throttles page');
    await page.close();
  }

  // A failing host's page lists the jobs parked behind it, as /api/hosts counts them.
  {
    // Retries of its deliveries come due and join the parked ones meanwhile (none leaves: the
    // breaker stays open, DELIVERY_CONFIG): read before and after.
    const parked = async () => (await (await fetch(`${origin}/api/hosts`)).json()).find((h) => h.host === failing.host).parked;
    const page = await watchedPage(browser, origin);
    const p0 = await parked();
    await page.goto(`${origin}/hosts?host=${encodeURIComponent(failing.host)}`, { waitUntil: 'networkidle0' });
    const listed = await page.$$eval('#parked li', (els) => els.length);
    const p1 = await parked();
    assert.ok(p0 > 0, 'jobs parked behind the failing host');
    assert.ok(listed >= p0 && listed <= p1, `listed ${listed} parked jobs, /api/hosts ${p0} then ${p1}`);
    assertClean(page, 'host page');
    await page.close();
  }

  // The failing host says what went wrong last (its closed port: a connection error) and when, on
  // the Hosts page and its own, as /api/hosts has it; and until when its breaker stays open.
  {
    const h = (await (await fetch(`${origin}/api/hosts`)).json()).find((x) => x.host === failing.host);
    assert.match(h.last_error, /\S/, `last_error of a failing host: ${JSON.stringify(h)}`);
    assert.ok(!Number.isNaN(Date.parse(h.last_error_at)), `last_error_at: ${h.last_error_at}`);
    if (h.breaker !== 'closed') assert.ok(!Number.isNaN(Date.parse(h.breaker_open_until)), `breaker_open_until: ${h.breaker_open_until}`);
    const page = await watchedPage(browser, origin);
    await page.goto(`${origin}/hosts`, { waitUntil: 'networkidle0' });
    const shown = await page.$$eval('#hosts tbody tr', (rows, host) => {
      const row = rows.find((r) => r.querySelector('td a')?.textContent === host);
      return row ? row.querySelector('.last-error')?.textContent : null;
    }, failing.host);
    assert.ok(shown, 'the failing host has a last error on the Hosts page');
    await page.goto(`${origin}/hosts?host=${encodeURIComponent(failing.host)}`, { waitUntil: 'networkidle0' });
    const fields = await page.$eval('#host', (e) => e.textContent);
    assert.match(fields, /last error/);
    assert.match(fields, /breaker open until/);
    assertClean(page, 'host page, last error');
    await page.close();
  }

  // The figures of the Overview are INFO's (read before and after: the failing host's deliveries
  // may move meanwhile).
  {
    const page = await watchedPage(browser, origin);
    const i0 = await info(client);
    await page.goto(origin + '/', { waitUntil: 'networkidle0' });
    const shown = await page.$$eval('[data-live]', (els) => Object.fromEntries(els.map((e) => [e.dataset.live, Number(e.textContent)])));
    const i1 = await info(client);
    const between = (name, a, b) => assert.ok(shown[name] >= Math.min(a, b) && shown[name] <= Math.max(a, b),
      `${name}: shown ${shown[name]}, INFO ${a} then ${b}`);
    between('dead', i0.sets.dead, i1.sets.dead);
    between('retries', i0.sets.retries, i1.sets.retries);
    between('scheduled', i0.sets.scheduled, i1.sets.scheduled);
    between('queues', i0.total_queues, i1.total_queues);
    between('failures', i0.total_failures, i1.total_failures);
    between('processed', i0.total_processed, i1.total_processed);
    // A job page with every payload, and the jid search box.
    await page.goto(origin + '/dead?jobtype=' + encodeURIComponent(XSS.img), { waitUntil: 'networkidle0' });
    await clickAndWait(page, '#jobs tbody a');
    const text = await page.$eval('#backtrace', (e) => e.textContent);
    assert.ok(text.includes(XSS.script), 'the backtrace shows the payload as text');
    const jid = await page.$eval('dl.fields dd', (e) => e.textContent);
    await page.screenshot({ path: path.join(SHOTS, 'job-1440.png'), fullPage: true });
    await page.type('input[name=jid]', jid);
    await clickAndWait(page, 'nav button[type=submit]');
    assert.ok((await page.$eval('#found', (e) => e.textContent)).includes('Dead'));
    page.__xss = await page.evaluate(() => window.__xss);
    assertClean(page, 'job page and search');
    await page.close();
  }

  // The search finds a queued job and a reserved one, each linked to its page; Busy shows
  // which worker holds which job, with its running time; a queued job's page deletes it.
  {
    const page = await watchedPage(browser, origin);
    for (const [jid, where] of [[QUEUED_JID, 'queue waiting'], [HELD_JID, 'Busy (reserved)']]) {
      await page.goto(origin + '/', { waitUntil: 'networkidle0' });
      await page.type('input[name=jid]', jid);
      await clickAndWait(page, 'nav button[type=submit]');
      assert.ok((await page.$eval('#found', (e) => e.textContent)).includes(`in ${where}`), jid);
      await clickAndWait(page, '#found a');
      assert.equal(await page.$eval('#where', (e) => e.textContent), where);
    }
    assert.equal(await page.$eval('#holder', (e) => e.textContent), 'dash-worker-1');
    await page.goto(origin + '/busy', { waitUntil: 'networkidle0' });
    const rows = await page.$$eval('section.held[data-wid="dash-worker-1"] tbody tr',
      (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    const row = rows.find((r) => r[0] === HELD_JID);
    assert.ok(row, `Busy lists ${HELD_JID} under dash-worker-1: ${JSON.stringify(rows)}`);
    assert.deepEqual(row.slice(1, 3), ['Held', 'held']);
    assert.match(row[3], /^\d+ (ms|s|min)/, 'running for');
    const i0 = await info(client);
    assert.equal(i0.queues.waiting, 1);
    await page.goto(`${origin}/job?jid=${QUEUED_JID}`, { waitUntil: 'networkidle0' });
    await clickAndWait(page, 'button[value=delete]');
    assert.ok((await page.content()).includes('Job deleted from its queue.'));
    assert.equal((await info(client)).queues.waiting || 0, 0, 'delete a queued job');
    page.__xss = await page.evaluate(() => window.__xss);
    assertClean(page, 'search, Busy and a queued job');
    await page.close();
  }

  // Live figures: an open Overview follows a change without a reload (live.json every 5 s).
  {
    const page = await watchedPage(browser, origin);
    await page.goto(origin + '/', { waitUntil: 'networkidle0' });
    const shownDead = () => page.$eval('[data-live=dead]', (e) => Number(e.textContent));
    const was = await shownDead();
    await client.push({ jobtype: 'Live', queue: 'live', args: [], retry: -1 });
    const got = await client.fetch('live');
    await client.fail(got.jid, Object.assign(new Error('boom'), { code: 'E' }));
    await waitFor(async () => (await shownDead()) === was + 1,
      { timeout: 15_000, message: 'the Overview\'s dead figure to follow INFO' });
    assertClean(page, 'live refresh');
    await page.close();
  }

  const page = await watchedPage(browser, origin);
  // Retries (of jobtype Resize: the failing host's deliveries come and go in the retry set): retry
  // now, kill.
  let before = await info(client);
  await page.goto(origin + '/retries?jobtype=Resize', { waitUntil: 'networkidle0' });
  let [jid] = await checkedBoxes(page, 1);
  await clickAndWait(page, 'button[value=requeue]');
  let after = await info(client);
  assert.equal(await inRetries(origin, jid), false, 'retry now');
  assert.equal(after.queues.work, (before.queues.work || 0) + 1);
  await page.goto(origin + '/retries?jobtype=Resize', { waitUntil: 'networkidle0' });
  [jid] = await checkedBoxes(page, 1);
  await clickAndWait(page, 'button[value=kill]');
  before = after;
  after = await info(client);
  assert.equal(await inRetries(origin, jid), false, 'kill');
  assert.equal(after.sets.dead, before.sets.dead + 1);
  // Dead: delete two, re-enqueue one.
  await page.goto(origin + '/dead', { waitUntil: 'networkidle0' });
  await checkedBoxes(page, 2);
  await clickAndWait(page, 'button[value=delete]');
  before = after;
  after = await info(client);
  assert.equal(after.sets.dead, before.sets.dead - 2, 'delete');
  await checkedBoxes(page, 1);
  await clickAndWait(page, 'button[value=requeue]');
  before = after;
  after = await info(client);
  assert.equal(after.sets.dead, before.sets.dead - 1, 're-enqueue');
  // Queues: pause (FETCH then gets nothing), resume, clear.
  await page.goto(origin + '/queues', { waitUntil: 'networkidle0' });
  await clickAndWait(page, 'tr[data-queue=mail] a[href$="action=pause"]');
  await clickAndWait(page, '#confirm');
  assert.equal(await client.fetch('mail'), null, 'a paused queue hands out nothing');
  await clickAndWait(page, 'tr[data-queue=mail] a[href$="action=resume"]');
  await clickAndWait(page, '#confirm');
  const job = await client.fetch('mail');
  assert.ok(job, 'a resumed queue hands out its jobs');
  await client.ack(job.jid);
  await clickAndWait(page, 'tr[data-queue=reports] a[href$="action=clear"]');
  await clickAndWait(page, '#confirm');
  after = await info(client);
  assert.equal(after.queues.reports || 0, 0, 'clear');
  // Busy: quiet the worker.
  assert.equal(await worker.beat(), 'OK');
  await page.goto(origin + '/busy', { waitUntil: 'networkidle0' });
  await clickAndWait(page, '#workers button');
  const workers = await (await fetch(`${origin}/api/workers`)).json();
  assert.equal(workers.find((w) => w.wid === 'dash-worker-1').state, 'quiet');
  // A failing host: release its parked jobs (forget its failures): they are tried at once, and
  // fail against the closed port.
  const hostNow = async () => (await (await fetch(`${origin}/api/hosts`)).json()).find((h) => h.host === failing.host);
  const failuresBefore = (await hostNow()).failures;
  await page.goto(`${origin}/hosts?host=${encodeURIComponent(failing.host)}`, { waitUntil: 'networkidle0' });
  await clickAndWait(page, 'button[value=forget]');
  assert.ok((await page.content()).includes('parked jobs released'));
  await waitFor(async () => (await hostNow()).failures > failuresBefore,
    { timeout: 15_000, message: 'the released parked jobs to be tried' });
  page.__xss = await page.evaluate(() => window.__xss);
  assertClean(page, 'actions');
  await page.close();

  // A POST without the token (or with another) is refused and changes nothing.
  before = await info(client);
  for (const body of ['action=delete&jid=x', 'csrf=00&action=requeue']) {
    const res = await fetch(`${origin}/retries`, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(res.status, 403, body);
  }
  assert.deepEqual((await info(client)).sets, before.sets);
});

test('with a password nothing is reachable without it', { timeout: 120_000 }, async (t) => {
  const defer = cleanupStack(t);
  const server = await startServer(defer, { password: 'dash-secret', store: 'memory' });
  const origin = server.httpBase;
  for (const p of [...PAGES, '/live.json', '/assets/dashboard.js', '/job?jid=x']) {
    for (const auth of [null, 'Basic ' + Buffer.from('admin:wrong').toString('base64')]) {
      const res = await fetch(origin + p, { headers: auth ? { authorization: auth } : {} });
      assert.equal(res.status, 401, `${p} with ${auth}`);
      assert.match(res.headers.get('www-authenticate'), /^Basic /);
    }
  }
  const res = await fetch(`${origin}/dead`, { method: 'POST', body: 'action=delete' });
  assert.equal(res.status, 401);
  const browser = await launch(defer);
  const page = await watchedPage(browser, origin);
  await page.authenticate({ username: 'anyone', password: 'dash-secret' });
  for (const p of PAGES) {
    const ok = await page.goto(origin + p, { waitUntil: 'networkidle0' });
    assert.equal(ok.status(), 200, p);
    assert.equal(await page.$('#no-password'), null, 'no banner with a password');
  }
  page.seen.errors = page.seen.errors.filter((e) => !e.includes('401'));
  assertClean(page, 'with a password');
});
