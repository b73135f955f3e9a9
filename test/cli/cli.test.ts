// The `gatehouse` command, run as a user runs it (a child process).
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { deliver, listen, SECRET } from '../support/http.js';
import { Browser } from '../support/browser.js';
import { CLI, outputShowing, root, serve } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { raw } from '../support/raw-http.js';

function run(args: string[], options: { input?: string | Buffer; env?: NodeJS.ProcessEnv } = {}) {
  const env = {
    ...process.env,
    FORGE_WEBHOOK_SECRET: '',
    GATEHOUSE_NATIVE: 'auto',
    GATEHOUSE_NATIVE_ADDON: '',
    ...options.env,
  };
  // spawnSync blocks the event loop, so mocha's own timeout could not end a child that hangs: this one does.
  const result = spawnSync(process.execPath, [...CLI, ...args], {
    cwd: root,
    input: options.input,
    env,
    encoding: 'utf8',
    timeout: 25_000,
    killSignal: 'SIGKILL',
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('gatehouse CLI', () => {
  it('sign prints the public vector for Hello, World!', () => {
    const result = run(['sign', '--secret', SECRET], { input: 'Hello, World!' });
    expect(result.status).to.equal(0);
    expect(result.stdout).to.equal('sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17\n');
  });

  it('sign reads the secret from FORGE_WEBHOOK_SECRET and signs bytes exactly (BOM, invalid UTF-8)', () => {
    const body = Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0xff, 0x7d]);
    const result = run(['sign'], { input: body, env: { FORGE_WEBHOOK_SECRET: 'k' } });
    expect(result.stdout.trim()).to.equal(`sha256=${createHmac('sha256', 'k').update(body).digest('hex')}`);
  });

  it('sign without a secret fails with usage, exit 2', () => {
    const result = run(['sign'], { input: 'x' });
    expect(result.status).to.equal(2);
    expect(result.stderr).to.match(/no secret: pass --secret or set FORGE_WEBHOOK_SECRET/);
  });

  it("--help or -h after a command prints that command's usage, options, environment and an example, and exits 0, starting nothing", () => {
    for (const [args, first] of [
      [['serve', '--help'], 'gatehouse serve'],
      [['dev', '-h'], 'gatehouse dev'],
      [['sign', '--help'], 'gatehouse sign'],
      [['--help'], 'gatehouse dev'],
      [['help'], 'gatehouse dev'],
    ] as const) {
      const result = run([...args], { input: '' });
      expect(result.status, args.join(' ')).to.equal(0);
      expect(result.stdout, args.join(' ')).to.match(new RegExp(`^Usage:\\n {2}${first}`));
      expect(result.stderr, args.join(' ')).to.equal('');
    }
    const serveHelp = run(['serve', '--help']).stdout;
    for (const part of [
      'Options:',
      '--forward-auth',
      '--metrics-port <n>',
      'Environment:',
      'GATEHOUSE_REDIS_URL',
      'GATEHOUSE_TRUSTED_PROXIES',
      'Example:',
    ])
      expect(serveHelp).to.contain(part);
    expect(run(['dev', '--help']).stdout).to.contain('--public-host <name>');
  });

  it('a usage error is one line and where to look, with the flag or command a misspelling most likely meant, exit 2', () => {
    const cases: Array<[string[], string]> = [
      [
        ['sign', '--secrett', 'x'],
        'gatehouse: unknown option --secrett (did you mean --secret?)\n(gatehouse sign --help lists the options)\n',
      ],
      [
        ['serve', '--prot', '8080'],
        'gatehouse: unknown option --prot (did you mean --port?)\n(gatehouse serve --help lists the options)\n',
      ],
      [['serve', '--verbose'], 'gatehouse: unknown option --verbose\n(gatehouse serve --help lists the options)\n'],
      [
        ['serve', '--upstream'],
        'gatehouse: --upstream <value> needs a value\n(gatehouse serve --help lists the options)\n',
      ],
      [['serv'], 'gatehouse: unknown command: serv (did you mean serve?)\n(gatehouse help lists the options)\n'],
      [['frobnicate'], 'gatehouse: unknown command: frobnicate\n(gatehouse help lists the options)\n'],
    ];
    for (const [args, stderr] of cases) {
      const result = run(args, { input: '' });
      expect(result.status, args.join(' ')).to.equal(2);
      expect(result.stderr, args.join(' ')).to.equal(stderr);
    }
    expect(run(['serve', '--port', '99999']).status).to.equal(2);
  });

  it('serve prints its URL, logs the active core, and receives deliveries', async () => {
    const server = await serve({ FORGE_WEBHOOK_SECRET: SECRET, GATEHOUSE_NATIVE: 'auto', GATEHOUSE_NATIVE_ADDON: '' });
    try {
      const reply = await deliver(server.url, 'push', '{"commits":[]}');
      expect(reply.status).to.equal(200);
      expect(server.output()).to.contain('"core":"native"');
      expect(await outputShowing(server, 'webhook receiver: POST')).to.contain(
        `webhook receiver: POST ${server.url}/api/forge/webhook\n`,
      );
      expect(server.output()).not.to.contain(SECRET);
    } finally {
      expect(await server.stop()).to.equal(0);
    }
  });

  it('serve without FORGE_WEBHOOK_SECRET says at start that deliveries will get a 500', async () => {
    const server = await serve({ FORGE_WEBHOOK_SECRET: '' });
    try {
      expect((await deliver(server.url, 'push', '{}')).status).to.equal(500);
      const note = `webhook receiver: POST ${server.url}/api/forge/webhook (not configured: answers 500 until FORGE_WEBHOOK_SECRET is set)`;
      expect(await outputShowing(server, note)).to.contain(note);
    } finally {
      await server.stop();
    }
  });

  it('GATEHOUSE_NATIVE=off runs the TypeScript fallback and says so', async () => {
    const server = await serve({ FORGE_WEBHOOK_SECRET: SECRET, GATEHOUSE_NATIVE: 'off' });
    try {
      expect((await deliver(server.url, 'push', '{}')).status).to.equal(200);
      expect(await outputShowing(server, /TypeScript fallback active/)).to.match(
        /"core":"fallback".*TypeScript fallback active/,
      );
    } finally {
      await server.stop();
    }
  });

  it('a port that is not a decimal number is a usage error naming where it came from, exit 2', () => {
    for (const [args, env, source, shown] of [
      [['serve', '--port', '0x50'], {}, '--port', '"0x50"'],
      [['serve', '--port', '70000'], {}, '--port', '"70000"'],
      [['dev'], { PORT: 'abc' }, 'PORT', '"abc"'],
    ] as const) {
      const result = run([...args], { env });
      expect(result.status, `${args.join(' ')} ${JSON.stringify(env)}`).to.equal(2);
      expect(result.stderr).to.contain(`gatehouse: ${source} must be a port number, 0-65535 (got ${shown})`);
    }
  });

  it('an unknown GATEHOUSE_LOG_LEVEL is a startup error naming the variable and the levels; an empty one is info', async () => {
    for (const command of [
      ['serve', '--port', '0'],
      ['dev', '--port', '0'],
    ]) {
      const result = run(command, { env: { GATEHOUSE_LOG_LEVEL: 'verbose' } });
      expect(result.status, command.join(' ')).to.equal(1);
      expect(result.stderr).to.contain(
        'gatehouse: GATEHOUSE_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")',
      );
    }
    for (const [level, logsInfo] of [
      ['', true],
      [' WARN ', false],
    ] as const) {
      const server = await serve({ FORGE_WEBHOOK_SECRET: SECRET, GATEHOUSE_NATIVE: 'off', GATEHOUSE_LOG_LEVEL: level });
      expect(await server.stop()).to.equal(0);
      // The stop is logged at info: there at the default level, not at warn.
      expect(server.output().includes('"msg":"stopping: no new connections'), JSON.stringify(level)).to.equal(logsInfo);
    }
  });

  it('a port already in use is a clear error that says how to pick another, exit 1', async () => {
    const net = await import('node:net');
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as import('node:net').AddressInfo;
      const result = run(['serve', '--port', String(port)]);
      expect(result.status).to.equal(1);
      expect(result.stderr).to.contain(
        `gatehouse: 127.0.0.1:${port} is already in use: pass --port <n> (or set PORT) to listen elsewhere`,
      );
    } finally {
      taken.close();
    }
  });

  it('--metrics-port must be a port number, --metrics-host needs it, --workers must be auto or 1-256: usage errors, exit 2', () => {
    for (const [args, message] of [
      [['serve', '--metrics-port', 'nine'], /--metrics-port must be a port number/],
      [['serve', '--metrics-host', '0.0.0.0'], /--metrics-host needs --metrics-port/],
      [['serve', '--workers', '0'], /--workers must be auto or a number from 1 to 256/],
    ] as const) {
      const result = run([...args], { input: '' });
      expect(result.status, args.join(' ')).to.equal(2);
      expect(result.stderr).to.match(message);
    }
  });

  it('serve --metrics-port: the metrics listener is said at start and serves them', async () => {
    const server = await serve({ FORGE_WEBHOOK_SECRET: SECRET }, ['serve', '--port', '0', '--metrics-port', '0']);
    try {
      expect((await deliver(server.url, 'push', '{}')).status).to.equal(200);
      const metricsUrl = /metrics: GET (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(
        await outputShowing(server, 'metrics: GET'),
      )![1]!;
      expect(await (await fetch(metricsUrl)).text()).to.match(
        /^gatehouse_webhook_deliveries_total\{event="push",status="200"\} 1$/m,
      );
    } finally {
      expect(await server.stop()).to.equal(0);
    }
  });

  it('GATEHOUSE_NATIVE=require with no loadable addon is a startup error', () => {
    const result = run(['serve', '--port', '0'], {
      env: { GATEHOUSE_NATIVE: 'require', GATEHOUSE_NATIVE_ADDON: '/nonexistent/addon.node' },
    });
    expect(result.status).to.equal(1);
    expect(result.stderr).to.match(/GATEHOUSE_NATIVE=require but the native addon cannot load: native addon not found/);
  });

  it('a missing addon in auto mode falls back with a warning', async () => {
    const server = await serve({
      FORGE_WEBHOOK_SECRET: SECRET,
      GATEHOUSE_NATIVE: 'auto',
      GATEHOUSE_NATIVE_ADDON: '/nonexistent/addon.node',
    });
    try {
      expect((await deliver(server.url, 'push', '{}')).status).to.equal(200);
      expect(server.output()).to.match(/"core":"fallback","reason":"native addon not found/);
    } finally {
      await server.stop();
    }
  });
});

/** A configuration that lets every request through anonymously, its token store in a directory of its own. */
function anonymousConfig(): { config: string; remove: () => void } {
  const store = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cli-store-'));
  return {
    config: JSON.stringify({
      globalValidation: { requireAuthentication: false },
      login: { tokenStore: { fileSystem: { directory: store } } },
    }),
    remove: () => rmSync(store, { recursive: true, force: true }),
  };
}

describe('gatehouse serve --upstream / dev', function () {
  this.timeout(30_000);

  it('a bad configuration exits 1 listing every problem with its JSON path', () => {
    const config = JSON.stringify({
      globalValidation: { unauthenticatedClientAction: 'Nope' },
      login: { cookieExpiration: { timeToExpiration: 'soon' } },
    });
    const result = run(['serve', '--upstream', 'http://127.0.0.1:9', '--port', '0'], {
      env: { GATEHOUSE_AUTH_CONFIG_JSON: config },
    });
    expect(result.status).to.equal(1);
    expect(result.stderr).to.contain('invalid authentication configuration');
    expect(result.stderr).to.match(/- globalValidation\.unauthenticatedClientAction: /);
    expect(result.stderr).to.match(/- login\.cookieExpiration\.timeToExpiration: expected a time span/);
  });

  it('no configuration at all, or a bad --upstream, is a clear error', () => {
    const none = run(['serve', '--upstream', 'http://127.0.0.1:9', '--port', '0'], {
      env: { GATEHOUSE_AUTH_CONFIG_JSON: '', WEBSITE_AUTH_V2_CONFIG_JSON: '' },
    });
    expect(none.status).to.equal(1);
    expect(none.stderr).to.match(/no configuration: pass --config <file>/);
    const bad = run(['serve', '--upstream', 'ftp://x', '--port', '0']);
    expect(bad.status).to.equal(2);
    expect(bad.stderr).to.match(/--upstream must be an http\(s\) URL/);
    // Before the fix a path or query was glued in front of every request's path, and credentials were printed at start.
    const withPath = run(['serve', '--upstream', 'http://127.0.0.1:9/app', '--port', '0']);
    expect(withPath.status).to.equal(2);
    expect(withPath.stderr).to.contain(
      "--upstream must be the app's origin without a path (got http://127.0.0.1:9/app)",
    );
    const withSecret = run(['serve', '--upstream', 'http://admin:hunter2@127.0.0.1:9?key=s3cret', '--port', '0']);
    expect(withSecret.status).to.equal(2);
    expect(withSecret.stderr).to.contain('--upstream must not carry credentials');
    expect(withSecret.stderr + withSecret.stdout).not.to.match(/hunter2|admin|s3cret/);
  });

  it('GATEHOUSE_UPSTREAM_TIMEOUT_MS sets how long the app may stay silent; a bad value is a startup error', async () => {
    // The app answers after 1.5 s: within the default 60 s, past a timeout of 300 ms.
    const app = http.createServer((_req, res) => void setTimeout(() => res.end('late answer'), 1500));
    const listening = await listen(app);
    const { config, remove } = anonymousConfig();
    const args = ['serve', '--upstream', listening.url, '--port', '0'];
    const get = (url: string) =>
      raw(url, 'GET /slow HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\nConnection: close\r\n\r\n');
    try {
      const impatient = await serve({ GATEHOUSE_AUTH_CONFIG_JSON: config, GATEHOUSE_UPSTREAM_TIMEOUT_MS: '300' }, args);
      try {
        expect(await get(impatient.url)).to.match(/^HTTP\/1\.1 504 /);
        const failed = /"path":"\/slow","reason":"upstream timeout","msg":"upstream request failed"/;
        expect(await outputShowing(impatient, failed)).to.match(failed);
      } finally {
        await impatient.stop();
      }
      const patient = await serve({ GATEHOUSE_AUTH_CONFIG_JSON: config, GATEHOUSE_UPSTREAM_TIMEOUT_MS: '' }, args);
      try {
        expect(await get(patient.url))
          .to.match(/^HTTP\/1\.1 200 /)
          .and.to.match(/late answer$/);
      } finally {
        await patient.stop();
      }
      const bad = run(args, { env: { GATEHOUSE_AUTH_CONFIG_JSON: config, GATEHOUSE_UPSTREAM_TIMEOUT_MS: '60s' } });
      expect(bad.status).to.equal(1);
      expect(bad.stderr).to.contain(
        'gatehouse: GATEHOUSE_UPSTREAM_TIMEOUT_MS must be a whole number of milliseconds, 1-2147478647 (got "60s")',
      );
    } finally {
      await listening.close();
      remove();
    }
  });

  it('GATEHOUSE_ACCESS_LOG=on logs a line per request, with and without --upstream; a bad value is a startup error', async () => {
    const app = http.createServer((_req, res) => void res.end('app answer'));
    const listening = await listen(app);
    const { config, remove } = anonymousConfig();
    const withApp = ['serve', '--upstream', listening.url, '--port', '0'];
    try {
      for (const args of [withApp, ['serve', '--port', '0']]) {
        const server = await serve(
          { GATEHOUSE_AUTH_CONFIG_JSON: config, FORGE_WEBHOOK_SECRET: SECRET, GATEHOUSE_ACCESS_LOG: 'on' },
          args,
        );
        try {
          const answer = await raw(
            server.url,
            'GET /orders?token=query-secret HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
          );
          const status = args === withApp ? 200 : 404;
          expect(answer).to.match(new RegExp(`^HTTP/1\\.1 ${status} `));
          const line = new RegExp(
            `"method":"GET","path":"/orders","status":${status},"durationMs":[0-9.]+,"remoteAddress":"127\\.0\\.0\\.1","msg":"request completed"`,
          );
          expect(await outputShowing(server, line), args.join(' ')).to.match(line);
          expect(server.output()).not.to.contain('query-secret');
        } finally {
          await server.stop();
        }
      }
      for (const args of [withApp, ['serve', '--port', '0']]) {
        const bad = run(args, { env: { GATEHOUSE_AUTH_CONFIG_JSON: config, GATEHOUSE_ACCESS_LOG: 'yes' } });
        expect(bad.status, args.join(' ')).to.equal(1);
        expect(bad.stderr).to.contain('gatehouse: GATEHOUSE_ACCESS_LOG must be on or off (got "yes")');
      }
    } finally {
      await listening.close();
      remove();
    }
  });

  it('an https app: its certificate is checked against its own address, not the Host the client sent; one not trusted is a 502 naming why', async () => {
    // A self-signed test certificate for 127.0.0.1 and localhost, valid for a century
    // (openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -days 36500 -addext subjectAltName=IP:127.0.0.1,DNS:localhost).
    const tls = path.join(root, 'test', 'support', 'tls');
    const cert = path.join(tls, 'upstream-cert.pem');
    const seen: Array<{ url: string; host: string | undefined; forwardedHost: string | undefined }> = [];
    const app = https.createServer(
      { cert: readFileSync(cert), key: readFileSync(path.join(tls, 'upstream-key.pem')) },
      (req, res) => {
        seen.push({
          url: req.url ?? '',
          host: req.headers.host,
          forwardedHost: req.headers['x-forwarded-host'] as string | undefined,
        });
        res.end('from the https app');
      },
    );
    app.on('upgrade', (_req, socket) =>
      socket.end('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n'),
    );
    const listening = await listen(app);
    const upstream = `https://127.0.0.1:${new URL(listening.url).port}`;
    const { config, remove } = anonymousConfig();
    const args = ['serve', '--upstream', upstream, '--port', '0'];
    const get = (url: string) =>
      raw(url, 'GET /page HTTP/1.1\r\nHost: public.example\r\nAccept: application/json\r\nConnection: close\r\n\r\n');
    try {
      const trusting = await serve({ GATEHOUSE_AUTH_CONFIG_JSON: config, NODE_EXTRA_CA_CERTS: cert }, args);
      try {
        const answer = await get(trusting.url);
        expect(answer)
          .to.match(/^HTTP\/1\.1 200 /)
          .and.to.match(/from the https app$/);
        expect(seen).to.deep.equal([{ url: '/page', host: 'public.example', forwardedHost: 'public.example' }]);
        const upgrade = await raw(
          trusting.url,
          'GET /socket HTTP/1.1\r\nHost: public.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
          (r) => r.includes('\r\n\r\n'),
        );
        expect(upgrade).to.match(/^HTTP\/1\.1 101 /);
      } finally {
        await trusting.stop();
      }
      const untrusting = await serve({ GATEHOUSE_AUTH_CONFIG_JSON: config, NODE_EXTRA_CA_CERTS: '' }, args);
      try {
        const answer = await get(untrusting.url);
        expect(answer)
          .to.match(/^HTTP\/1\.1 502 /)
          .and.to.contain('"error":"The application is not reachable right now."');
        const untrusted =
          /"reason":"(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)","msg":"upstream request failed"/;
        expect(await outputShowing(untrusting, untrusted)).to.match(untrusted);
        expect(seen).to.have.length(1);
      } finally {
        await untrusting.stop();
      }
    } finally {
      await listening.close();
      remove();
    }
  });

  it('SIGTERM: a request in progress gets its answer from the app, then the process exits 0', async () => {
    let answer: (() => void) | undefined;
    const app = http.createServer((_req, res) => {
      answer = () => res.end('answered after SIGTERM');
    });
    const listening = await listen(app);
    const { config, remove } = anonymousConfig();
    const server = await serve({ GATEHOUSE_AUTH_CONFIG_JSON: config }, [
      'serve',
      '--upstream',
      listening.url,
      '--port',
      '0',
    ]);
    try {
      const response = raw(server.url, 'GET /slow HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n', (r) =>
        r.endsWith('answered after SIGTERM'),
      );
      while (answer === undefined) await new Promise((r) => setTimeout(r, 10));
      const exited = server.stop();
      await new Promise((r) => setTimeout(r, 300)); // the signal is handled; the app answers only now
      answer();
      expect(await response).to.match(/^HTTP\/1\.1 200 /);
      expect(await exited).to.equal(0);
      expect(server.output())
        .to.contain('"msg":"stopping: no new connections; requests in progress may finish"')
        .and.to.contain('"msg":"stopped"');
    } finally {
      await listening.close();
      remove();
    }
  });

  it('SIGTERM once the reader of its logs has gone (EPIPE) still stops it, exit 0', async () => {
    const { config, remove } = anonymousConfig();
    const server = await serve({ GATEHOUSE_AUTH_CONFIG_JSON: config }, [
      'serve',
      '--upstream',
      'http://127.0.0.1:9',
      '--port',
      '0',
    ]);
    try {
      server.closeStdout();
      // Before the fix the process hung for good in pino's exit-time flush, retrying the broken pipe.
      const hung = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 15_000).unref());
      const exited = await Promise.race([server.stop(), hung]);
      if (exited === 'hung') server.kill();
      expect(exited, server.output()).to.equal(0);
    } finally {
      remove();
    }
  });

  it('gatehouse dev --host 0.0.0.0 prints the URL browsers elsewhere open, and the provider takes the callback of each name of this machine', async () => {
    const server = await serve({ GATEHOUSE_NATIVE: 'off' }, [
      'dev',
      '--host',
      '0.0.0.0',
      '--port',
      '0',
      '--public-host',
      '127.0.0.2',
    ]);
    try {
      const port = new URL(server.url).port;
      expect(server.url).to.equal(`http://127.0.0.2:${port}`);
      // Printed right after the line serve() waited for: it may still be on its way.
      // With --port 0 the provider takes any free port (the next one may be taken): the one printed.
      const provider = /development OpenID provider: http:\/\/127\.0\.0\.2:(\d+)\n/.exec(
        await outputShowing(server, 'development OpenID provider:'),
      );
      expect(provider, server.output()).to.not.equal(null);
      const note = `listening on http://0.0.0.0:${port}, the development provider on port ${provider![1]}: browsers elsewhere open http://127.0.0.2:${port}/`;
      expect(await outputShowing(server, note)).to.contain(note);
      const warning = 'anyone who can reach these ports can sign in as the development users';
      expect(await outputShowing(server, warning)).to.contain(warning);
      const location = (url: string) =>
        new Promise<string>((resolve, reject) => {
          http
            .get(url, (res) => {
              res.resume();
              resolve(res.headers.location ?? '');
            })
            .on('error', reject);
        });
      for (const host of ['127.0.0.1', 'localhost', '127.0.0.2', '0.0.0.0']) {
        const authorize = await location(`http://${host}:${port}/.auth/login/dev`);
        const callback = new URL(authorize).searchParams.get('redirect_uri');
        // The provider's answer to an unregistered redirect_uri is its error page (400); a registered one goes on to its login page.
        const answer = await location(authorize);
        const registered = host !== '0.0.0.0';
        expect(answer.includes('/interaction/'), `${callback} -> ${answer}`).to.equal(registered);
      }
    } finally {
      await server.stop();
    }
  });

  it("npm start --port N reaches dev (npm hands the flag on as npm_config_port); npm's setting outside npm start does not", async () => {
    const port = await freePort();
    const started = await serve(
      { GATEHOUSE_NATIVE: 'off', npm_lifecycle_event: 'start', npm_config_port: String(port) },
      ['dev'],
    );
    try {
      expect(started.url).to.equal(`http://127.0.0.1:${port}`);
    } finally {
      await started.stop();
    }
    const other = await serve(
      { GATEHOUSE_NATIVE: 'off', npm_lifecycle_event: 'test', npm_config_port: String(port), PORT: '0' },
      ['dev'],
    );
    try {
      expect(new URL(other.url).port).to.not.equal(String(port));
    } finally {
      await other.stop();
    }
  });

  it('gatehouse dev serves the protected demo app, the public page and the webhook receiver', async () => {
    const server = await serve({ FORGE_WEBHOOK_SECRET: SECRET, GATEHOUSE_NATIVE: 'auto', GATEHOUSE_NATIVE_ADDON: '' }, [
      'dev',
      '--port',
      '0',
    ]);
    try {
      const get = (path: string, accept: string) =>
        new Promise<{ status: number; location?: string }>((resolve, reject) => {
          http
            .get(`${server.url}${path}`, { headers: { accept } }, (res) => {
              res.resume();
              resolve({
                status: res.statusCode ?? 0,
                ...(res.headers.location ? { location: res.headers.location } : {}),
              });
            })
            .on('error', reject);
        });
      expect(await get('/', 'text/html')).to.deep.equal({
        status: 302,
        location: '/.auth/login/dev?post_login_redirect_uri=%2F',
      });
      expect((await get('/public/', 'text/html')).status).to.equal(200);
      expect((await deliver(server.url, 'push', '{"commits":[]}')).status).to.equal(200);
      expect(server.output()).to.match(/sign in as demo \/ demo/);
      // The development provider's storage is gatehouse's own: oidc-provider does not tell the user to replace it.
      expect(server.output()).to.match(/development OpenID provider: http/);
      expect(server.output()).not.to.match(/oidc-provider (WARNING|NOTICE): .*(MUST|SHOULD) change/);
    } finally {
      await server.stop();
    }
  });

  it('gatehouse dev --upstream puts your own app behind the development provider: every path protected, sign in as demo / demo, identity headers at the app', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const app = await listen(
      http.createServer((req, res) => {
        seen.push(req.headers);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('your app');
      }),
    );
    const server = await serve({ GATEHOUSE_NATIVE: 'auto', GATEHOUSE_NATIVE_ADDON: '' }, [
      'dev',
      '--port',
      '0',
      '--upstream',
      app.url,
    ]);
    try {
      expect(server.output()).to.include(`(your app at ${app.url}, every path protected)`);
      expect(await outputShowing(server, 'verified deliveries go on to')).to.include(
        `; verified deliveries go on to ${app.url}/api/forge/webhook`,
      );
      const browser = new Browser();
      const anonymous = await browser.request(`${server.url}/public/page`);
      expect(anonymous.status).to.equal(302);
      const hops = await browser.follow(`${server.url}/orders`);
      const done = await browser.submitForm(hops.at(-1)!, /\/login$/, { username: 'demo', password: 'demo' });
      expect(done.at(-1)!.status).to.equal(200);
      expect(done.at(-1)!.body).to.equal('your app');
      expect(seen.at(-1)!['x-platform-client-principal-name']).to.equal('Dev User');
    } finally {
      await server.stop();
      await app.close();
    }
  });
});
