// TLS on both ports: a real Faktory client (npm faktory-worker) over TLS with a CA made
// by lib/pki.mjs (the openssl CLI), the bulkhead CLI with tcp+tls:// and --ca, HTTPS, refusals (an
// untrusted CA, an expired certificate, plain TCP on the TLS port) and a certificate swapped by
// SIGHUP without dropping an established connection.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';

import faktory from 'faktory-worker';

import { makePki } from './lib/pki.mjs';
import { startServer, waitFor } from './lib/server.mjs';

const run = promisify(execFile);

async function tlsServer(t, pki, { cert = 'server', password } = {}) {
  const config = `tls_cert_file = "${pki.file(`${cert}.crt`)}"\ntls_key_file = "${pki.file(`${cert}.key`)}"\n`;
  const server = await startServer(t, { store: 'memory', config, password });
  return server;
}

// The CN of the certificate a fresh TLS connection to `port` is shown.
function peerCommonName(port, ca) {
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ port, host: '127.0.0.1', ca }, () => {
      const cn = sock.getPeerCertificate().subject.CN;
      sock.destroy();
      resolve(cn);
    });
    sock.once('error', reject);
  });
}

function bulkhead(args, env = {}) {
  return run(process.env.BULKHEAD_BINARY, args, { env: { ...process.env, ...env }, timeout: 20_000 });
}

describe('TLS', () => {
  const pki = makePki();
  process.on('exit', () => fs.rmSync(pki.dir, { recursive: true, force: true }));

  test('faktory-worker pushes, fetches and acks over TLS with a password', async (t) => {
    const server = await tlsServer(t, pki, { password: 's3cret' });
    const tlsOptions = { ca: pki.ca };
    const client = new faktory.Client({ host: '127.0.0.1', port: server.port, password: 's3cret', tlsOptions });
    t.after(() => client.close());
    const jid = await client.push({ jobtype: 'TlsJob', args: [1, 'two'], queue: 'tls' });
    const done = [];
    const worker = new faktory.Worker({
      host: '127.0.0.1', port: server.port, password: 's3cret', tlsOptions, queues: ['tls'], concurrency: 1,
      registry: { TlsJob: async (...args) => { done.push(args); } },
    });
    await worker.work();
    t.after(() => worker.stop());
    await waitFor(() => done.length === 1, { timeout: 10_000, message: 'the job to run over TLS' });
    assert.deepEqual(done[0], [1, 'two']);
    await waitFor(async () => (await client.info()).faktory.total_processed >= 1, { timeout: 10_000, message: 'the ACK' });
    assert.ok(jid);
  });

  test('the bulkhead CLI speaks tcp+tls:// and https:// with --ca', async (t) => {
    const server = await tlsServer(t, pki);
    const url = `tcp+tls://127.0.0.1:${server.port}`;
    const pushed = await bulkhead(['push', '--url', url, '--ca', pki.file('ca.crt'), '{"jobtype":"Cli","args":[]}']);
    assert.match(pushed.stdout.trim(), /^[0-9a-f]{24}$/);
    const info = JSON.parse((await bulkhead(['info', '--url', `tcp+tls://localhost:${server.port}`, '--ca', pki.file('ca.crt')])).stdout);
    assert.equal(info.faktory.queues.default, 1);
    const keys = await bulkhead(['keys', 'list', '--http', `https://127.0.0.1:${server.httpPort}`, '--ca', pki.file('ca.crt')]);
    assert.equal(keys.stdout.trim(), 'no signing keys registered');
    const health = await new Promise((resolve, reject) => {
      https.get({ host: '127.0.0.1', port: server.httpPort, path: '/healthz', ca: pki.ca }, (res) => {
        let body = '';
        res.on('data', (d) => { body += d; });
        res.on('end', () => resolve({ status: res.statusCode, body }));
      }).on('error', reject);
    });
    assert.deepEqual(health, { status: 200, body: 'ok\n' });
  });

  test('a client that does not trust the CA fails, and says why', async (t) => {
    const server = await tlsServer(t, pki);
    await assert.rejects(
      bulkhead(['info', '--url', `tcp+tls://127.0.0.1:${server.port}`, '--ca', pki.file('other-ca.crt')]),
      (e) => /TLS handshake with 127\.0\.0\.1 failed: unable to get local issuer certificate/.test(e.stderr));
    const client = new faktory.Client({ host: '127.0.0.1', port: server.port, tlsOptions: { ca: fs.readFileSync(pki.file('other-ca.crt')) } });
    await assert.rejects(client.connect(), /certificate/);
    await waitFor(() => /TLS handshake from 127\.0\.0\.1 failed/.test(server.stderr), { timeout: 5000, message: 'the server to log the failed handshake' });
  });

  test('an expired certificate is refused by the client', async (t) => {
    const server = await tlsServer(t, pki, { cert: 'expired' });
    await assert.rejects(
      bulkhead(['info', '--url', `tcp+tls://127.0.0.1:${server.port}`, '--ca', pki.file('ca.crt')]),
      (e) => /certificate has expired/.test(e.stderr));
    const client = new faktory.Client({ host: '127.0.0.1', port: server.port, tlsOptions: { ca: pki.ca } });
    await assert.rejects(client.connect(), /expired/);
  });

  test('plain TCP on the TLS port gets no greeting and no job data', async (t) => {
    const server = await tlsServer(t, pki);
    const c = await new faktory.Client({ host: '127.0.0.1', port: server.port, tlsOptions: { ca: pki.ca } });
    t.after(() => c.close());
    await c.push({ jobtype: 'Secret', args: ['do-not-leak'], queue: 'default' });
    const plain = net.connect({ port: server.port, host: '127.0.0.1' });
    let received = Buffer.alloc(0);
    plain.on('data', (d) => { received = Buffer.concat([received, d]); });
    plain.on('error', () => {});
    await new Promise((r) => plain.once('connect', r));
    plain.write('HELLO {"v":2}\r\nFETCH default\r\n');
    await new Promise((r) => plain.once('close', r));
    assert.ok(!received.toString('latin1').includes('do-not-leak'), 'no job data in clear text');
    assert.ok(!received.toString('latin1').includes('+HI'), 'no greeting in clear text');
    await waitFor(() => /a plain-TCP client on the TLS port\? clients must use tcp\+tls:\/\//.test(server.stderr),
      { timeout: 5000, message: `the log line naming a plain-TCP client; log:\n${server.stderr}` });
    const m = await new Promise((resolve, reject) => {
      https.get({ host: '127.0.0.1', port: server.httpPort, path: '/metrics', ca: pki.ca }, (res) => {
        let body = '';
        res.on('data', (d) => { body += d; });
        res.on('end', () => resolve(body));
      }).on('error', reject);
    });
    assert.match(m, /bulkhead_tls_handshake_failures_total\{listener="faktory"\} [1-9]/);
  });

  test('SIGHUP swaps the certificate: new connections see the new one, an open one keeps working', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bulkhead-tls-swap-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.copyFileSync(pki.file('server.crt'), path.join(dir, 'cert.pem'));
    fs.copyFileSync(pki.file('server.key'), path.join(dir, 'key.pem'));
    const config = `tls_cert_file = "${path.join(dir, 'cert.pem')}"\ntls_key_file = "${path.join(dir, 'key.pem')}"\n`;
    const server = await startServer(t, { store: 'memory', config });
    assert.equal(await peerCommonName(server.port, pki.ca), 'first');
    const open = new faktory.Client({ host: '127.0.0.1', port: server.port, tlsOptions: { ca: pki.ca } });
    t.after(() => open.close());
    await open.push({ jobtype: 'Before', args: [] });

    fs.copyFileSync(pki.file('second.crt'), path.join(dir, 'cert.pem'));
    fs.copyFileSync(pki.file('second.key'), path.join(dir, 'key.pem'));
    server.proc.kill('SIGHUP');
    await waitFor(() => /SIGHUP: reloaded the TLS certificate/.test(server.stderr), { timeout: 5000, message: 'the reload log line' });
    assert.equal(await peerCommonName(server.port, pki.ca), 'second');
    assert.equal(await peerCommonName(server.httpPort, pki.ca), 'second');
    await open.push({ jobtype: 'After', args: [] });  // the established connection is untouched
    assert.equal((await open.info()).faktory.queues.default, 2);

    // A broken file is refused at reload; the certificate in use stays.
    fs.writeFileSync(path.join(dir, 'key.pem'), 'not a key');
    server.proc.kill('SIGHUP');
    await waitFor(() => /TLS certificate not reloaded, the old one stays in use/.test(server.stderr), { timeout: 5000, message: 'the failed reload log line' });
    assert.equal(await peerCommonName(server.port, pki.ca), 'second');
  });

  test('the replay runs over TLS (server, load and worker on tcp+tls://)', async (t) => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'bulkhead-tls-replay-'));
    t.after(() => fs.rmSync(out, { recursive: true, force: true }));
    const r = await run(process.env.BULKHEAD_BINARY, ['replay', '--duration', '2', '--no-progress',
      '--tls-cert-file', pki.file('server.crt'), '--tls-key-file', pki.file('server.key'),
      '--ca', pki.file('ca.crt'), '--out', out], { timeout: 120_000 });
    assert.match(r.stdout, /PASS {2}timeline jobs run (\d+) of \1 enqueued/);
    assert.doesNotMatch(r.stdout, /FAIL/);
  });

  test('a certificate and key that do not match are refused at start, naming the files', async (t) => {
    const config = `tls_cert_file = "${pki.file('server.crt')}"\ntls_key_file = "${pki.file('second.key')}"\n`;
    await assert.rejects(startServer(t, { store: 'memory', config }),
      /TLS private key .*second\.key does not match the certificate .*server\.crt/);
  });
});
