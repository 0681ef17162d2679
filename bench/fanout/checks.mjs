// The checks a receiving server makes on a delivery, with the reference implementations the
// interop tests use: Joyent's npm http-signature (draft-cavage-http-signatures-12) for activitypub
// signatures, npm http_ece (the library npm web-push encrypts with) to decrypt RFC 8291
// aes128gcm pushes, and node's crypto for the RFC 8292 VAPID token (ES256).
// Each check returns null when the request passes, else a message naming what failed.
import crypto from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../tests/package.json', import.meta.url));
const httpSignature = require('http-signature');
const ece = require('http_ece');

// What Mastodon signs (app/lib/request.rb) and bulkhead too (encoders/http_signature.h).
export const SIGNED_HEADERS = ['(request-target)', 'host', 'date', 'digest', 'content-type'];

// RFC 3230 Digest: SHA-256 of the body received.
export function checkDigest(headers, body) {
  const want = `SHA-256=${crypto.createHash('sha256').update(body).digest('base64')}`;
  return headers.digest === want ? null : `Digest ${headers.digest ?? '(none)'} is not ${want}`;
}

// draft-cavage rsa-sha256 over SIGNED_HEADERS with the actor's public key; the Date within 300 s
// (Mastodon's window, app/controllers/concerns/signature_verification.rb).
export function checkSignature({ method, url, headers }, publicKeyPem, keyId) {
  let parsed;
  try {
    parsed = httpSignature.parseRequest({ method, url, httpVersion: '1.1', headers },
      { headers: SIGNED_HEADERS, clockSkew: 300 });
  } catch (e) {
    return `Signature header: ${e.message}`;
  }
  if (parsed.keyId !== keyId) return `Signature keyId ${parsed.keyId} is not ${keyId}`;
  if (parsed.algorithm !== 'RSA-SHA256') return `Signature algorithm ${parsed.algorithm}`;
  return httpSignature.verifySignature(parsed, publicKeyPem) ? null : 'Signature does not verify';
}

function b64urlJson(part) {
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
}

// RFC 8292: Authorization "vapid t=<JWT>, k=<key>"; the JWT is ES256 under k, its aud the push
// service's origin, exp no more than 24 h ahead (§2), sub a mailto: or https: contact.
export function checkVapid(headers, origin, nowSeconds = Date.now() / 1000) {
  const m = /^vapid t=([A-Za-z0-9_\-.]+),\s*k=([A-Za-z0-9_-]+)$/.exec(headers.authorization ?? '');
  if (!m) return `Authorization is not "vapid t=..., k=...": ${headers.authorization ?? '(none)'}`;
  const [jwt, k] = [m[1], m[2]];
  const [h, c, s] = jwt.split('.');
  if (!s) return 'VAPID token is not a JWT';
  const point = Buffer.from(k, 'base64url');
  if (point.length !== 65 || point[0] !== 4) return 'VAPID k is not an uncompressed P-256 point';
  const key = crypto.createPublicKey({
    format: 'jwk',
    key: {
      kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33).toString('base64url'),
    },
  });
  const ok = crypto.verify('sha256', Buffer.from(`${h}.${c}`), { key, dsaEncoding: 'ieee-p1363' },
    Buffer.from(s, 'base64url'));
  if (!ok) return 'VAPID JWT signature does not verify';
  const header = b64urlJson(h);
  const claims = b64urlJson(c);
  if (header.alg !== 'ES256') return `VAPID JWT alg ${header.alg}`;
  if (claims.aud !== origin) return `VAPID aud ${claims.aud} is not ${origin}`;
  if (!(claims.exp > nowSeconds && claims.exp <= nowSeconds + 86400 + 60)) {
    return `VAPID exp ${claims.exp} is not within the next 24 h`;
  }
  if (!/^(mailto:|https:)/.test(claims.sub ?? '')) return `VAPID sub ${claims.sub}`;
  return null;
}

// RFC 8291 aes128gcm, decrypted with the subscriber's keys ({privateKey, auth} base64url); the
// plaintext must be `expected`.
export function checkPush(headers, body, subscriber, expected) {
  if (headers['content-encoding'] !== 'aes128gcm') {
    return `Content-Encoding ${headers['content-encoding'] ?? '(none)'} is not aes128gcm`;
  }
  if (!headers.ttl) return 'no TTL header (RFC 8030 §5.2)';
  const receiver = crypto.createECDH('prime256v1');
  receiver.setPrivateKey(Buffer.from(subscriber.privateKey, 'base64url'));
  let plaintext;
  try {
    plaintext = ece.decrypt(body, { version: 'aes128gcm', privateKey: receiver, authSecret: subscriber.auth });
  } catch (e) {
    return `push does not decrypt: ${e.message}`;
  }
  return plaintext.toString('utf8') === expected ? null : 'push decrypts to another payload';
}
