// An ActivityPub inbox that checks what bulkhead sends as a receiving server does, and the
// signing keys it checks them with: RSA key pairs, the `bulkhead keys` CLI that registers them,
// the npm `http-signature` verifier (draft-cavage rsa-sha256) and the Digest check. Used by the
// ActivityPub interop tests and the Sidekiq bridge's.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const httpSignature = require('http-signature');

export const KEY_ID = 'https://social.example/users/alice#main-key';
export const SIGNED_HEADERS = ['(request-target)', 'host', 'date', 'digest', 'content-type'];

// `privateExtra` adds to the private key's encoding, e.g. { cipher, passphrase }.
export function rsaKeyPair(modulusLength = 2048, privateExtra = {}) {
  return crypto.generateKeyPairSync('rsa', {
    modulusLength,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem', ...privateExtra },
  });
}

// "SHA256:" + unpadded base64 of SHA-256 over the DER SPKI (what bulkhead reports).
export function fingerprint(publicKeyPem) {
  const der = crypto.createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' });
  return `SHA256:${crypto.createHash('sha256').update(der).digest('base64').replace(/=+$/, '')}`;
}

export function writePrivate(dir, name, pem) {
  const file = path.join(dir, name);
  fs.writeFileSync(file, pem, { mode: 0o600 });
  return file;
}

// Runs `bulkhead keys ARGS --http <server>`; resolves with {code, stdout, stderr}.
export function keysCli(server, args, { password } = {}) {
  const env = { ...process.env };
  delete env.BULKHEAD_PASSWORD;
  if (password) env.BULKHEAD_PASSWORD = password;
  return new Promise((resolve, reject) => {
    const proc = spawn(process.env.BULKHEAD_BINARY,
      ['keys', ...args, '--http', `127.0.0.1:${server.httpPort}`], { env });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => { stdout += d; });
    proc.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
    proc.on('error', reject);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// A local inbox: records every request (method, url, headers, raw body) and answers
// status(request) (default 202).
export async function startInbox(defer, status = () => 202) {
  const received = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const request = {
        method: req.method, url: req.url, headers: { ...req.headers }, body: Buffer.concat(chunks),
      };
      received.push(request);
      res.writeHead(status(request)).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  defer(() => new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  return { url: `http://127.0.0.1:${server.address().port}/inbox`, received };
}

// The checks a receiving server makes: the signature over the signed headers verifies with the
// actor's public key, and the Digest header is the SHA-256 of the body received.
export function signatureVerifies(request, publicKeyPem, signedHeaders = SIGNED_HEADERS) {
  const parsed = httpSignature.parseRequest(
    { method: request.method, url: request.url, headers: request.headers },
    { headers: signedHeaders, clockSkew: 300 });
  assert.equal(parsed.keyId, KEY_ID);
  assert.equal(parsed.algorithm, 'RSA-SHA256');
  return httpSignature.verifySignature(parsed, publicKeyPem);
}

export function digestMatches(request) {
  const want = `SHA-256=${crypto.createHash('sha256').update(request.body).digest('base64')}`;
  return request.headers.digest === want;
}
