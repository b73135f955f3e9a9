// Answers from providers (tokens, profiles, keys, discovery) are read within a size limit:
// a declared excess is refused unread, and a stream that goes on is cut off as soon as it
// crosses the limit, whichever client reads it (gatehouse's own calls or openid-client's).
// A refusal's error code is bounded too.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { expect } from 'chai';

import type { OidcProviderConfig } from '../../../src/core/config/provider-settings.js';
import { OidcProviderClient } from '../../../src/core/oidc/provider-client.js';
import { ProviderRefusedError, ProviderUnavailableError } from '../../../src/core/providers/errors.js';
import {
  boundedFetch,
  callProvider,
  expiryAfter,
  expiryAt,
  jsonAnswer,
  MAX_ANSWER_BYTES,
} from '../../../src/core/providers/provider-http.js';

/** What the endless answer had written when its connection closed: far less than the 10 s timeout would let through. */
const CUT_OFF_BOUND = 16 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x20);

interface AnswerServer {
  readonly url: string;
  /** Bytes the endless answer wrote, once the client closed its connection. */
  readonly endlessWritten: Promise<number>;
  close(): Promise<void>;
}

/** /endless (and below it): a chunked JSON-looking answer that never ends; /declared: Content-Length over the limit; /token: a 400 whose error is not a code; /small: `{"ok":true}`; /empty: 204. */
async function startAnswerServer(): Promise<AnswerServer> {
  let settle!: (bytes: number) => void;
  const endlessWritten = new Promise<number>((resolve) => (settle = resolve));
  const server = http.createServer((req, res) => {
    if (req.url!.startsWith('/endless')) {
      let written = 0;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"pad":"');
      const pump = (): void => {
        while (!res.destroyed && res.write(CHUNK)) written += CHUNK.length;
        if (!res.destroyed) written += CHUNK.length;
      };
      res.on('drain', pump);
      res.on('close', () => settle(written));
      pump();
      return;
    }
    if (req.url === '/declared') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(MAX_ANSWER_BYTES + 1) });
      res.end(); // the length is a lie; only the header matters
      return;
    }
    if (req.url === '/token') {
      // A refusal whose error code is no code: long, with a line break.
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: `${'e'.repeat(4000)}\nforged log line` }));
      return;
    }
    if (req.url === '/empty') {
      res.writeHead(204).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'x-answer': 'small' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    endlessWritten,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

describe('provider answers are size-limited', function () {
  this.timeout(20_000);
  let server: AnswerServer;
  beforeEach(async () => {
    server = await startAnswerServer();
  });
  afterEach(() => server.close());

  it("gatehouse's own calls: an endless answer is cut off just past the limit, as unavailable", async () => {
    const error = await rejection(callProvider(`${server.url}/endless`, {}, 'profile'));
    expect(error).to.be.instanceOf(ProviderUnavailableError);
    expect(error.message).to.equal('profile: answer too large');
    expect(await server.endlessWritten).to.be.below(CUT_OFF_BOUND);
  });

  it("gatehouse's own calls: a declared length over the limit is refused; a small answer is read", async () => {
    const error = await rejection(callProvider(`${server.url}/declared`, {}, 'token'));
    expect(error).to.be.instanceOf(ProviderUnavailableError);
    expect(error.message).to.equal('token: answer too large');
    const answer = await callProvider(`${server.url}/small`, {}, 'token');
    expect(answer).to.deep.equal({ status: 200, contentType: 'application/json', text: '{"ok":true}' });
  });

  it("openid-client's calls (boundedFetch): an endless answer is cut off; small and empty answers come through unchanged", async () => {
    const error = await rejection(boundedFetch(`${server.url}/endless`, {}));
    expect(error).to.be.instanceOf(ProviderUnavailableError);
    expect(await server.endlessWritten).to.be.below(CUT_OFF_BOUND);
    const small = await boundedFetch(`${server.url}/small`, { headers: { accept: 'application/json' } });
    expect(small.status).to.equal(200);
    expect(small.headers.get('x-answer')).to.equal('small');
    expect(await small.json()).to.deep.equal({ ok: true });
    const empty = await boundedFetch(`${server.url}/empty`, {});
    expect(empty.status).to.equal(204);
    expect(empty.body).to.equal(null);
  });

  it('an OpenID provider whose discovery document never ends is unavailable, not a memory sink', async () => {
    const config: OidcProviderConfig = {
      alias: 'endless',
      fingerprint: 'test',
      kind: 'oidc',
      clientId: 'client',
      clientSecret: 'secret',
      discoveryUrl: `${server.url}/endless/.well-known/openid-configuration`,
      endpoints: undefined,
      nameClaimType: undefined,
      claimsFromUserInfo: false,
      scopes: ['openid'],
      loginParameters: {},
      allowedAudiences: [],
      responseMode: 'query',
    };
    const error = await rejection(new OidcProviderClient(config).configuration());
    expect(error).to.be.instanceOf(ProviderUnavailableError);
    expect(error.message).to.equal(`discovery (${config.discoveryUrl}): provider answer: answer too large`);
    expect(await server.endlessWritten).to.be.below(CUT_OFF_BOUND);
  });

  it("a refusal's error code that is not one is recorded as provider_error, for gatehouse's own calls and openid-client's", async () => {
    const own = await rejection(
      callProvider(`${server.url}/token`, {}, 'token').then((answer) => jsonAnswer(answer, 'token')),
    );
    expect(own).to.be.instanceOf(ProviderRefusedError);
    expect(own.message).to.equal('token: provider answered 400 provider_error');
    expect((own as ProviderRefusedError).oauthError).to.equal('provider_error');
    const client = new OidcProviderClient({
      alias: 'refusing',
      fingerprint: 'test',
      kind: 'oidc',
      clientId: 'client',
      clientSecret: 'secret',
      discoveryUrl: undefined,
      endpoints: {
        authorization: `${server.url}/authorize`,
        token: `${server.url}/token`,
        issuer: server.url,
        jwksUri: `${server.url}/small`,
      },
      nameClaimType: undefined,
      claimsFromUserInfo: false,
      scopes: ['openid'],
      loginParameters: {},
      allowedAudiences: [],
      responseMode: 'query',
    } as OidcProviderConfig);
    const refused = await rejection(client.refresh('refresh-token'));
    expect(refused).to.be.instanceOf(ProviderRefusedError);
    expect(refused.message).to.equal('refresh: provider answered provider_error');
    expect((refused as ProviderRefusedError).oauthError).to.equal('provider_error');
  });
});

describe('access token lifetimes (expires_in)', () => {
  const now = Date.parse('2026-11-24T12:00:00Z');
  it('seconds from now, as a number or a numeric string; anything else is no expiry at all', () => {
    expect(expiryAfter(3600, now)).to.equal(now + 3_600_000);
    expect(expiryAfter('3600', now)).to.equal(now + 3_600_000);
    for (const value of [0, -1, '', ' ', 'soon', null, true, {}, [], Number.NaN, undefined])
      expect(expiryAfter(value, now), String(value)).to.equal(undefined);
  });
  it('a lifetime no date can hold (1e308 s, Infinity) is read as ten years: the expiry stays a date', () => {
    for (const value of [1e308, Number.POSITIVE_INFINITY, '1e300', 2 ** 60]) {
      const at = expiryAfter(value, now)!;
      expect(new Date(at).toISOString(), String(value)).to.equal(
        new Date(now + 10 * 365 * 24 * 3_600_000).toISOString(),
      );
    }
  });
  it("an absolute expiry (Facebook's expires_at, seconds since the epoch) is held to the same ten years", () => {
    expect(expiryAt(now / 1000 + 3600, now)).to.equal(now + 3_600_000);
    expect(new Date(expiryAt(1e308, now)).toISOString()).to.equal(
      new Date(now + 10 * 365 * 24 * 3_600_000).toISOString(),
    );
  });
});
