// Test helper for bulkhead's encoders_test: decrypts a Web Push request bulkhead built, using the
// reference implementation (npm http_ece, the library npm web-push encrypts with), and verifies
// its VAPID JWT with node's own crypto.
//
// Usage: node webpush_decrypt.mjs <input.json>
// Input:  {"ua_private": b64url, "auth": b64url, "headers": {name: value}, "body": b64url}
// Output: {"plaintext": b64url, "jwt_valid": bool, "jwt_header": {...}, "jwt_claims": {...},
//          "vapid_key": b64url}   (exit status 1 with a message on stderr on failure)
import { readFileSync } from 'node:fs';
import crypto from 'node:crypto';
import ece from 'http_ece';

const input = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const headers = Object.fromEntries(
  Object.entries(input.headers).map(([k, v]) => [k.toLowerCase(), v]));
const b64 = (s) => Buffer.from(s, 'base64url');

function params(value) {
  // "a=1;b=2" -> {a: "1", b: "2"}
  return Object.fromEntries(value.split(/[;,]/).map((p) => p.trim().split('=')));
}

const receiver = crypto.createECDH('prime256v1');
receiver.setPrivateKey(b64(input.ua_private));

const encoding = headers['content-encoding'];
const decryptParams = { version: encoding, privateKey: receiver, authSecret: input.auth };
let jwt;
let vapidKey;
if (encoding === 'aesgcm') {
  const cryptoKey = params(headers['crypto-key']);
  decryptParams.dh = cryptoKey.dh;
  decryptParams.salt = params(headers['encryption']).salt;
  vapidKey = cryptoKey.p256ecdsa;
  const [scheme, token] = headers['authorization'].split(' ');
  if (scheme !== 'WebPush') throw new Error('aesgcm Authorization must be "WebPush <jwt>"');
  jwt = token;
} else if (encoding === 'aes128gcm') {
  const auth = headers['authorization'];
  if (!auth.startsWith('vapid ')) throw new Error('Authorization must start with "vapid "');
  const p = params(auth.slice('vapid '.length));
  jwt = p.t;
  vapidKey = p.k;
} else {
  throw new Error('unknown Content-Encoding ' + encoding);
}

const plaintext = ece.decrypt(b64(input.body), decryptParams);

const [h, c, s] = jwt.split('.');
const point = b64(vapidKey);
const publicKey = crypto.createPublicKey({
  key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'),
         y: point.subarray(33, 65).toString('base64url') },
  format: 'jwk',
});
const jwtValid = crypto.verify('sha256', Buffer.from(h + '.' + c),
  { key: publicKey, dsaEncoding: 'ieee-p1363' }, b64(s));

process.stdout.write(JSON.stringify({
  plaintext: plaintext.toString('base64url'),
  jwt_valid: jwtValid,
  jwt_header: JSON.parse(b64(h).toString()),
  jwt_claims: JSON.parse(b64(c).toString()),
  vapid_key: vapidKey,
}));
