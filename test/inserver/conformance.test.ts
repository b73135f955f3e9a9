// Host conformance: the same requests through the sidecar (over HTTP) and
// through the native test host that plays the web-server module (native
// threads → the module's engine slot → the addon's C ABI engine → the same
// AuthLayer in JavaScript → back) must give the same statuses, the same
// Locations and byte-identical identity headers, spoofed aliases included;
// also with 64 native threads at once.

import { expect } from 'chai';

import { inServerPolicy, type NativeRequest } from '../../src/inserver/policy.js';
import { inServerBodyPrefix } from '../../src/inserver/host.js';
import { createInterceptor, type NativeInterceptor } from '../../src/native/interceptor.js';
import { loadModuleHost, type HostedDecision } from '../../src/native/module-host.js';
import { Browser } from '../support/browser.js';
import { capturingLogger } from '../support/logs.js';
import { breakTokenStore, signIn, startDeployment, type Deployment } from '../support/sign-in.js';

interface Vector {
  readonly name: string;
  readonly method?: 'GET' | 'POST';
  readonly body?: string;
  readonly path: string;
  readonly query?: string;
  readonly signedIn: boolean;
  readonly accept?: string;
  readonly extra?: Array<[string, string]>;
}

const SPOOFED: Array<[string, string]> = [
  ['X-PLATFORM-CLIENT-PRINCIPAL-ID', 'admin'],
  ['X_PLATFORM_CLIENT_PRINCIPAL_NAME', 'admin'],
  ['x.platform.client.principal', 'eyJmb3JnZWQiOnRydWV9'],
  ['X-Platform-Token-Dev-Access-Token', 'forged'],
];

const VECTORS: Vector[] = [
  { name: 'anonymous browser GET: 302 to sign-in', path: '/orders', query: 'page=2', signedIn: false },
  { name: 'anonymous API call: 401', path: '/api/orders', signedIn: false, accept: 'application/json' },
  { name: 'anonymous with spoofed aliases: still challenged', path: '/orders', signedIn: false, extra: SPOOFED },
  { name: 'signed in: forwarded with identity', path: '/orders', signedIn: true },
  {
    name: 'signed in with spoofed aliases: aliases gone, identity set',
    path: '/orders',
    signedIn: true,
    extra: SPOOFED,
  },
  {
    name: 'excluded path, anonymous with aliases: forwarded, aliases gone',
    path: '/public/app.js',
    signedIn: false,
    extra: SPOOFED,
  },
  { name: 'excluded path, signed in: identified', path: '/public/app.js', signedIn: true },
  {
    name: 'a segment ending in dots or a blank below an excluded path (IIS trims them): judged alike, from the raw URL',
    path: '/public/..%20/orders',
    signedIn: false,
    accept: 'application/json',
  },
  { name: '/.auth/me anonymous: 401', path: '/.auth/me', signedIn: false, accept: 'application/json' },
  { name: 'unknown provider: 404', path: '/.auth/login/nope', signedIn: false },
  {
    name: 'provider named in another case: 302 to its own path, query kept',
    path: '/.auth/login/DEV',
    query: 'post_login_redirect_uri=%2Forders',
    signedIn: false,
  },
  {
    name: 'token exchange with a forged id_token (the body reaches the core): 401',
    method: 'POST',
    path: '/.auth/login/dev',
    body: '{"id_token":"eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."}',
    signedIn: false,
    accept: 'application/json',
    extra: [['Content-Type', 'application/json']],
  },
  {
    name: 'token exchange with a malformed body: 400',
    method: 'POST',
    path: '/.auth/login/dev',
    body: '{"id_token":',
    signedIn: false,
    accept: 'application/json',
    extra: [['Content-Type', 'application/json']],
  },
  {
    name: 'back-channel logout with a forged logout token (the form reaches the core): 400',
    method: 'POST',
    path: '/.auth/logout/backchannel/dev',
    body: 'logout_token=eyJhbGciOiJub25lIn0.eyJzaWQiOiJ4In0.',
    signedIn: false,
    extra: [['Content-Type', 'application/x-www-form-urlencoded']],
  },
];

type Outcome =
  | { kind: 'forward'; identity: Array<[string, string]> }
  | { kind: 'respond'; status: number; location: string | undefined };

const identityOnly = (pairs: Array<[string, string]>) =>
  pairs
    .map(([n, v]) => [n.toLowerCase(), v] as [string, string])
    .filter(([n]) => n.startsWith('x-platform-'))
    .sort(([a], [b]) => a.localeCompare(b));

describe('host conformance: sidecar and native in-server host', function () {
  this.timeout(60_000);
  let deployment: Deployment;
  let interceptor: NativeInterceptor;
  const host = loadModuleHost();
  let cookie: string;

  const logs = capturingLogger('error');
  before(async () => {
    // Every request reads the store (no session cache), so a broken store shows at once (the last test).
    deployment = await startDeployment({ logger: logs.logger, sessionCacheTtlMs: 0 });
    const browser = new Browser();
    await signIn(browser, deployment);
    cookie = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
    interceptor = createInterceptor(inServerPolicy(deployment.gateway.layer));
    interceptor.attachHost(host.link, inServerBodyPrefix(deployment.gateway.layer.config));
  });
  after(async () => {
    interceptor.close();
    await deployment.close();
  });

  function headersOf(vector: Vector): Array<[string, string]> {
    return [
      ['Host', new URL(deployment.url).host],
      ['Accept', vector.accept ?? 'text/html,application/xhtml+xml'],
      ...(vector.signedIn ? [['Cookie', cookie] as [string, string]] : []),
      ...(vector.extra ?? []),
    ];
  }

  function nativeRequest(vector: Vector): NativeRequest {
    return {
      method: vector.method ?? 'GET',
      scheme: 'http',
      host: new URL(deployment.url).host,
      path: vector.path,
      query: vector.query ?? '',
      remoteAddress: '127.0.0.1',
      headers: headersOf(vector),
      ...(vector.body !== undefined ? { body: Buffer.from(vector.body) } : {}),
    };
  }

  async function throughSidecar(vector: Vector): Promise<Outcome> {
    const before = deployment.upstream.requests.length;
    const headers = Object.fromEntries(
      headersOf(vector)
        .filter(([n]) => n !== 'Host')
        .map(([n, v]) => [n, v]),
    );
    const answer = await new Browser().request(
      `${deployment.url}${vector.path}${vector.query ? `?${vector.query}` : ''}`,
      {
        headers,
        ...(vector.method ? { method: vector.method } : {}),
        ...(vector.body !== undefined ? { body: vector.body } : {}),
      },
    );
    if (deployment.upstream.requests.length > before) {
      const received = deployment.upstream.requests.at(-1)!.headers;
      return { kind: 'forward', identity: identityOnly(Object.entries(received).map(([n, v]) => [n, String(v)])) };
    }
    return { kind: 'respond', status: answer.status, location: answer.headers.location };
  }

  function nativeOutcome(vector: Vector, result: HostedDecision): Outcome {
    expect(result.completions, vector.name).to.equal(1);
    expect(result.bodyPassed, `${vector.name}: body handed over`).to.equal(vector.body !== undefined);
    if (result.kind === 'continue') {
      // Every inbound alias is removed before identity is set.
      const removed = new Set(result.remove!.map((n) => n.toLowerCase()));
      for (const [name] of vector.extra ?? [])
        expect(removed.has(name.toLowerCase()), `${vector.name}: ${name} removed`).to.equal(true);
      return { kind: 'forward', identity: identityOnly(result.set!) };
    }
    return {
      kind: 'respond',
      status: result.status!,
      location: result.headers!.find(([n]) => n.toLowerCase() === 'location')?.[1],
    };
  }

  for (const vector of VECTORS) {
    it(vector.name, async () => {
      const [native] = await host.replay([nativeRequest(vector)], 1);
      expect(nativeOutcome(vector, native!)).to.deep.equal(await throughSidecar(vector));
    });
  }

  it('every vector at once from 64 native threads: no lost or duplicated completion, same outcomes', async () => {
    const expected: Outcome[] = [];
    for (const vector of VECTORS) expected.push(await throughSidecar(vector)); // one at a time: the echo log is shared
    const batch = Array.from({ length: 20 }, () => VECTORS).flat();
    const results = await host.replay(batch.map(nativeRequest), 64);
    expect(results).to.have.length(batch.length);
    results.forEach((result, i) =>
      expect(nativeOutcome(batch[i]!, result), batch[i]!.name).to.deep.equal(expected[i % VECTORS.length]),
    );
  });

  {
    // One hostile header matrix through both hosts: the app sees the same headers. (Plain tests,
    // not a nested suite: mocha would run a nested suite after the last test, which breaks the store.)
    const HOSTILE: Array<[string, string]> = [
      ...SPOOFED,
      ['X-MS-CLIENT-PRINCIPAL-ID', 'admin'],
      ['x_ms_token_aad_access_token', 'stolen'],
      ['X-Original-URL', '/admin'],
      ['X-Rewrite-URL', '/admin'],
      ['X-HTTP-Method-Override', 'DELETE'],
      ['True-Client-IP', '6.6.6.6'],
      ['X-Forwarded-For', '6.6.6.6'],
      ['X_Forwarded_Host', 'evil.example'],
      ['X-Forwarded-Host', 'evil.example'],
      ['X-Forwarded-Proto', 'https'],
      ['X-Forwarded-Port', '1'],
      ['X-Forwarded-Prefix', '/admin'],
      ['Forwarded', 'for=6.6.6.6;host=evil.example'],
      ['X-Real-IP', '6.6.6.6'],
      ['X-Custom', 'kept'],
    ];
    /** What the matrix concerns: its own names, the identity headers and the forwarding headers gatehouse sets. */
    const concerned = new Set([
      ...HOSTILE.map(([n]) => n.toLowerCase()),
      'x-platform-client-principal',
      'x-platform-client-principal-id',
      'x-platform-client-principal-name',
      'x-platform-client-principal-idp',
    ]);
    const relevant = (pairs: Array<[string, string]>) =>
      pairs
        .map(([n, v]) => [n.toLowerCase(), v] as [string, string])
        .filter(([n]) => concerned.has(n) || n.startsWith('x-platform-token-'))
        .sort(([a, av], [b, bv]) => a.localeCompare(b) || av.localeCompare(bv));

    /** The inbound headers with the module's edits applied, as IIS would hand them to the app. */
    function applied(inbound: Array<[string, string]>, result: HostedDecision): Array<[string, string]> {
      const removed = new Set(result.remove!.map((n) => n.toLowerCase()));
      const set = result.set!;
      const setNames = new Set(set.map(([n]) => n.toLowerCase()));
      return [...inbound.filter(([n]) => !removed.has(n.toLowerCase()) && !setNames.has(n.toLowerCase())), ...set];
    }

    for (const vector of [
      { name: 'signed in, protected path', path: '/orders', signedIn: true, extra: HOSTILE },
      { name: 'anonymous, excluded path', path: '/public/app.js', signedIn: false, extra: HOSTILE },
    ] satisfies Vector[]) {
      it(`one hostile header matrix, ${vector.name}: the app sees the same headers from both hosts`, async () => {
        const before = deployment.upstream.requests.length;
        await throughSidecar(vector);
        expect(deployment.upstream.requests.length, 'forwarded by the sidecar').to.equal(before + 1);
        const received = deployment.upstream.requests.at(-1)!.headers;
        const sidecar = relevant(
          Object.entries(received).flatMap(([n, v]) =>
            Array.isArray(v) ? v.map((x) => [n, x] as [string, string]) : [[n, String(v)] as [string, string]],
          ),
        );
        const [native] = await host.replay([nativeRequest(vector)], 1);
        expect(native!.kind).to.equal('continue');
        const inServer = relevant(applied(headersOf(vector), native!));
        expect(inServer).to.deep.equal(sidecar);
        // And what both agree on is what the policy says: nothing hostile left but the benign header.
        const names = sidecar.map(([n]) => n);
        expect(names.filter((n) => !n.startsWith('x-platform-') && !n.startsWith('x-forwarded-'))).to.deep.equal([
          'x-custom',
        ]);
        expect(Object.fromEntries(sidecar.filter(([n]) => n.startsWith('x-forwarded-')))).to.deep.equal({
          'x-forwarded-for': '127.0.0.1',
          'x-forwarded-host': new URL(deployment.url).host,
          'x-forwarded-proto': 'http',
        });
        expect(names.includes('x-platform-client-principal-id')).to.equal(vector.signedIn);
      });
    }
  }

  // Last: it breaks the deployment's token store.
  it('a failing auth layer (a token store that cannot be read): 500 from both hosts, each failure logged with its path', async () => {
    await breakTokenStore(deployment);
    const vector: Vector = { name: 'signed in, store broken', path: '/orders/7', signedIn: true };
    expect(await throughSidecar(vector)).to.deep.equal({ kind: 'respond', status: 500, location: undefined });
    const [native] = await host.replay([nativeRequest(vector)], 1);
    expect(nativeOutcome(vector, native!)).to.deep.equal({ kind: 'respond', status: 500, location: undefined });
    const failures = logs.lines().filter((l) => l.msg === 'auth layer failed');
    expect(failures.map((l) => l.path)).to.deep.equal(['/orders/7', '/orders/7']);
    expect(failures.every((l) => typeof l.err === 'string' && (l.err as string).includes('ENOTDIR'))).to.equal(true);
  });
});
