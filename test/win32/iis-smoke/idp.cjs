// A stand-in identity provider for the smoke job (.github/workflows/iis.yml), speaking the real
// protocol a client-directed sign-in needs: the provider's keys as a JWKS (certificationUri) and
// ID tokens signed with them (RS256), so that a test can sign in without the internet. Plain Node.
//   node idp.cjs <port>        GET /jwks → the keys; GET /id-token?sub=<user> → a fresh ID token
// Its issuer is http://127.0.0.1:<port>, the audience "smoke" (test/win32/iis-smoke/auth.json).
'use strict';
const crypto = require('node:crypto');
const http = require('node:http');

const port = Number(process.argv[2] || 8095);
const issuer = `http://127.0.0.1:${port}`;
const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const kid = crypto.randomBytes(8).toString('hex');
const jwk = { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' };

const b64url = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

function idToken(sub) {
  const now = Math.floor(Date.now() / 1000);
  const header = b64url({ alg: 'RS256', typ: 'JWT', kid });
  const payload = b64url({ iss: issuer, aud: 'smoke', sub, name: sub, iat: now, exp: now + 600 });
  const signature = crypto.sign('sha256', Buffer.from(`${header}.${payload}`), privateKey).toString('base64url');
  return `${header}.${payload}.${signature}`;
}

http
  .createServer((request, response) => {
    const url = new URL(request.url, issuer);
    if (url.pathname === '/jwks') {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ keys: [jwk] }));
    } else if (url.pathname === '/id-token') {
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      response.end(idToken(url.searchParams.get('sub') || 'smoke-user'));
    } else {
      response.writeHead(404);
      response.end();
    }
  })
  .listen(port, '127.0.0.1', () => console.log(`stand-in identity provider on ${issuer}`));
