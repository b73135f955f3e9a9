// The IIS module's own code (binding/iis/module.cpp and the files it lists) in a fake IIS, under wine: the Windows
// build of Node runs this file; the module, its portable parts and the fake IIS
// (test/win32/fake-iis: IHttpContext, IHttpRequest, IHttpResponse, IHttpCompletionInfo and
// IHttpModuleRegistrationInfo played by the test) are one mingw-w64 DLL, and each copy of it
// that is loaded is one IIS worker process with the module in it. The module submits to the
// real engine of the real addon, attached through the real host link by the real in-server core
// (src/inserver, built into the package below), running in a Node environment the module
// starts: a worker thread here, an environment inside w3wp.exe on a real IIS
// (test/win32/fake-iis/node_runtime_in_test_process.cpp says what that leaves to a real IIS).
//
//   node.exe fake-iis.test.cjs <package directory>
// The package directory is laid out as installed (scripts/win32/test.sh makes it): dist/,
// binding/iis/boot.cjs, build/Release/{gatehouse_native,gatehouse_fake_iis}.node and a stand-in
// for libnode.dll (gatehouse-fake-libnode.dll: the module loads it from its own directory before
// it starts Node).
// Plain CommonJS with node:assert; prints "N passed, N failed".
'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Worker } = require('node:worker_threads');

const packageDir = path.resolve(process.argv[2]);
const release = path.join(packageDir, 'build', 'Release');
const EMBEDDED_NODE = path.join(__dirname, 'fake-iis', 'embedded-node.cjs');
const RQ_BEGIN_REQUEST = 1;
const E_FAIL = 0x80004005;
const E_OUTOFMEMORY_WIN32 = 0x80070008; // HRESULT_FROM_WIN32(ERROR_NOT_ENOUGH_MEMORY)
// A hung request must fail its test, not the whole leg (this is no speed limit: tests never time).
const HANG_MS = 120_000;

const results = { passed: 0, failed: 0 };
const tests = [];
const test = (name, fn) => tests.push([name, fn]);

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-fake-iis-'));

/** The configuration of a site: one OpenID Connect provider (never reached), /public/* open to anyone. */
function siteConfig(extra = {}) {
  return {
    globalValidation: { excludedPaths: ['/public/*'] },
    identityProviders: {
      customOpenIdConnectProviders: {
        corp: {
          registration: {
            clientId: 'app',
            clientCredential: { clientSecretSettingName: 'CORP_SECRET' },
            openIdConnectConfiguration: {
              authorizationEndpoint: 'https://idp.example/authorize',
              tokenEndpoint: 'https://idp.example/token',
              issuer: 'https://idp.example',
              certificationUri: 'https://idp.example/keys',
            },
          },
        },
      },
    },
    login: { tokenStore: { fileSystem: { directory: fs.mkdtempSync(path.join(scratch, 'tokens-')) } } },
    ...extra,
  };
}

function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * One IIS worker process: its own copy of the module DLL (the module keeps its state per
 * process), the environment variables of its application pool, and the Node host that starts
 * the module's Node when the module asks (held back until released, so that what the module
 * answers while its core boots can be seen).
 */
class WorkerProcess {
  constructor(name, { moduleEnv = {}, coreEnv = {}, holdNode = false, moduleDir = release } = {}) {
    this.name = name;
    fs.mkdirSync(moduleDir, { recursive: true });
    this.addon = path.join(moduleDir, `gatehouse_fake_iis-${name}.node`);
    fs.copyFileSync(path.join(release, 'gatehouse_fake_iis.node'), this.addon);
    this.iis = require(this.addon);
    this.moduleEnv = moduleEnv;
    this.logFile = path.join(scratch, `${name}.log`);
    this.coreEnv = { GATEHOUSE_LOG_FILE: this.logFile, GATEHOUSE_FAKE_IIS_PACKAGE: packageDir, ...coreEnv };
    this.starts = [];
    this.gate = deferred();
    if (!holdNode) this.gate.resolve();
    this.exited = deferred();
    this.errors = [];
    this.firstRequest = true;
    this.iis.setNodeHost((kind, bootScript, execArgs) =>
      kind === 'start' ? this.#start(bootScript, execArgs) : this.#stop(),
    );
  }

  #start(bootScript, execArgs) {
    this.starts.push({ bootScript, execArgs });
    this.gate.promise.then(() => {
      const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('GATEHOUSE_')));
      this.worker = new Worker(EMBEDDED_NODE, {
        workerData: { addon: this.addon, bootScript },
        env: { ...env, ...this.coreEnv },
      });
      this.worker.on('error', (error) => this.errors.push(error));
      this.worker.on('exit', (code) => {
        this.exitCode = code;
        this.exited.resolve(code);
        if (this.stopping) this.iis.nodeStopped();
        else this.iis.nodeEnded(); // by itself: process.exit(), an uncaught exception, a failed start
      });
      if (this.stopping) this.worker.terminate();
    });
  }

  #stop() {
    this.stopping = true;
    if (this.worker === undefined || this.exitCode !== undefined) this.iis.nodeStopped();
    else this.worker.terminate();
  }

  releaseNode() {
    this.gate.resolve();
  }

  /** One request through the module. The first one of the process reads the pool's settings (GATEHOUSE_IIS_BOOT…). */
  async request(script) {
    const full = {
      method: 'GET',
      url: '/',
      headers: [
        ['Host', 'app.example'],
        ['Accept', 'text/html'],
      ],
      ...script,
    };
    if (!this.firstRequest) return this.iis.request(full);
    this.firstRequest = false;
    for (const key of [
      'GATEHOUSE_IIS_BOOT',
      'GATEHOUSE_NODE_OPTIONS',
      'GATEHOUSE_IIS_START_WAIT',
      'GATEHOUSE_IIS_DECISION_TIMEOUT',
    ])
      delete process.env[key];
    Object.assign(process.env, this.moduleEnv);
    try {
      return await this.iis.request(full);
    } finally {
      for (const key of Object.keys(this.moduleEnv)) delete process.env[key];
    }
  }

  /** Waits until the core answers (/.auth/version), one request every 50 ms (its boot takes a while). */
  async untilCoreAnswers() {
    for (let attempt = 0; attempt < 1200; attempt++) {
      const r = await this.request({
        url: '/.auth/version',
        headers: [
          ['Host', 'app.example'],
          ['Accept', 'application/json'],
        ],
      });
      if (r.status === 200) return;
      assert.equal(r.status, 503, 'until the core is attached, the module answers 503');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${this.name}: the core never answered`);
  }

  /** What the module asked of IIS's RecycleProcess: each reason, and any call the fake does not model. */
  recycles() {
    const { reasons, violations } = this.iis.recycles();
    assert.deepEqual(violations, [], 'the module called nothing else of IHttpServer');
    return reasons;
  }

  /** The core's log (GATEHOUSE_LOG_FILE), as JSON lines. */
  log() {
    if (!fs.existsSync(this.logFile)) return [];
    return fs
      .readFileSync(this.logFile, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  }

  async untilLogged(predicate) {
    for (let attempt = 0; attempt < 1200; attempt++) {
      const line = this.log().find(predicate);
      if (line) return line;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${this.name}: never logged what the test waited for`);
  }
}

const headerValues = (list, name) => list.filter(([n]) => n.toLowerCase() === name.toLowerCase()).map(([, v]) => v);
const jsonBody = (outcome) => JSON.parse(outcome.body.toString('utf8'));
const spoofable = (name) => /^x[-_.]?(platform|ms)[-_.]/i.test(name);

// IISCacheEvents::HTTPSYS_CACHEABLE NON_ANONYMOUS_ACCESS: the reason IIS's authentication modules give.
const NON_ANONYMOUS_ACCESS = 11;

/** What every outcome must show: IIS's rules kept, and the response kept out of http.sys's kernel cache. */
function kept(outcome) {
  assert.deepEqual(outcome.violations, [], 'the module broke no rule of IIS');
  assert.equal(
    outcome.kernelCacheDisabled,
    NON_ANONYMOUS_ACCESS,
    'a judged response must never be kernel-cached (http.sys would serve it to anyone, before the module runs)',
  );
  return outcome;
}

/** The module's own error answer: status, {"error": message}, IIS's custom error pages skipped. */
function answeredError(outcome, status, message) {
  kept(outcome);
  assert.equal(outcome.result, 'finish');
  assert.equal(outcome.status, status);
  assert.equal(outcome.skipCustomErrors, true, 'custom error pages must not replace the answer');
  if (message !== undefined) assert.deepEqual(jsonBody(outcome), { error: message });
  assert.deepEqual(headerValues(outcome.headers, 'Content-Type'), ['application/json; charset=utf-8']);
}

/** A bare status: what the module answers when even its error answer cannot be written. */
function answeredBare(outcome, status) {
  kept(outcome);
  assert.equal(outcome.result, 'finish');
  assert.equal(outcome.status, status);
  assert.deepEqual(outcome.headers, []);
  assert.equal(outcome.body.length, 0);
}

const TOKEN_BODY = '{"id_token":"eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."}';
const authPost = (body, extra = {}) => ({
  method: 'POST',
  url: '/.auth/login/corp',
  headers: [
    ['Host', 'app.example'],
    ['Accept', 'application/json'],
    ['Content-Type', 'application/json'],
  ],
  body,
  ...extra,
});
/** The body in pieces of `size` bytes, arriving as `arrival` says (a function of the piece's index). */
const pieces = (text, size, arrival) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => ({
    data: text.slice(i * size, (i + 1) * size),
    arrival: arrival(i),
  }));
const SPOOFED = [
  ['X-PLATFORM-CLIENT-PRINCIPAL-ID', 'admin'],
  ['X-PLATFORM-CLIENT-PRINCIPAL-ID', 'root'],
  ['x-Platform-Client-Principal-Id', 'mixed case'],
  ['X_PLATFORM_CLIENT_PRINCIPAL_NAME', 'underscore'],
  ['x_platform_client_principal_name', 'underscore again'],
  ['X-Platform-Token-Dev-Access-Token', 'forged'],
  ['X-MS-CLIENT-PRINCIPAL-ID', 'admin'],
];

// ---------------------------------------------------------------------------------------------
// "main": a site that enables gatehouse, the real core, started lazily.
const main = new WorkerProcess('main', {
  // Two spaces: the module splits on each, and drops what is empty. --inspect is refused. Node is
  // held back below: the first requests wait a second for the core, then are refused.
  moduleEnv: {
    GATEHOUSE_NODE_OPTIONS: '--max-old-space-size=96  --inspect=9229 --trace-warnings',
    GATEHOUSE_IIS_START_WAIT: '1',
  },
  coreEnv: {
    GATEHOUSE_AUTH_CONFIG_JSON: JSON.stringify(siteConfig()),
    CORP_SECRET: 's3cret',
    GATEHOUSE_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
  },
  holdNode: true,
});
let deadlines;

test('RegisterModule: BeginRequest notifications only, and no Node yet (IIS loads a global module into every worker process)', () => {
  const registered = main.iis.registerModule();
  assert.deepEqual(registered, {
    hr: 0,
    notifications: RQ_BEGIN_REQUEST,
    postNotifications: 0,
    factory: true,
    violations: [],
  });
  assert.equal(main.iis.nodeStartRequests(), 0);
  assert.deepEqual(main.starts, []);
});

test('the first request IIS hands the module starts Node, once: the boot script beside the DLL, GATEHOUSE_NODE_OPTIONS split and checked', async () => {
  const first = await main.request({ url: '/orders' });
  const second = await main.request({ url: '/orders' });
  assert.equal(main.iis.nodeStartRequests(), 1);
  assert.equal(main.starts.length, 1);
  // <package>/build/Release/<dll> → <package>/binding/iis/boot.cjs
  assert.equal(
    main.starts[0].bootScript.toLowerCase(),
    path.join(packageDir, 'binding', 'iis', 'boot.cjs').toLowerCase(),
  );
  assert.deepEqual(main.starts[0].execArgs, ['--max-old-space-size=96', '--trace-warnings']);
  // The core did not attach within GATEHOUSE_IIS_START_WAIT: 503 with Retry-After, fail closed.
  assert.equal(first.notifications, 2, 'the first request waited for the core (pending), then was refused');
  for (const r of [first, second]) {
    answeredError(r, 503, 'The authentication layer is not running.');
    assert.deepEqual(headerValues(r.headers, 'Retry-After'), ['5']);
  }
});

test('the core boots in the module’s Node and attaches; requests are decided by it from then on', async () => {
  main.releaseNode();
  await main.untilCoreAnswers();
  assert.equal(main.iis.nodeStartRequests(), 1, 'Node started once');
  const logged = main.log().find((line) => /attached to the web-server module/.test(line.msg));
  assert.ok(logged, 'the core logged that it attached');
  // Started now, so that their 30 s deadline passes while the other tests run.
  deadlines = Promise.all([
    main.request(authPost([{ data: '{"id_token":', arrival: 'later' }], { end: 'stalled' })),
    main.request(authPost([{ data: '{"id_', arrival: 'buffered' }], { end: 'stalled', http2: true })),
  ]);
});

test('challenges: a browser is sent to sign in (302), an API call gets 401 in JSON', async () => {
  const browser = kept(await main.request({ url: '/orders?page=2' }));
  assert.equal(browser.result, 'finish');
  assert.equal(browser.status, 302);
  assert.equal(browser.reason, 'Found');
  assert.deepEqual(headerValues(browser.headers, 'Location'), [
    '/.auth/login/corp?post_login_redirect_uri=%2Forders%3Fpage%3D2',
  ]);
  const api = await main.request({
    url: '/api/orders',
    headers: [
      ['Host', 'app.example'],
      ['Accept', 'application/json'],
    ],
  });
  answeredError(api, 401, 'Authentication required.');
  assert.deepEqual(headerValues(api.headers, 'WWW-Authenticate'), ['Bearer']);
});

test('the kernel cache: every request the module judges, let through or answered, is kept out of it, once', async () => {
  const outcomes = [
    await main.request({ url: '/public/logo.png' }),
    await main.request({ url: '/orders' }),
    await main.request({
      url: '/api/x',
      headers: [
        ['Host', 'app.example'],
        ['Accept', 'application/json'],
      ],
    }),
    await main.request(authPost([{ data: TOKEN_BODY, arrival: 'later' }])),
    await main.request({ url: '/orders', faults: { 'IHttpResponse::SetStatus': 'fail' } }),
  ];
  assert.deepEqual(
    outcomes.map((r) => [r.result, r.status]),
    [
      ['continue', 200],
      ['finish', 302],
      ['finish', 401],
      ['finish', 401],
      ['finish', 500], // the answer could not be written: a bare 500
    ],
  );
  for (const r of outcomes) {
    kept(r);
    assert.equal(r.calls['IHttpResponse::DisableKernelCache'], 1);
  }
});

test('several Set-Cookie in one answer: each its own header, none replacing another', async () => {
  const stale = Array.from({ length: 5 }, (_, i) => `PlatformAuthSessionLogin_abcdefghijklmno${i}=stale${i}`).join(
    '; ',
  );
  const r = kept(
    await main.request({
      url: '/.auth/login/corp',
      headers: [
        ['Host', 'app.example'],
        ['Accept', 'text/html'],
        ['Cookie', stale],
      ],
    }),
  );
  assert.equal(r.status, 302);
  const cookies = headerValues(r.headers, 'Set-Cookie');
  // The two oldest of five pending sign-ins are cleared, and the new one's cookie is set.
  assert.equal(cookies.length, 3, cookies.join('\n'));
  assert.equal(cookies.filter((c) => /Max-Age=0/.test(c)).length, 2);
  assert.match(headerValues(r.headers, 'Location')[0], /^https:\/\/idp\.example\/authorize\?/);
});

test('spoofed identity headers: every copy removed (duplicates, mixed case, underscores); the app sees X-Forwarded-*', async () => {
  const r = kept(
    await main.request({
      url: '/public/page',
      headers: [['Host', 'app.example'], ['Accept', 'text/html'], ['X-Request-Id', 'r1'], ...SPOOFED],
    }),
  );
  assert.equal(r.result, 'continue');
  const names = r.appHeaders.map(([n]) => n);
  assert.deepEqual(names.filter(spoofable), [], `left for the app: ${names.join(', ')}`);
  assert.deepEqual(headerValues(r.appHeaders, 'X-Request-Id'), ['r1']);
  assert.deepEqual(headerValues(r.appHeaders, 'X-Forwarded-For'), ['10.0.0.1']);
  assert.deepEqual(headerValues(r.appHeaders, 'X-Forwarded-Proto'), ['https']);
  assert.deepEqual(headerValues(r.appHeaders, 'X-Forwarded-Host'), ['app.example']);
  // One DeleteHeader removes one copy: at least as many deletes as copies.
  assert.ok(
    r.calls['IHttpRequest::DeleteHeader'] >= SPOOFED.length,
    `DeleteHeader ${r.calls['IHttpRequest::DeleteHeader']} times`,
  );
});

test('an auth-route POST body reaches the core whole: buffered, pending, completed before ReadEntityBody returns, chunked in 2-byte pieces', async () => {
  const ways = {
    buffered: authPost([{ data: TOKEN_BODY, arrival: 'buffered' }]),
    pending: authPost(pieces(TOKEN_BODY, 20, () => 'later')),
    'before return': authPost(pieces(TOKEN_BODY, 20, () => 'before-return')),
    'chunked, mixed': authPost(
      pieces(TOKEN_BODY, 2, (i) => ['buffered', 'later', 'before-return'][i % 3]),
      { chunked: true },
    ),
  };
  for (const [way, script] of Object.entries(ways)) {
    const r = await main.request(script);
    // The core's answer to the whole body (a forged token): 401. A part of it would be 400.
    answeredError(r, 401);
    assert.equal(jsonBody(r).error, 'invalid_token', way);
    if (way === 'buffered') assert.deepEqual([r.pendingReads, r.bufferedReads], [0, 1], way);
    if (way === 'pending') assert.deepEqual([r.pendingReads, r.bufferedReads], [3, 0], way);
    assert.equal(r.calls['IHttpRequest::InsertEntityBody'], undefined, `${way}: nothing given back, the core answered`);
  }
  const truncated = await main.request(authPost(pieces(TOKEN_BODY.slice(0, 30), 10, () => 'later')));
  answeredError(truncated, 400, 'The body is not valid JSON.');
});

test('a body over the core’s limit: the module reads 64 KiB and one byte more, and the core answers 413', async () => {
  const big = 'x'.repeat(100_000);
  const r = await main.request(authPost(pieces(big, 16_384, (i) => (i % 2 ? 'later' : 'buffered'))));
  answeredError(r, 413, 'The body is larger than 65536 bytes.');
  assert.ok(r.pendingReads + r.bufferedReads <= 5, 'it stopped reading past the limit');
});

test('a client that goes away in the middle of the body: 400, the connection left as it is', async () => {
  const r = await main.request(authPost([{ data: '{"id_token":', arrival: 'later' }], { end: 'aborted' }));
  answeredError(r, 400, 'The body could not be read.');
  assert.equal(r.needDisconnect, false);
});

test('a decision whose PostCompletion runs the completion before it returns (IIS may), and one decided on another thread later', async () => {
  for (const postCompletionBeforeReturn of [true, false]) {
    const challenge = kept(await main.request({ url: '/orders', postCompletionBeforeReturn }));
    assert.equal(challenge.status, 302);
    const forward = kept(
      await main.request({
        url: '/public/a',
        postCompletionBeforeReturn,
        headers: [['Host', 'app.example'], ...SPOOFED],
      }),
    );
    assert.equal(forward.result, 'continue');
    assert.deepEqual(forward.appHeaders.map(([n]) => n).filter(spoofable), []);
    assert.equal(
      challenge.calls['IHttpContext::PostCompletion'] + forward.calls['IHttpContext::PostCompletion'],
      2,
      'each resumed once',
    );
  }
});

test('no C++ exception reaches IIS: std::bad_alloc from the IIS calls the module makes is answered 500, and the module serves on', async () => {
  const publicSpoofed = { url: '/public/x', headers: [['Host', 'app.example'], ...SPOOFED] };
  const api = {
    url: '/api/x',
    headers: [
      ['Host', 'app.example'],
      ['Accept', 'application/json'],
    ],
  };
  const cases = [
    ['IHttpRequest::GetHttpMethod', { url: '/orders' }],
    ['IHttpRequest::GetRemainingEntityBytes', authPost([{ data: TOKEN_BODY }])],
    ['IHttpRequest::ReadEntityBody', authPost([{ data: TOKEN_BODY, arrival: 'later' }])],
    ['IHttpCompletionInfo::GetCompletionStatus', authPost([{ data: TOKEN_BODY, arrival: 'later' }])],
    ['IHttpRequest::DeleteHeader', publicSpoofed],
    ['IHttpRequest::SetHeader', publicSpoofed],
    ['IHttpResponse::WriteEntityChunks', api],
    ['IHttpContext::AllocateRequestMemory', api],
    ['IHttpResponse::SetHeader', api],
  ];
  for (const [method, script] of cases) {
    const r = await main.request({ ...script, faults: { [method]: 'bad_alloc' } });
    answeredError(r, 500, 'The authentication layer failed on this request.');
  }
  const after = kept(await main.request({ url: '/orders' }));
  assert.equal(after.status, 302, 'the module still answers as before');
});

test('failed IIS calls are answered, not ignored: 500 in JSON, or a bare 500 when the answer itself cannot be written', async () => {
  const publicSpoofed = { url: '/public/x', headers: [['Host', 'app.example'], ...SPOOFED] };
  const api = {
    url: '/api/x',
    headers: [
      ['Host', 'app.example'],
      ['Accept', 'application/json'],
    ],
  };
  answeredError(
    await main.request({ ...publicSpoofed, faults: { 'IHttpRequest::SetHeader': 'fail' } }),
    500,
    'The identity headers could not be set.',
  );
  answeredError(
    await main.request({ ...publicSpoofed, faults: { 'IHttpRequest::DeleteHeader': 'fail' } }),
    500,
    'The identity headers could not be set.',
  );
  // An IIS that says it deleted a header and did not: the spoofed copy must not reach the app.
  answeredError(
    await main.request({ ...publicSpoofed, faults: { 'IHttpRequest::DeleteHeader': 'ignore' } }),
    500,
    'The identity headers could not be set.',
  );
  answeredBare(await main.request({ ...api, faults: { 'IHttpResponse::SetHeader': 'fail' } }), 500);
  answeredBare(await main.request({ ...api, faults: { 'IHttpResponse::WriteEntityChunks': 'fail' } }), 500);
  answeredBare(await main.request({ ...api, faults: { 'IHttpContext::AllocateRequestMemory': 'fail' } }), 500);
  answeredBare(await main.request({ ...api, faults: { 'IHttpResponse::SetStatus': 'fail' } }), 500);
  answeredError(
    await main.request({ url: '/orders', faults: { 'IHttpRequest::GetRawHttpRequest': 'fail' } }),
    500,
    'The authentication layer could not read this request.',
  );
});

test('64 requests at once on IIS threads: each answered once, as it would be alone', async () => {
  const kinds = [
    [{ url: '/orders' }, (r) => assert.equal(r.status, 302)],
    [
      { url: '/public/p', headers: [['Host', 'app.example'], ...SPOOFED] },
      (r) => assert.deepEqual([r.result, r.appHeaders.map(([n]) => n).filter(spoofable)], ['continue', []]),
    ],
    [authPost(pieces(TOKEN_BODY, 10, (i) => (i % 2 ? 'later' : 'before-return'))), (r) => assert.equal(r.status, 401)],
    [
      {
        url: '/.auth/me',
        headers: [
          ['Host', 'app.example'],
          ['Accept', 'application/json'],
        ],
      },
      (r) => assert.equal(r.status, 401),
    ],
  ];
  const all = await Promise.all(Array.from({ length: 64 }, (_, i) => main.request(kinds[i % 4][0])));
  all.forEach((r, i) => {
    kept(r);
    kinds[i % 4][1](r);
  });
});

test('the body deadline: a body that stops arriving is cancelled (CancelIo) and answered 408; HTTP/1.1 closes, HTTP/2 keeps its connection', async () => {
  const [http1, http2] = await deadlines;
  for (const r of [http1, http2]) {
    answeredError(r, 408, 'The body did not arrive in time.');
    assert.ok(r.calls['IHttpContext::CancelIo'] >= 1, 'the pending read was cancelled');
  }
  assert.equal(http1.needDisconnect, true, 'HTTP/1.1: the rest of the body must not hold the connection');
  assert.equal(http2.needDisconnect, false, 'HTTP/2: the connection carries other streams');
});

test('the worker process ends (the factory’s Terminate): the module stops its Node and waits for it', async () => {
  await main.iis.terminate();
  // Terminate returned only once the environment had ended.
  assert.notEqual(main.exitCode, undefined, 'the environment has ended');
  assert.equal(main.iis.nodeStartRequests(), 1, 'Node was started once in the process');
  assert.deepEqual(main.recycles(), [], 'stopped by IIS, not ended by itself: no new worker process asked for');
  await assert.rejects(main.request({ url: '/orders' }), /IIS sends no more requests/);
});

// ---------------------------------------------------------------------------------------------
// "cold": a worker process's first requests wait for the core while it boots, and are decided by it.
const cold = new WorkerProcess('cold', {
  moduleEnv: { GATEHOUSE_IIS_START_WAIT: '100' },
  coreEnv: {
    GATEHOUSE_AUTH_CONFIG_JSON: JSON.stringify(siteConfig()),
    CORP_SECRET: 's3cret',
    GATEHOUSE_ENCRYPTION_KEY: Buffer.alloc(32, 5).toString('base64'),
  },
  holdNode: true,
});

test('cold start: requests that arrive while Node boots wait for the core (pending, no IIS thread held) and are decided by it', async () => {
  assert.equal(cold.iis.registerModule().hr, 0);
  const waiting = [cold.request({ url: '/orders' }), cold.request(authPost([{ data: TOKEN_BODY, arrival: 'later' }]))];
  // Node is held back: the requests wait; once it boots, the core decides them.
  cold.releaseNode();
  const [browser, token] = await Promise.all(waiting);
  kept(browser);
  assert.equal(browser.status, 302, 'decided by the core, not refused');
  assert.ok(browser.notifications >= 2, 'it went pending while it waited');
  // The auth route's body was read once the core said which paths need it.
  answeredError(token, 401);
  assert.equal(jsonBody(token).error, 'invalid_token');
  await cold.iis.terminate();
});

// ---------------------------------------------------------------------------------------------
// "open": a site whose core lets auth-route requests through (platform.enabled false).
const open = new WorkerProcess('open', {
  coreEnv: {
    GATEHOUSE_AUTH_CONFIG_JSON: JSON.stringify(siteConfig({ platform: { enabled: false } })),
    CORP_SECRET: 's3cret',
    GATEHOUSE_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString('base64'),
  },
});

test('a body the module read is given back (InsertEntityBody) when the core lets the request continue: the app reads it whole', async () => {
  assert.equal(open.iis.registerModule().hr, 0);
  await open.untilCoreAnswers();
  const body = '{"hello":"app","n":[1,2,3]}';
  const r = kept(
    await open.request(
      authPost(
        pieces(body, 7, (i) => ['later', 'buffered', 'before-return'][i % 3]),
        { url: '/.auth/custom/hook' },
      ),
    ),
  );
  assert.equal(r.result, 'continue');
  assert.equal(r.appBody.toString('utf8'), body);
  assert.equal(r.calls['IHttpRequest::InsertEntityBody'], 1);
});

test('a body larger than the module reads: the app gets what was given back, then the rest from the client', async () => {
  const body = Array.from({ length: 100_000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
  const r = kept(
    await open.request(
      authPost(
        pieces(body, 30_000, () => 'later'),
        { url: '/.auth/custom/upload' },
      ),
    ),
  );
  assert.equal(r.result, 'continue');
  assert.equal(r.appBody.length, body.length);
  assert.equal(r.appBody.toString('latin1'), body);
});

// ---------------------------------------------------------------------------------------------
// Cores that never answer, and cores that fail.
const noNode = new WorkerProcess('no-node');

/** The module's answer while its Node has ended: 503 with Retry-After, in its JSON shape. */
function refusedUntilNewWorker(outcome) {
  answeredError(outcome, 503, 'The authentication layer is not running.');
  assert.deepEqual(headerValues(outcome.headers, 'Retry-After'), ['5']);
}
const RECYCLE_REASON = 'gatehouse: the embedded Node has ended';

test('Node cannot start: every request is answered 503, and IIS is asked for a new worker process once (not again within a minute)', async () => {
  assert.equal(noNode.iis.registerModule().hr, 0);
  noNode.iis.failNodeStart(true);
  for (let i = 0; i < 3; i++) refusedUntilNewWorker(await noNode.request({ url: '/orders' }));
  assert.equal(noNode.iis.nodeStartRequests(), 1, 'Node does not start again in the same process');
  assert.deepEqual(noNode.recycles(), [RECYCLE_REASON]);
});

const noLibnode = new WorkerProcess('no-libnode', { moduleDir: path.join(packageDir, 'build', 'no-libnode') });

test('libnode.dll (its stand-in) missing beside the module: 503, Node never asked to start, no new worker process (it would not find it either)', async () => {
  assert.equal(noLibnode.iis.registerModule().hr, 0);
  for (let i = 0; i < 2; i++) refusedUntilNewWorker(await noLibnode.request({ url: '/orders' }));
  assert.equal(noLibnode.iis.nodeStartRequests(), 0);
  assert.deepEqual(noLibnode.recycles(), []);
});

const brokenConfig = new WorkerProcess('broken-config', {
  coreEnv: {
    GATEHOUSE_AUTH_CONFIG_JSON: JSON.stringify({ globalValidation: { unauthenticatedClientAction: 'Sometimes' } }),
  },
});

test('a core that fails to start (a broken configuration): nothing attaches, every request 503, the log says why', async () => {
  assert.equal(brokenConfig.iis.registerModule().hr, 0);
  answeredError(await brokenConfig.request({ url: '/orders' }), 503);
  const fatal = await brokenConfig.untilLogged((line) => line.level === 60);
  assert.equal(fatal.msg, 'in-server: the auth core did not start');
  assert.match(fatal.problems.join('\n'), /globalValidation\.unauthenticatedClientAction/);
  answeredError(await brokenConfig.request({ url: '/orders' }), 503);
  answeredError(await brokenConfig.request(authPost([{ data: TOKEN_BODY }])), 503);
  // The failed start ends Node, once the line is written: then IIS is asked for a new worker process.
  assert.equal(await brokenConfig.exited.promise, 1);
  refusedUntilNewWorker(await brokenConfig.request({ url: '/orders' }));
  assert.deepEqual(brokenConfig.recycles(), [RECYCLE_REASON]);
});

const throwing = new WorkerProcess('throws', {
  moduleEnv: {
    GATEHOUSE_IIS_BOOT: path.join(__dirname, 'fake-iis', 'throwing-core.cjs'),
    GATEHOUSE_IIS_DECISION_TIMEOUT: '2',
  },
});

test('a core that throws or rejects while deciding: 500, and the process serves on', async () => {
  assert.equal(throwing.iis.registerModule().hr, 0);
  for (let attempt = 0; (await throwing.request({ url: '/ready' })).result !== 'continue'; attempt++) {
    assert.ok(attempt < 1200, 'the throwing core never attached');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(
    throwing.starts[0].bootScript,
    path.join(__dirname, 'fake-iis', 'throwing-core.cjs'),
    'GATEHOUSE_IIS_BOOT names the boot script',
  );
  for (const url of ['/throw', '/reject', '/throw']) answeredError(await throwing.request({ url }), 500);
  assert.equal(kept(await throwing.request({ url: '/fine' })).result, 'continue');
});

test('a decision that never comes: answered 503 with Retry-After at GATEHOUSE_IIS_DECISION_TIMEOUT, and the process serves on', async () => {
  const [never, fine] = await Promise.all([throwing.request({ url: '/never' }), throwing.request({ url: '/fine' })]);
  answeredError(never, 503, 'The authentication layer did not decide in time.');
  assert.deepEqual(headerValues(never.headers, 'Retry-After'), ['5']);
  assert.equal(kept(fine).result, 'continue', 'the others are decided as before');
  assert.equal(kept(await throwing.request({ url: '/fine' })).result, 'continue');
});

test('process.exit() in the core while a decision is pending: that request and every later one 503; the process lives on', async () => {
  answeredError(await throwing.request({ url: '/exit' }), 503);
  assert.equal(await throwing.exited.promise, 7);
  answeredError(await throwing.request({ url: '/fine' }), 503, 'The authentication layer is not running.');
  assert.equal(throwing.iis.nodeStartRequests(), 1, 'Node is not started again');
  // The module knows Node has ended (the next request after its end asks for a new worker process), once a minute at most.
  for (let i = 0; i < 3; i++) refusedUntilNewWorker(await throwing.request({ url: '/fine' }));
  assert.deepEqual(throwing.recycles(), [RECYCLE_REASON]);
});

const uncaught = new WorkerProcess('uncaught', {
  moduleEnv: { GATEHOUSE_IIS_BOOT: path.join(__dirname, 'fake-iis', 'fatal-boot.cjs') },
  coreEnv: {
    GATEHOUSE_AUTH_CONFIG_JSON: JSON.stringify(siteConfig()),
    CORP_SECRET: 's3cret',
    GATEHOUSE_ENCRYPTION_KEY: Buffer.alloc(32, 8).toString('base64'),
  },
});

test('an uncaught exception in the core: its environment ends, the module answers 503, boot.cjs logs why, the process lives on', async () => {
  assert.equal(uncaught.iis.registerModule().hr, 0);
  await uncaught.untilCoreAnswers();
  uncaught.worker.postMessage('throw');
  await uncaught.exited.promise;
  assert.match(String(uncaught.errors[0] && uncaught.errors[0].message), /an uncaught exception in the core/);
  answeredError(await uncaught.request({ url: '/orders' }), 503, 'The authentication layer is not running.');
  const line = await uncaught.untilLogged((l) => /uncaught exception/.test(l.msg));
  assert.equal(line.err.message, 'fake-iis: an uncaught exception in the core');
  assert.deepEqual(uncaught.recycles(), [RECYCLE_REASON]);
});

test('RegisterModule fails cleanly when IIS refuses the factory or an allocation fails (no Node, an HRESULT, no exception)', () => {
  const refused = new WorkerProcess('refused');
  assert.equal(refused.iis.registerModule('fail').hr, E_FAIL);
  const outOfMemory = new WorkerProcess('out-of-memory');
  assert.equal(outOfMemory.iis.registerModule('bad_alloc').hr, E_OUTOFMEMORY_WIN32);
  assert.equal(refused.iis.nodeStartRequests() + outOfMemory.iis.nodeStartRequests(), 0);
});

(async () => {
  for (const [name, fn] of tests) {
    // A crash under wine prints no stack: GATEHOUSE_FAKE_IIS_TRACE=1 shows which test was running.
    if (process.env.GATEHOUSE_FAKE_IIS_TRACE) console.log(`start ${name}`);
    let timer;
    try {
      await Promise.race([
        fn(),
        new Promise(
          (_, reject) => (timer = setTimeout(() => reject(new Error(`no end within ${HANG_MS / 1000} s`)), HANG_MS)),
        ),
      ]);
      results.passed++;
    } catch (error) {
      results.failed++;
      console.log(`FAIL fake IIS: ${name}: ${error && error.message}`);
    } finally {
      clearTimeout(timer);
    }
  }
  console.log(`fake IIS: ${results.passed} passed, ${results.failed} failed`);
  console.log(`${results.passed} passed, ${results.failed} failed`);
  // The worker processes' Node environments (and any hung request) would keep this one running.
  process.exit(results.failed === 0 ? 0 : 1);
})();
