// The peer of the sidecar benchmark: Apache httpd (Debian's apache2, event MPM) with
// mod_auth_openidc in front of the same app, signed in through its own OpenID Connect flow
// against a loopback oidc-provider (gatehouse's development provider), its session kept
// server-side in shared memory, claims and tokens passed to the app as request headers.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import type { RunningIdentityProvider } from '../../dist/dev/identity-provider.js';

export const APACHE = '/usr/sbin/apache2';
const MODULE_DIR = '/usr/lib/apache2/modules';
/** Every module the configuration loads (mod_unixd and mod_log_config are compiled into Debian's apache2). */
const MODULES: ReadonlyArray<readonly [string, string]> = [
  ['mpm_event_module', 'mod_mpm_event.so'],
  ['authn_core_module', 'mod_authn_core.so'],
  ['authz_core_module', 'mod_authz_core.so'],
  ['authz_user_module', 'mod_authz_user.so'], // `Require valid-user`
  ['proxy_module', 'mod_proxy.so'],
  ['proxy_http_module', 'mod_proxy_http.so'],
  ['headers_module', 'mod_headers.so'],
  ['auth_openidc_module', 'mod_auth_openidc.so'],
];
const SESSION_COOKIE = 'mod_auth_openidc_session';
const CLIENT_ID = 'apache-bench';
const USER = { username: 'demo', password: 'demo' };

/** Why the Apache target cannot run here, or undefined when it can. */
export function apacheMissing(): string | undefined {
  const missing = [APACHE, ...MODULES.map(([, file]) => path.join(MODULE_DIR, file))].filter(
    (file) => !existsSync(file),
  );
  return missing.length === 0
    ? undefined
    : `${missing.join(', ')} not found; apt-get install apache2 libapache2-mod-auth-openidc`;
}

export interface RunningApache {
  readonly child: ChildProcess;
  readonly port: number;
  /** The Cookie header of the signed-in session (mod_auth_openidc_session only). */
  readonly cookie: string;
  /** Stops the OpenID provider and removes Apache's directory, once Apache itself was stopped with the other processes. */
  close(): Promise<void>;
}

function apacheConfig(dir: string, port: number, appPort: number, issuer: string, clientSecret: string): string {
  const redirectUri = `http://127.0.0.1:${port}/redirect_uri`;
  // As root Apache must hand its children to an unprivileged user, who has to reach the runtime files.
  const user = process.getuid?.() === 0 ? 'User www-data\nGroup www-data\n' : '';
  return `ServerRoot "${dir}"
ServerName 127.0.0.1
Listen 127.0.0.1:${port}
PidFile "${dir}/apache2.pid"
DefaultRuntimeDir "${dir}"
ErrorLog "${dir}/error.log"
LogLevel warn
${user}${MODULES.map(([name, file]) => `LoadModule ${name} ${MODULE_DIR}/${file}`).join('\n')}

# One child process (nginx runs one worker) with a thread for each of the 50 connections, fixed:
# no child is started or stopped during a run, so the process tree measured stays the same.
StartServers 1
ServerLimit 1
ThreadLimit 64
ThreadsPerChild 64
MaxRequestWorkers 64
MinSpareThreads 1
MaxSpareThreads 64
MaxConnectionsPerChild 0
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 5

OIDCProviderMetadataURL ${issuer}/.well-known/openid-configuration
OIDCClientID ${CLIENT_ID}
OIDCClientSecret ${clientSecret}
OIDCRedirectURI ${redirectUri}
OIDCCryptoPassphrase ${randomBytes(24).toString('hex')}
OIDCScope "openid profile email"
OIDCPKCEMethod S256
OIDCSessionType server-cache
OIDCCacheType shm
OIDCSessionInactivityTimeout 3600
OIDCPassClaimsAs headers
OIDCPassIDTokenAs claims serialized

<Location />
  AuthType openid-connect
  Require valid-user
</Location>

ProxyRequests Off
ProxyPass /redirect_uri !
ProxyPass / http://127.0.0.1:${appPort}/ enablereuse=on keepalive=On
RequestHeader set X-Forwarded-Proto http
`;
}

interface Answer {
  readonly status: number;
  readonly location: string | undefined;
  readonly body: string;
  readonly url: URL;
}

/** A cookie-keeping client that follows redirects, enough for an authorization-code sign-in (refresh.ts signs in to gatehouse with it too). */
export class SignInClient {
  /** origin → name → value */
  readonly #jar = new Map<string, Map<string, string>>();

  cookie(origin: string, name: string): string | undefined {
    return this.#jar.get(origin)?.get(name);
  }

  /** Every cookie held for `origin`, as a Cookie header. */
  cookieHeader(origin: string): string {
    return [...(this.#jar.get(origin) ?? new Map<string, string>())]
      .map(([name, value]) => `${name}=${value}`)
      .join('; ');
  }

  request(url: URL, method = 'GET', form?: Record<string, string>): Promise<Answer> {
    const cookies = [...(this.#jar.get(url.origin) ?? new Map<string, string>())]
      .map(([name, value]) => `${name}=${value}`)
      .join('; ');
    const body = form === undefined ? undefined : new URLSearchParams(form).toString();
    return new Promise((resolve, reject) => {
      const req = http.request(
        url,
        {
          method,
          agent: false,
          headers: {
            accept: 'text/html',
            ...(cookies ? { cookie: cookies } : {}),
            ...(body === undefined
              ? {}
              : { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const jar = this.#jar.get(url.origin) ?? new Map<string, string>();
            this.#jar.set(url.origin, jar);
            for (const line of res.headers['set-cookie'] ?? []) {
              const [pair, ...attributes] = line.split(';').map((s) => s.trim());
              const eq = pair!.indexOf('=');
              const expired = attributes.some((a) => /^max-age=0$/i.test(a) || /^expires=thu, 01 jan 1970/i.test(a));
              if (expired || eq === pair!.length - 1) jar.delete(pair!.slice(0, eq));
              else jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
            }
            resolve({
              status: res.statusCode ?? 0,
              location: res.headers.location,
              body: Buffer.concat(chunks).toString('utf8'),
              url,
            });
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Requests `url`, then follows redirects with GET; the answers, in order. */
  async follow(url: URL, method = 'GET', form?: Record<string, string>): Promise<Answer[]> {
    const hops = [await this.request(url, method, form)];
    while ([301, 302, 303, 307].includes(hops.at(-1)!.status) && hops.length < 20) {
      const last = hops.at(-1)!;
      hops.push(await this.request(new URL(last.location!, last.url)));
    }
    return hops;
  }
}

/** Signs in through Apache's own flow: Apache → the provider's sign-in page → the form → Apache's redirect URI → the page. */
async function signIn(port: number, idp: RunningIdentityProvider): Promise<string> {
  const client = new SignInClient();
  const origin = `http://127.0.0.1:${port}`;
  const describe = (hops: Answer[]) => hops.map((h) => `${h.status} ${h.url.href}`).join(' → ');
  const toLogin = await client.follow(new URL('/page', origin));
  const loginPage = toLogin.at(-1)!;
  if (!loginPage.url.href.startsWith(idp.issuer) || loginPage.status !== 200)
    throw new Error(`Apache did not lead to the provider's sign-in page: ${describe(toLogin)}`);
  const action = /<form[^>]*action="([^"]*\/login)"/.exec(loginPage.body)?.[1];
  if (action === undefined) throw new Error(`no sign-in form at ${loginPage.url.href}`);
  const back = await client.follow(new URL(action.replace(/&amp;/g, '&'), loginPage.url), 'POST', USER);
  const session = client.cookie(origin, SESSION_COOKIE);
  const page = back.at(-1)!;
  if (session === undefined || page.status !== 200 || page.url.origin !== origin)
    throw new Error(`the sign-in through Apache did not end signed in on its page: ${describe(back)}`);
  return `${SESSION_COOKIE}=${session}`;
}

/**
 * Starts the provider (one client: Apache's redirect URI) and Apache in the foreground on `port`,
 * signs in once, and checks that the session cookie alone gets the app's own answer.
 */
export async function startApache(
  port: number,
  appPort: number,
  waitForPort: (port: number) => Promise<void>,
): Promise<RunningApache> {
  const clientSecret = randomBytes(16).toString('hex');
  // Loaded here, not at the top: oidc-provider is needed only when Apache runs.
  const { startDevIdentityProvider } = await import('../../dist/dev/identity-provider.js');
  const idp = await startDevIdentityProvider({
    clients: [
      {
        clientId: CLIENT_ID,
        clientSecret,
        redirectUris: [`http://127.0.0.1:${port}/redirect_uri`],
        postLogoutRedirectUris: [],
      },
    ],
  });
  let child: ChildProcess | undefined;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-apache-'));
  const close = async () => {
    await idp.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    chmodSync(dir, 0o755); // the children, run as www-data, reopen the mutex files in it
    const configFile = path.join(dir, 'apache2.conf');
    writeFileSync(configFile, apacheConfig(dir, port, appPort, idp.issuer, clientSecret));
    const started = spawn(APACHE, ['-f', configFile, '-DFOREGROUND'], { stdio: ['ignore', 'ignore', 'pipe'] });
    child = started;
    let stderr = '';
    started.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<never>((_, reject) =>
      started.once('exit', (code) => reject(new Error(`apache2 exited ${code}: ${stderr.trim()}`))),
    );
    exited.catch(() => {}); // only raced below; the exit at the end of the benchmark is expected
    await Promise.race([waitForPort(port), exited]);
    const cookie = await Promise.race([signIn(port, idp), exited]).catch((error: unknown) => {
      const log = existsSync(path.join(dir, 'error.log'))
        ? readFileSync(path.join(dir, 'error.log'), 'utf8').trim().split('\n').slice(-5).join('\n')
        : '';
      throw new Error(`${(error as Error).message}${log ? `\nApache's error log:\n${log}` : ''}`);
    });
    // Signed in: the session cookie alone gets the app's answer, not a redirect to the provider.
    const signedIn = await getWithCookie(port, cookie);
    if (signedIn.status !== 200 || !isAppAnswer(signedIn.body))
      throw new Error(
        `Apache answered the signed-in GET ${signedIn.status}, not the app's 200: ${signedIn.body.slice(0, 200)}`,
      );
    return { child: started, port, cookie, close };
  } catch (error) {
    if (child) {
      const stopped = new Promise((resolve) => child!.once('exit', resolve));
      if (child.exitCode === null && child.signalCode === null && child.kill()) await stopped;
    }
    await close();
    throw error;
  }
}

/** The benchmark app's answer (sidecar-server.ts): `{"ok":true,…}`. */
function isAppAnswer(body: string): boolean {
  try {
    return (JSON.parse(body) as { ok?: unknown }).ok === true;
  } catch {
    return false;
  }
}

function getWithCookie(port: number, cookie: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(
        { host: '127.0.0.1', port, path: '/page', agent: false, headers: { cookie, accept: 'text/html' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        },
      )
      .on('error', reject);
  });
}
