// The independent verifier for `gatehouse token inspect`: panva's jose (Debian's node-jose), the library Better
// Auth verifies Apple and Google ID tokens with. Reads {"audience", "cases": [payload JSON text, ...]} on stdin,
// signs each payload as written (so claims may be strings, objects, 1e308 ...) with a fresh RSA key, verifies it
// as Better Auth's Apple provider does (RS256, Apple's issuer, the audience, maxTokenAge 1h), and prints
// {"jwks": {...}, "results": [{"token", "accepted", "error"}]} where error is "<ErrorName>: <message>".
'use strict';
const crypto = require('crypto');
const jose = require(process.env.JOSE_MODULE || '/usr/share/nodejs/jose');

const b64 = (text) => Buffer.from(text).toString('base64url');

async function main() {
  const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
  const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' });
  Object.assign(jwk, { kid: 'oracle1', alg: 'RS256', use: 'sig' });
  const header = b64(JSON.stringify({ alg: 'RS256', kid: 'oracle1' }));
  const results = [];
  for (const payload of input.cases) {
    const signingInput = header + '.' + b64(payload);
    const signature = crypto.sign('sha256', Buffer.from(signingInput), privateKey).toString('base64url');
    const token = signingInput + '.' + signature;
    try {
      await jose.jwtVerify(token, publicKey, {
        algorithms: ['RS256'], issuer: 'https://appleid.apple.com', audience: input.audience, maxTokenAge: '1h',
      });
      results.push({ token, accepted: true, error: null });
    } catch (error) {
      results.push({ token, accepted: false, error: `${error.constructor.name}: ${error.message}` });
    }
  }
  process.stdout.write(JSON.stringify({ jwks: { keys: [jwk] }, results }));
}

main().catch((error) => { process.stderr.write(String(error && error.stack || error)); process.exit(1); });
