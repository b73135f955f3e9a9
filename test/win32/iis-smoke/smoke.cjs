// Smoke tests against a real IIS with the gatehouse module (.github/workflows/iis.yml). Plain
// Node (net and http), no dependencies. Sites, as the workflow makes them:
//   8081 "protected": gatehouse enabled (pool "gatehouse"), echo.aspx under /public (excluded)
//   8082 "plain":     same pool, gatehouse not enabled
//   8083 "throws":    pool "gatehouse-throw", whose boot script throws 5 s after the core starts
//   8084 "exits":     pool "gatehouse-exit", whose boot script calls process.exit(7)
//   8085 "nolibnode": pool "gatehouse-nolibnode", the module registered a second time from a copy
//                     of the package without libnode.dll
//   8086 "elsewhere": pool "plain", no gatehouse site in it
//   8087 "never":     pool "gatehouse-never", a core that never decides /never, a 3 s decision timeout
//   8088 "noboot":    pool "gatehouse-noboot", GATEHOUSE_IIS_BOOT names a script that is not there
//   8090:             the sidecar (gatehouse serve) with the same configuration, to compare with
//   8095:             the stand-in identity provider (idp.cjs): its keys, and ID tokens to sign in with
//   node smoke.cjs <gatehouse log file of the "gatehouse" pool>
'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const { execFileSync } = require('node:child_process');

const logFile = process.argv[2];
const results = { passed: 0, failed: 0 };
const tests = [];
const test = (name, fn) => tests.push([name, fn]);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function get(port, path, headers = {}, method = 'GET', body) {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (response) => {
      const chunks = [];
      response.on('data', (c) => chunks.push(c));
      response.on('end', () =>
        resolve({
          status: response.statusCode,
          headers: response.headers,
          raw: response.rawHeaders,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    request.setTimeout(60_000, () => request.destroy(new Error('no answer in 60 s')));
    request.on('error', reject);
    if (body !== undefined) request.write(body);
    request.end();
  });
}

// One raw HTTP/1.1 exchange: what is written, then (after `pauseMs`) `rest`; resolves with the
// answer and whether the server closed the connection.
function raw(port, head, { rest, pauseMs = 0 } = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    const started = Date.now();
    socket.setTimeout(90_000, () => socket.destroy(new Error('no answer in 90 s')));
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('end', () => resolve({ text, closed: true, ms: Date.now() - started }));
    socket.on('error', reject);
    socket.write(head);
    if (rest !== undefined) setTimeout(() => socket.writable && socket.write(rest), pauseMs);
  });
}

const statusOf = (text) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
const setCookies = (response) =>
  response.raw.filter((_, i) => i % 2 === 0 && response.raw[i].toLowerCase() === 'set-cookie').length;

test('a site without gatehouse, in the same pool, passes untouched and does not start Node', async () => {
  const r = await get(8082, '/index.html', { 'X-PLATFORM-CLIENT-PRINCIPAL-ID': 'spoofed' });
  assert.equal(r.status, 200);
  await sleep(3000);
  const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '';
  assert.doesNotMatch(
    log,
    /attached to the web-server module/,
    'Node started for a site that does not enable gatehouse',
  );
});

test('the first request of the gatehouse site starts Node, waits for the core while it boots, and is decided by it', async () => {
  const first = await get(8081, '/', { Accept: 'text/html' });
  assert.equal(first.status, 302, `first answer ${first.status} ${first.body}`);
  for (
    let i = 0;
    i < 30 && !(fs.existsSync(logFile) && /attached to the web-server module/.test(fs.readFileSync(logFile, 'utf8')));
    i++
  )
    await sleep(1000);
  assert.match(fs.readFileSync(logFile, 'utf8'), /attached to the web-server module/);
});

test('the kernel cache: a protected static file served to a signed-in user is refused to anyone else, every time', async () => {
  const idToken = (await get(8095, '/id-token?sub=smoke-alice')).body;
  const body = JSON.stringify({ id_token: idToken });
  const signIn = await get(
    8081,
    '/.auth/login/corp',
    { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Accept: 'application/json' },
    'POST',
    body,
  );
  assert.equal(signIn.status, 200, signIn.body);
  const token = JSON.parse(signIn.body).authenticationToken;
  // Hit often enough for http.sys to cache it, were it allowed to (2 hits within 10 s by default).
  for (let i = 0; i < 3; i++) {
    const signedIn = await get(8081, '/secret.txt', { 'X-ZUMO-AUTH': token, Accept: 'application/json' });
    assert.equal(signedIn.status, 200, `signed-in fetch ${i}: ${signedIn.status}`);
    assert.match(signedIn.body, /kernel-cache secret/);
  }
  for (let i = 0; i < 3; i++) {
    const anonymous = await get(8081, '/secret.txt', { Accept: 'application/json' });
    assert.equal(anonymous.status, 401, `anonymous fetch ${i}: ${anonymous.status} ${anonymous.body.slice(0, 80)}`);
    assert.doesNotMatch(anonymous.body, /kernel-cache secret/);
  }
  const cache = execFileSync('netsh', ['http', 'show', 'cachestate'], { encoding: 'utf8' });
  assert.doesNotMatch(cache, /secret\.txt/i, `http.sys holds it:\n${cache}`);
});

test('302 to sign-in for a browser, 401 JSON for an API caller', async () => {
  const browser = await get(8081, '/app/page?x=1', { Accept: 'text/html' });
  assert.equal(browser.status, 302);
  assert.match(browser.headers.location, /\/\.auth\/login\/corp/);
  const api = await get(8081, '/app/data', { Accept: 'application/json' });
  assert.equal(api.status, 401);
  assert.deepEqual(JSON.parse(api.body), { error: 'Authentication required.' });
});

test('several Set-Cookie headers arrive as the sidecar sends them', async () => {
  for (const path of ['/.auth/login/corp', '/.auth/logout']) {
    const iis = await get(8081, path, { Accept: 'text/html', Cookie: 'PlatformAuthSession=stale' });
    const sidecar = await get(8090, path, { Accept: 'text/html', Cookie: 'PlatformAuthSession=stale' });
    assert.equal(iis.status, sidecar.status, path);
    assert.ok(setCookies(sidecar) >= 1, `${path}: the sidecar sets a cookie`);
    assert.equal(setCookies(iis), setCookies(sidecar), `${path}: Set-Cookie count`);
  }
});

test('/.auth POST bodies: fast and chunked are answered by the core; a slow one gets 408 and a closed connection', async () => {
  const body = JSON.stringify({ access_token: 'not-a-token' });
  const fast = await get(
    8081,
    '/.auth/login/corp',
    { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
    'POST',
    body,
  );
  assert.ok(fast.status >= 400 && fast.status < 500, `fast: ${fast.status} ${fast.body}`);
  const chunked = await raw(
    8081,
    `POST /.auth/login/corp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
  );
  assert.equal(statusOf(chunked.text), fast.status, chunked.text.slice(0, 200));
  const slow = await raw(
    8081,
    'POST /.auth/login/corp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a',
    { rest: 'b', pauseMs: 10_000 },
  );
  assert.equal(statusOf(slow.text), 408, slow.text.slice(0, 200));
  assert.ok(slow.closed && slow.ms >= 29_000 && slow.ms < 60_000, `408 after ${slow.ms} ms`);
});

test('duplicate and underscore spellings of identity headers never reach the app', async () => {
  const r = await raw(
    8081,
    'GET /public/echo.aspx HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n' +
      'X-PLATFORM-CLIENT-PRINCIPAL-ID: one\r\nX-PLATFORM-CLIENT-PRINCIPAL-ID: two\r\nx-platform-client-principal-name: three\r\n' +
      'X_PLATFORM_CLIENT_PRINCIPAL_IDP: four\r\nX-MS-CLIENT-PRINCIPAL: five\r\nX-MS-CLIENT-PRINCIPAL: six\r\nX-Original-URL: /admin\r\n\r\n',
  );
  assert.equal(statusOf(r.text), 200, r.text.slice(0, 300));
  const seen = r.text.split('\r\n\r\n').slice(1).join('\r\n\r\n');
  assert.doesNotMatch(seen, /PRINCIPAL|X-Original-URL/i, seen);
});

/** 503 with Retry-After and the module's JSON error. */
function refused(response, error, what) {
  assert.equal(response.status, 503, `${what}: ${response.status} ${response.body.slice(0, 120)}`);
  assert.equal(response.headers['retry-after'], '5', what);
  assert.deepEqual(JSON.parse(response.body), { error });
}

async function endsWith503(port, what) {
  const before = await get(port, '/', { Accept: 'text/html' });
  assert.equal(before.status, 302, `${what}: the core answers before it ends`);
  await sleep(7_000); // the boot script ends Node 5 s after the core starts
  // The old worker process answers this one, and asks IIS for a new worker process (RecycleProcess),
  // to which IIS then sends the requests; its Node answers until its own boot script ends it.
  refused(await get(port, '/', { Accept: 'text/html' }), 'The authentication layer is not running.', what);
  for (let i = 0; i < 120; i++) {
    if ((await get(port, '/', { Accept: 'text/html' })).status === 302) return;
    await sleep(1000);
  }
  assert.fail(`${what}: no new worker process answered within two minutes`);
}

test('an uncaught exception in the core: Node stops, w3wp lives on and answers 503, then a new worker process takes over', () =>
  endsWith503(8083, 'throw'));
test('process.exit() in the core: Node stops, w3wp lives on and answers 503, then a new worker process takes over', () =>
  endsWith503(8084, 'exit'));

test('libnode.dll missing beside the module: its site is answered 503, IIS serves on', async () => {
  for (let i = 0; i < 2; i++)
    refused(await get(8085, '/', { Accept: 'text/html' }), 'The authentication layer is not running.', 'no libnode');
  assert.equal((await get(8082, '/index.html')).status, 200, 'other sites serve on');
});

test('a decision that never comes: 503 at GATEHOUSE_IIS_DECISION_TIMEOUT, other requests decided as before', async () => {
  const [never, fine] = await Promise.all([get(8087, '/never'), get(8087, '/index.html')]);
  refused(never, 'The authentication layer did not decide in time.', 'never');
  assert.equal(fine.status, 200);
});

test('a boot script that is not there: 503 (the reason is in the event log)', async () => {
  for (let i = 0; i < 2; i++)
    refused(await get(8088, '/', { Accept: 'text/html' }), 'The authentication layer is not running.', 'no boot');
});

(async () => {
  for (const [name, fn] of tests) {
    try {
      await fn();
      results.passed++;
      console.log(`ok - ${name}`);
    } catch (error) {
      results.failed++;
      console.log(`not ok - ${name}: ${error && error.message}`);
    }
  }
  console.log(`${results.passed} passed, ${results.failed} failed`);
  process.exitCode = results.failed === 0 ? 0 : 1;
})();
