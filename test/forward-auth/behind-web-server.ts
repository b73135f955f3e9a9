// A forward-authentication deployment on loopback, as the shipped examples describe it: a real
// web server (Debian's nginx or Caddy) from examples/<server>/ with only its ports filled in, in
// front of an echoing app; `gatehouse serve --forward-auth` (the command, a child process) beside
// it; a real OpenID provider whose client is registered at the web server's address.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { startDevIdentityProvider, type RunningIdentityProvider } from '../../src/dev/identity-provider.js';
import { root, serve, type ServingProcess } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { listen } from '../support/http.js';
import { CLIENT_ID, defaultDocument } from '../support/sign-in.js';

export const NGINX = process.env.GATEHOUSE_NGINX ?? '/usr/sbin/nginx';
export const CADDY = process.env.GATEHOUSE_CADDY ?? '/usr/bin/caddy';

export type WebServer = 'nginx' | 'caddy';

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  /** A request that asked to switch protocols, which the app agreed to (101). */
  readonly upgraded?: true;
}

export interface BehindWebServer {
  /** The web server's address: the only one a browser uses. */
  readonly url: string;
  readonly idp: RunningIdentityProvider;
  readonly gatehouse: ServingProcess;
  /** Every request the app received, in order, upgrades included. */
  readonly seen: SeenRequest[];
  /** Every byte the app received on a connection after agreeing to switch protocols (it echoes them). */
  readonly tunnelled: Buffer[];
  close(): Promise<void>;
}

/** The example's ports, as it ships them, and what the tests put in their place. */
const EXAMPLE_PORTS = { webServer: 8080, gatehouse: 8081, app: 3000 };

/**
 * The example with its ports replaced: each text as many times as the example has it (once unless
 * said), or the example drifted from what the tests know of it.
 */
export function filledIn(
  example: string,
  replacements: ReadonlyArray<readonly [from: string, to: string, times?: number]>,
): string {
  let text = readFileSync(path.join(root, 'examples', example), 'utf8');
  for (const [from, to, times = 1] of replacements) {
    const count = text.split(from).length - 1;
    if (count !== times)
      throw new Error(
        `examples/${example}: expected ${JSON.stringify(from)} ${times} time(s), found it ${count} times`,
      );
    text = text.split(from).join(to);
  }
  return text;
}

async function waitForPort(port: number, process: ChildProcess, output: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (process.exitCode !== null) throw new Error(`exited ${process.exitCode}: ${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.end(() => resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nothing listening on ${port}: ${output()}`);
}

/** The shipped nginx configurations: asking on every request, or keeping gatehouse's allowed answers. */
export type NginxExample = 'gatehouse.conf' | 'gatehouse-cached.conf';

/** Where the cached example keeps its answers, as it ships. */
const EXAMPLE_CACHE_PATH = '/var/cache/nginx/gatehouse-verify';

/**
 * As root, nginx's workers would run as nobody, who cannot enter the test's private directory
 * where the cached example keeps its answers: they run as the test's own user.
 */
const ASSIGNED_USER = process.getuid?.() === 0 ? 'user root;\n' : '';

function startNginx(
  dir: string,
  ports: typeof EXAMPLE_PORTS,
  example: NginxExample,
): { child: ChildProcess; output: () => string } {
  const site = filledIn(`nginx/${example}`, [
    [`listen ${EXAMPLE_PORTS.webServer};`, `listen 127.0.0.1:${ports.webServer};`],
    [`127.0.0.1:${EXAMPLE_PORTS.gatehouse};`, `127.0.0.1:${ports.gatehouse};`],
    [`127.0.0.1:${EXAMPLE_PORTS.app};`, `127.0.0.1:${ports.app};`],
    ...(example === 'gatehouse-cached.conf' ? [[EXAMPLE_CACHE_PATH, path.join(dir, 'verify-cache')] as const] : []),
  ]);
  writeFileSync(path.join(dir, 'gatehouse.conf'), site);
  // The http {} around the example, as /etc/nginx/nginx.conf would put it, with the test's own paths.
  writeFileSync(
    path.join(dir, 'nginx.conf'),
    `daemon off;
${ASSIGNED_USER}worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  include ${dir}/gatehouse.conf;
}
`,
  );
  const child = spawn(NGINX, ['-e', `${dir}/error.log`, '-p', dir, '-c', path.join(dir, 'nginx.conf')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return {
    child,
    output: () =>
      `${output}${existsSync(`${dir}/error.log`) ? readFileSync(`${dir}/error.log`, 'utf8').slice(-2000) : ''}`,
  };
}

function startCaddy(
  dir: string,
  ports: typeof EXAMPLE_PORTS & { admin: number },
): { child: ChildProcess; output: () => string } {
  const site = filledIn('caddy/Caddyfile', [
    ['admin localhost:2019', `admin localhost:${ports.admin}`],
    [`http://:${EXAMPLE_PORTS.webServer} {`, `http://127.0.0.1:${ports.webServer} {`],
    [`reverse_proxy 127.0.0.1:${EXAMPLE_PORTS.gatehouse}`, `reverse_proxy 127.0.0.1:${ports.gatehouse}`, 2],
    [`reverse_proxy 127.0.0.1:${EXAMPLE_PORTS.app}`, `reverse_proxy 127.0.0.1:${ports.app}`],
  ]);
  writeFileSync(path.join(dir, 'Caddyfile'), site);
  // Caddy keeps its state (certificates, the autosaved configuration) under $HOME and $XDG_*: the test's directory.
  const env = { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir };
  const child = spawn(CADDY, ['run', '--config', path.join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return { child, output: () => output.slice(-4000) };
}

/** What `which` lacks to run, or undefined when it is installed. */
export function webServerMissing(which: WebServer): string | undefined {
  const binary = which === 'nginx' ? NGINX : CADDY;
  return existsSync(binary)
    ? undefined
    : `${binary} is missing: apt-get install ${which === 'nginx' ? 'nginx-light' : 'caddy'} (bash .ci/run does)`;
}

export interface BehindOptions {
  /** gatehouse's configuration document; default: one provider "dev", /public/* excluded. */
  readonly document?: (issuer: string) => Record<string, unknown>;
  /** Which of the nginx examples (default gatehouse.conf). */
  readonly nginxExample?: NginxExample;
  /** More of gatehouse's environment (GATEHOUSE_ACCESS_LOG, its log level). */
  readonly env?: Readonly<Record<string, string>>;
}

export async function startBehind(which: WebServer, options: BehindOptions = {}): Promise<BehindWebServer> {
  const missing = webServerMissing(which);
  if (missing !== undefined) throw new Error(missing);
  const dir = mkdtempSync(path.join(os.tmpdir(), `gatehouse-${which}-`));
  const seen: SeenRequest[] = [];
  const tunnelled: Buffer[] = [];
  const appServer = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ url: req.url, method: req.method, headers: req.headers })),
    );
  });
  // An app that agrees to every protocol switch (h2c as readily as a WebSocket), then echoes what
  // it receives: whatever reaches it past the switch is beside every decision.
  const switched = new Set<net.Socket>();
  appServer.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    switched.add(socket);
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, upgraded: true });
    const key = req.headers['sec-websocket-key'];
    const accept =
      key === undefined
        ? ''
        : `Sec-WebSocket-Accept: ${createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64')}\r\n`;
    socket.on('error', () => socket.destroy());
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${req.headers.upgrade}\r\n${accept}\r\n`,
    );
    const received = (data: Buffer): void => {
      tunnelled.push(data);
      socket.write(data);
    };
    if (head.length > 0) received(head);
    socket.on('data', received);
  });
  const app = await listen(appServer);
  const ports = {
    webServer: await freePort(),
    gatehouse: await freePort(),
    app: Number(new URL(app.url).port),
    admin: await freePort(),
  };
  const front = `http://127.0.0.1:${ports.webServer}`;
  const secret = randomBytes(16).toString('hex');
  const closers: Array<() => Promise<unknown>> = [
    () => {
      // Switched connections are no longer node's to close.
      for (const socket of switched) socket.destroy();
      return app.close();
    },
  ];
  const close = async () => {
    for (const step of closers.reverse()) await step().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const idp = await startDevIdentityProvider({
      clients: [
        {
          clientId: CLIENT_ID,
          clientSecret: secret,
          redirectUris: [`${front}/.auth/login/dev/callback`],
          postLogoutRedirectUris: [`${front}/.auth/logout/complete`],
        },
      ],
    });
    closers.push(() => idp.close());
    const document = options.document?.(idp.issuer) ?? defaultDocument(idp.issuer);
    const withStore = {
      ...document,
      login: {
        ...(document.login as object | undefined),
        tokenStore: { fileSystem: { directory: path.join(dir, 'tokens') } },
      },
    };
    const gatehouse = await serve(
      {
        GATEHOUSE_AUTH_CONFIG_JSON: JSON.stringify(withStore),
        TEST_CLIENT_SECRET: secret,
        GATEHOUSE_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
        GATEHOUSE_LOG_LEVEL: process.env.GATEHOUSE_TEST_LOG_LEVEL ?? 'warn',
        ...options.env,
      },
      ['serve', '--forward-auth', '--host', '127.0.0.1', '--port', String(ports.gatehouse)],
    );
    closers.push(() => gatehouse.stop());
    const webServer =
      which === 'nginx' ? startNginx(dir, ports, options.nginxExample ?? 'gatehouse.conf') : startCaddy(dir, ports);
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          if (webServer.child.exitCode !== null) return resolve();
          webServer.child.once('exit', () => resolve());
          webServer.child.kill('SIGTERM');
        }),
    );
    await waitForPort(ports.webServer, webServer.child, webServer.output);
    return { url: front, idp, gatehouse, seen, tunnelled, close };
  } catch (error) {
    await close();
    throw error;
  }
}
