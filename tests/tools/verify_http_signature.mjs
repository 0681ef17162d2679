// Test helper for bulkhead's encoders_test: verifies an HTTP Signature bulkhead produced with the
// npm http-signature package (Joyent's draft-cavage implementation), and checks the Digest header
// against the body independently.
//
// Usage: node verify_http_signature.mjs <input.json>
// Input:  {"method": "POST", "path": "/inbox?x", "headers": {name: value}, "body": b64,
//          "public_key_pem": "..."}
// Output: {"verified": bool, "digest_ok": bool, "key_id": str, "algorithm": str,
//          "signed_headers": [..], "signing_string": str}
import { readFileSync } from 'node:fs';
import crypto from 'node:crypto';
import httpSignature from 'http-signature';

const input = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const headers = Object.fromEntries(
  Object.entries(input.headers).map(([k, v]) => [k.toLowerCase(), v]));
const request = { method: input.method, url: input.path, httpVersion: '1.1', headers };

const parsed = httpSignature.parseRequest(request, {
  // The test clock is fixed, so accept any Date; the signature still covers it.
  clockSkew: Number.MAX_SAFE_INTEGER,
  headers: ['(request-target)', 'host', 'date', 'digest', 'content-type'],
});
const verified = httpSignature.verifySignature(parsed, input.public_key_pem);
const body = Buffer.from(input.body, 'base64');
const digest = 'SHA-256=' + crypto.createHash('sha256').update(body).digest('base64');

process.stdout.write(JSON.stringify({
  verified,
  digest_ok: headers.digest === digest,
  key_id: parsed.keyId,
  algorithm: parsed.algorithm,
  signed_headers: parsed.params.headers,
  signing_string: parsed.signingString,
}));
