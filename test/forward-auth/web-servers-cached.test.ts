// The shipped nginx configuration that keeps gatehouse's allowed answers
// (examples/nginx/gatehouse-cached.conf), run by Debian's nginx with `gatehouse serve
// --forward-auth` and gatehouse.verifyCache on: the cache serves the same caller the same answer
// for at most the lifetime, and never anything gatehouse's decision would not give the request at
// hand (another user's identity, another host's, path's, method's or upgrade's answer, an answer
// past a logout or a session's end, an answer for a request carrying a forged identity header).
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { expect } from 'chai';

import { Browser, type Response } from '../support/browser.js';
import { root } from '../support/cli-process.js';
import { raw } from '../support/raw-http.js';
import { defaultDocument } from '../support/sign-in.js';
import { startBehind, type BehindWebServer } from './behind-web-server.js';

/** How long gatehouse lets nginx keep an answer in these tests. */
const LIFETIME_S = 2;
/**
 * The longest nginx keeps one, in ms: its cache clock counts whole seconds, so an answer kept N
 * seconds lives until that clock has passed N (N to N + 1 seconds), and then the time nginx and
 * the machine take.
 */
const KEPT_AT_MOST_MS = (LIFETIME_S + 1) * 1000 + 700;

function documentWith(gatehouse: Record<string, unknown>, login?: Record<string, unknown>) {
  return (issuer: string) => ({
    ...defaultDocument(issuer),
    ...(login ? { login } : {}),
    gatehouse: { verifyCache: { maxAgeSeconds: LIFETIME_S }, ...gatehouse },
  });
}

/** The questions a request refused for a forged header makes: its own, and its refusal's answer. */
const MARKER_QUESTIONS = 2;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Whom the app was told the request came from. */
function userOf(answer: Response): string | undefined {
  expect(answer.status, answer.body).to.equal(200);
  return (JSON.parse(answer.body) as { headers: Record<string, string> }).headers['x-platform-client-principal-id'];
}

function statusOf(response: string): number {
  return Number(/^HTTP\/1\.[01] (\d{3}) /.exec(response)?.[1]);
}

/** Signs a new client in as `username` through the web server; its session cookie as a header. */
async function signedIn(deployment: BehindWebServer, username: string): Promise<string> {
  const browser = new Browser();
  const hops = await browser.follow(`${deployment.url}/start`);
  const loginPage = hops.at(-1)!;
  expect(loginPage.url.startsWith(deployment.idp.issuer), loginPage.url).to.equal(true);
  const after = await browser.submitForm(loginPage, /\/login$/, { username, password: username });
  expect(userOf(after.at(-1)!)).to.equal(username);
  return `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
}

describe('forward authentication behind nginx, answers kept (examples/nginx/gatehouse-cached.conf)', function () {
  this.timeout(90_000);
  let deployment: BehindWebServer;
  let demo: string;
  let reader: string;
  let port: string;

  before(async () => {
    deployment = await startBehind('nginx', {
      nginxExample: 'gatehouse-cached.conf',
      document: documentWith({}),
      env: { GATEHOUSE_ACCESS_LOG: 'on', GATEHOUSE_LOG_LEVEL: 'info' },
    });
    port = new URL(deployment.url).port;
    demo = await signedIn(deployment, 'demo');
    reader = await signedIn(deployment, 'reader');
  });
  after(() => deployment?.close());

  const get = (path: string, headers: Record<string, string> = {}) =>
    new Browser().request(`${deployment.url}${path}`, { headers });

  /** The status of each question gatehouse has answered so far (its access log: a line per verify request). */
  const answered = () =>
    [...deployment.gatehouse.output().matchAll(/"path":"\/\.auth\/verify","status":(\d+)/g)].map((m) => m[1]!);

  /**
   * Every question gatehouse has answered until now, once its log has caught up: a request that is
   * never kept (a forged header) is sent, and its two log lines come after theirs (the question,
   * refused with 403, and the one nginx's error_page asks for the refusal's own answer).
   */
  async function settled(): Promise<string[]> {
    const refused = (lines: string[]) => lines.filter((status) => status === '403').length;
    const before = refused(answered());
    expect((await get('/marker', { 'X-MS-CLIENT-PRINCIPAL-ID': 'marker' })).status).to.equal(403);
    for (let i = 0; i < 100 && refused(answered()) < before + MARKER_QUESTIONS; i++) await sleep(50);
    return answered();
  }

  /** How many questions gatehouse answered for `requests`. */
  async function questionsFor(requests: () => Promise<void>): Promise<number> {
    const before = await settled();
    await requests();
    return (await settled()).length - before.length - MARKER_QUESTIONS;
  }

  it('an allowed answer is kept: the same question within the lifetime is not asked again', async () => {
    const questions = await questionsFor(async () => {
      expect(userOf(await get('/kept', { cookie: demo }))).to.equal('demo');
      expect(userOf(await get('/kept', { cookie: demo }))).to.equal('demo');
      expect(userOf(await get('/kept', { cookie: demo }))).to.equal('demo');
    });
    // One question for the three, or two should the lifetime run out between them on a loaded
    // machine: never one per request.
    expect(questions).to.be.within(1, 2);
  });

  it('two users alternating on the same URL, by cookie and by bearer token, each get their own identity', async () => {
    const tokenOf = async (cookie: string) => {
      const me = await get('/.auth/me', { cookie });
      return (JSON.parse(me.body) as Array<{ id_token: string }>)[0]!.id_token;
    };
    const bearer = { demo: `Bearer ${await tokenOf(demo)}`, reader: `Bearer ${await tokenOf(reader)}` };
    for (let round = 0; round < 4; round++) {
      expect(userOf(await get('/shared?page=1', { cookie: demo })), `round ${round}`).to.equal('demo');
      expect(userOf(await get('/shared?page=1', { cookie: reader })), `round ${round}`).to.equal('reader');
      const api = { accept: 'application/json' };
      expect(userOf(await get('/shared?page=1', { ...api, authorization: bearer.demo }))).to.equal('demo');
      expect(userOf(await get('/shared?page=1', { ...api, authorization: bearer.reader }))).to.equal('reader');
      // Both credentials at once: the bearer token decides, as without a cache.
      expect(userOf(await get('/shared?page=1', { ...api, cookie: demo, authorization: bearer.reader }))).to.equal(
        'reader',
      );
    }
  });

  it('a challenge is never kept: each request without a session is asked about', async () => {
    const questions = await questionsFor(async () => {
      for (let i = 0; i < 3; i++)
        expect((await get('/reports', { cookie: 'PlatformAuthSession=not-a-session' })).status).to.equal(302);
    });
    // Each one: the question, then the challenge asked for.
    expect(questions).to.equal(6);
  });

  it('a forged identity or override header is still refused, right after an allowed answer for the same request', async () => {
    expect(userOf(await get('/reports', { cookie: demo }))).to.equal('demo');
    const seen = deployment.seen.length;
    for (const [name, value] of [
      ['X-PLATFORM-CLIENT-PRINCIPAL-ID', 'admin'],
      ['X-Platform-Client-Principal', 'YWRtaW4='],
      ['X-MS-CLIENT-PRINCIPAL-ID', 'admin'],
      ['X-MS-CLIENT-PRINCIPAL-NAME', 'admin'],
      ['X-Original-URL', '/admin'],
      ['X-HTTP-Method-Override', 'DELETE'],
      ['X-Gatehouse-Webhook-Verified', 'true'],
    ]) {
      const answer = await get('/reports', { cookie: demo, [name!]: value! });
      expect(answer.status, name).to.equal(403);
    }
    expect(deployment.seen.length).to.equal(seen);
  });

  it("a hostile X-Original-URI cannot borrow another path's answer: a path gatehouse refuses stays refused", async () => {
    // Allowed, and kept: nginx sends gatehouse the real path, whatever the client claims.
    const claim = { 'X-Original-URI': '/reports', 'X-Forwarded-Uri': '/reports' };
    expect(userOf(await get('/reports', { cookie: demo, ...claim }))).to.equal('demo');
    const seen = deployment.seen.length;
    // A raw non-ASCII byte in the path: nginx takes it, gatehouse refuses it whoever asks (400, which
    // nginx's auth_request turns into its 500).
    const answer = await raw(
      deployment.url,
      `GET /caf\u00e9 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${demo}\r\nX-Original-URI: /reports\r\n` +
        'X-Forwarded-Uri: /reports\r\nConnection: close\r\n\r\n',
    );
    expect(statusOf(answer), answer).to.equal(500);
    expect(deployment.seen.length).to.equal(seen);
  });

  it("a hostile host cannot borrow another host's answer: the session is bound to the host it was made on", async () => {
    // Its own session: one shown on another host is ended (taken for a stolen cookie).
    const demo = await signedIn(deployment, 'demo');
    expect(userOf(await get('/reports', { cookie: demo }))).to.equal('demo');
    const seen = deployment.seen.length;
    const other = await raw(
      deployment.url,
      `GET /reports HTTP/1.1\r\nHost: localhost:${port}\r\nCookie: ${demo}\r\nX-Forwarded-Host: 127.0.0.1:${port}\r\n` +
        'Connection: close\r\n\r\n',
    );
    expect(statusOf(other), other).to.equal(302);
    const list = await raw(
      deployment.url,
      `GET /reports HTTP/1.1\r\nHost: 127.0.0.1:${port},evil.example\r\nCookie: ${demo}\r\nConnection: close\r\n\r\n`,
    );
    expect(statusOf(list), list).to.equal(400);
    expect(deployment.seen.length).to.equal(seen);
  });

  it("an upgrade or a method cannot borrow a plain GET's answer: h2c and a WebSocket POST stay refused", async () => {
    const handshake =
      'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';
    const request = (method: string, extra: string) =>
      raw(
        deployment.url,
        `${method} /live HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${demo}\r\n${extra}Content-Length: 0\r\n\r\n`,
        (received) => received.includes('\r\n\r\n'),
      );
    expect(statusOf(await request('GET', 'Connection: close\r\n'))).to.equal(200);
    expect(statusOf(await request('GET', handshake))).to.equal(101);
    const seen = deployment.seen.length;
    expect(
      statusOf(
        await request(
          'GET',
          'Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n',
        ),
      ),
    ).to.equal(400);
    expect(statusOf(await request('POST', handshake))).to.equal(400);
    expect(deployment.seen.length).to.equal(seen);
  });

  it('a logout counts within the lifetime: the copied cookie is refused once it has passed', async () => {
    const cookie = await signedIn(deployment, 'demo');
    expect(userOf(await get('/reports', { cookie }))).to.equal('demo');
    const logout = await get('/.auth/logout', { cookie });
    expect(logout.status).to.equal(302);
    const loggedOut = Date.now();
    await sleep(loggedOut + KEPT_AT_MOST_MS - Date.now());
    const seen = deployment.seen.length;
    const replayed = await get('/reports', { cookie });
    expect(replayed.status).to.equal(302);
    expect(replayed.headers.location).to.equal('/.auth/login/dev?post_login_redirect_uri=%2Freports');
    expect(deployment.seen.length).to.equal(seen);
  });
});

describe('examples/nginx/gatehouse-cached.conf', () => {
  it('is gatehouse.conf with the cache added: every directive of it, in order', () => {
    const lines = (name: string) =>
      readFileSync(path.join(root, 'examples', 'nginx', name), 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
    const cached = lines('gatehouse-cached.conf');
    let at = 0;
    for (const line of lines('gatehouse.conf')) {
      const found = cached.indexOf(line, at);
      expect(found, `gatehouse-cached.conf lacks, or has out of order: ${line}`).to.be.greaterThan(-1);
      at = found + 1;
    }
  });
});

describe('forward authentication behind nginx, answers kept: a session that expires', function () {
  this.timeout(90_000);
  /** The session's lifetime (login.cookieExpiration, FixedTime). */
  const SESSION_S = 8;
  let deployment: BehindWebServer;

  before(async () => {
    deployment = await startBehind('nginx', {
      nginxExample: 'gatehouse-cached.conf',
      document: documentWith(
        {},
        {
          tokenStore: { enabled: true },
          cookieExpiration: { convention: 'FixedTime', timeToExpiration: `00:00:0${SESSION_S}` },
        },
      ),
    });
  });
  after(() => deployment?.close());

  it('is challenged once the lifetime has passed after its end', async () => {
    const cookie = await signedIn(deployment, 'demo');
    // The session was made before this moment: it ends by SESSION_S from here.
    const signedInBy = Date.now();
    const answer = await new Browser().request(`${deployment.url}/reports`, { headers: { cookie } });
    expect(userOf(answer)).to.equal('demo');
    await sleep(signedInBy + SESSION_S * 1000 + KEPT_AT_MOST_MS - Date.now());
    const seen = deployment.seen.length;
    const after = await new Browser().request(`${deployment.url}/reports`, {
      headers: { cookie, accept: 'application/json' },
    });
    expect(after.status).to.equal(401);
    expect(deployment.seen.length).to.equal(seen);
  });
});
