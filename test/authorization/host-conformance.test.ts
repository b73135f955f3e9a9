// One decision in every host: the same rules, users and requests through the
// sidecar (over HTTP), the verify endpoint a web server asks (over HTTP) and
// the native test host that plays the IIS module (native threads → the C ABI
// → the same AuthLayer) give the same answers: the same status and
// byte-identical refusal bodies, the same identity for what is let in.
import { expect } from 'chai';

import { inServerBodyPrefix } from '../../src/inserver/host.js';
import { inServerPolicy, type NativeRequest } from '../../src/inserver/policy.js';
import { createInterceptor, type NativeInterceptor } from '../../src/native/interceptor.js';
import { loadModuleHost } from '../../src/native/module-host.js';
import { Browser } from '../support/browser.js';
import { raw, rawBody } from '../support/raw-http.js';
import { startRulesDeployment, type RulesDeployment } from '../support/rules-deployment.js';

const USERS = {
  alice: {
    password: 'a',
    claims: { name: 'Alice', email: 'alice@corp.example', email_verified: true, roles: ['admin'], groups: ['writers'] },
  },
  bob: { password: 'b', claims: { name: 'Bob', email: 'bob@corp.example', email_verified: true, roles: ['reader'] } },
  mallory: { password: 'm', claims: { name: 'Mallory', email: 'mallory@corp.example', email_verified: false } },
};

const RULES = {
  paths: [
    { path: '/admin/*', allow: [{ roles: ['admin'] }] },
    { path: '/reports', methods: ['POST'], allow: [{ groups: ['writers'] }] },
  ],
  default: { allow: [{ emailDomains: ['corp.example'] }] },
};

const CALLERS = ['alice', 'bob', 'mallory', 'anonymous'] as const;
const REQUESTS: ReadonlyArray<{ method: 'GET' | 'POST'; path: string; query?: string }> = [
  { method: 'GET', path: '/' },
  { method: 'GET', path: '/admin/users', query: 'tab=2' },
  { method: 'GET', path: '/%61dmin/users' },
  { method: 'GET', path: '/ADMIN' },
  { method: 'GET', path: '/public/../admin/users' },
  { method: 'POST', path: '/reports' },
  { method: 'GET', path: '/reports' },
  { method: 'GET', path: '/public/app.js' },
];
const ACCEPTS = ['text/html', 'application/json'];

interface Answer {
  readonly status: number;
  /** What the app would be told (let in), or the refusal's body, byte for byte. */
  readonly identity?: string;
  readonly body?: string;
  readonly contentType?: string;
}

describe('authorization: one decision in every host (sidecar, /.auth/verify, the in-server module)', function () {
  this.timeout(120_000);
  let deployment: RulesDeployment;
  let interceptor: NativeInterceptor;
  const host = loadModuleHost();
  const cookies = new Map<string, string>();

  before(async () => {
    deployment = await startRulesDeployment({ users: USERS, authorization: RULES });
    for (const login of ['alice', 'bob', 'mallory']) {
      const browser = new Browser();
      await deployment.signIn(browser, login, '/.auth/login/dev');
      cookies.set(login, `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`);
    }
    interceptor = createInterceptor(inServerPolicy(deployment.gateway.layer));
    interceptor.attachHost(host.link, inServerBodyPrefix(deployment.gateway.layer.config));
  });
  after(async () => {
    interceptor?.close();
    await deployment?.close();
  });

  const hostName = () => new URL(deployment.url).host;
  const headersFor = (caller: string, accept: string): Record<string, string> => ({
    accept,
    ...(cookies.has(caller) ? { cookie: cookies.get(caller)! } : {}),
  });
  const idOf = (headers: Record<string, unknown>) =>
    `${String(headers['x-platform-client-principal-id'] ?? '')}|${String(headers['x-platform-client-principal-name'] ?? '')}`;
  const target = (request: (typeof REQUESTS)[number]) => `${request.path}${request.query ? `?${request.query}` : ''}`;

  /** Sent as written (a client library would resolve `/public/../admin` before sending it). */
  async function sidecar(caller: string, accept: string, request: (typeof REQUESTS)[number]): Promise<Answer> {
    const before = deployment.upstream.requests.length;
    const headers = Object.entries(headersFor(caller, accept)).map(([n, v]) => `${n}: ${v}\r\n`);
    const response = await raw(
      deployment.url,
      `${request.method} ${target(request)} HTTP/1.1\r\nHost: ${hostName()}\r\n${headers.join('')}Content-Length: 0\r\nConnection: close\r\n\r\n`,
    );
    if (deployment.upstream.requests.length > before)
      return { status: 200, identity: idOf(deployment.upstream.requests.at(-1)!.headers) };
    const head = response.slice(0, response.indexOf('\r\n\r\n'));
    return {
      status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)![1]),
      body: Buffer.from(rawBody(response), 'latin1').toString('utf8'),
      contentType: String(/^content-type: (.*)$/im.exec(head)?.[1]),
    };
  }

  async function verify(caller: string, accept: string, request: (typeof REQUESTS)[number]): Promise<Answer> {
    const answer = await new Browser().request(`${deployment.url}/.auth/verify`, {
      headers: {
        ...headersFor(caller, accept),
        'x-forwarded-host': hostName(),
        'x-forwarded-proto': 'http',
        'x-forwarded-uri': target(request),
        'x-forwarded-method': request.method,
      },
    });
    if (answer.status === 200) return { status: 200, identity: idOf(answer.headers) };
    return { status: answer.status, body: answer.body, contentType: String(answer.headers['content-type']) };
  }

  async function module(caller: string, accept: string, request: (typeof REQUESTS)[number]): Promise<Answer> {
    const native: NativeRequest = {
      method: request.method,
      scheme: 'http',
      host: hostName(),
      path: request.path,
      query: request.query ?? '',
      remoteAddress: '127.0.0.1',
      headers: [
        ['Host', hostName()],
        ...Object.entries(headersFor(caller, accept)).map(([n, v]) => [n, v] as [string, string]),
      ],
    };
    const [result] = await host.replay([native], 1);
    if (result!.kind === 'continue')
      return { status: 200, identity: idOf(Object.fromEntries(result!.set!.map(([n, v]) => [n.toLowerCase(), v]))) };
    const type = result!.headers!.find(([n]) => n.toLowerCase() === 'content-type')?.[1];
    return { status: result!.status!, body: result!.body!.toString('utf8'), contentType: String(type) };
  }

  for (const caller of CALLERS)
    for (const accept of ACCEPTS)
      it(`${caller}, ${accept}: every request answered alike by the three hosts`, async () => {
        for (const request of REQUESTS) {
          const name = `${caller} ${request.method} ${target(request)} (${accept})`;
          const fromSidecar = await sidecar(caller, accept, request);
          expect(await module(caller, accept, request), `${name}: module`).to.deep.equal(fromSidecar);
          // The verify endpoint answers a challenge its own way (its login redirect names the original URI); every
          // decision on a signed-in caller, allowed or refused, is the same answer.
          if (caller !== 'anonymous' || fromSidecar.status === 200)
            expect(await verify(caller, accept, request), `${name}: verify`).to.deep.equal(fromSidecar);
        }
      });

  it('the matrix says what the rules say (not merely the same everywhere)', async () => {
    const status = async (caller: string, method: 'GET' | 'POST', path: string) =>
      (await sidecar(caller, 'application/json', { method, path })).status;
    expect(await status('alice', 'GET', '/admin/users')).to.equal(200);
    expect(await status('bob', 'GET', '/admin/users')).to.equal(403);
    expect(await status('bob', 'GET', '/%61dmin/users')).to.equal(403);
    expect(await status('bob', 'GET', '/public/../admin/users')).to.equal(403);
    expect(await status('bob', 'POST', '/reports')).to.equal(403);
    expect(await status('alice', 'POST', '/reports')).to.equal(200);
    expect(await status('mallory', 'GET', '/')).to.equal(403);
    expect(await status('anonymous', 'GET', '/')).to.equal(401);
    expect(await status('mallory', 'GET', '/public/app.js')).to.equal(200);
  });
});
