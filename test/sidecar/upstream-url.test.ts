// --upstream names the app's origin and nothing else: anything more would be
// glued in front of every request's path, or leak into logs.
import { expect } from 'chai';

import { resolveAuthConfig } from '../../src/core/config/auth-config.js';
import { createLogger } from '../../src/logging.js';
import { fallbackCore } from '../../src/native/index.js';
import { createGateway } from '../../src/sidecar/gateway.js';
import { parseUpstreamUrl } from '../../src/sidecar/upstream-url.js';

describe('the upstream URL', () => {
  for (const [given, origin] of [
    ['http://127.0.0.1:3000', 'http://127.0.0.1:3000'],
    ['http://127.0.0.1:3000/', 'http://127.0.0.1:3000'],
    ['https://App.Internal', 'https://app.internal'],
    ['https://app.internal:443/', 'https://app.internal'],
    ['http://[::1]:8080', 'http://[::1]:8080'],
  ] as const) {
    it(`${given} is the origin ${origin}`, () => {
      expect(parseUpstreamUrl(given)).to.deep.equal({ origin });
    });
  }

  for (const [given, problem] of [
    // No scheme: what was most likely meant is suggested ("localhost:" is a scheme to a URL parser).
    ['127.0.0.1:3000', /^has no scheme: did you mean http:\/\/127\.0\.0\.1:3000\?$/],
    ['localhost:3000', /^has no scheme: did you mean http:\/\/localhost:3000\?$/],
    ['3000', /^has no scheme: did you mean http:\/\/127\.0\.0\.1:3000\?$/],
    ['[::1]:3000', /^has no scheme: did you mean http:\/\/\[::1\]:3000\?$/],
    ['not a url', /^is not a URL/],
    ['ftp://files.internal', /^must be an http\(s\) URL, such as .* \(its scheme is ftp:\)$/],
    ['http://127.0.0.1:3000/app', /^must be the app's origin without a path \(got http:\/\/127\.0\.0\.1:3000\/app\)/],
    ['http://127.0.0.1:3000//', /without a path/],
    ['http://127.0.0.1:3000/?debug=1', /^must not have a query or fragment \(got http:\/\/127\.0\.0\.1:3000\/\)$/],
    ['http://127.0.0.1:3000?', /^must not have a query or fragment/],
    ['http://127.0.0.1:3000#top', /^must not have a query or fragment/],
    [
      'http://user:pw@127.0.0.1:3000',
      /^must not carry credentials \(got http:\/\/127\.0\.0\.1:3000\/ with a user name or password\)$/,
    ],
    ['http://user@127.0.0.1:3000', /^must not carry credentials/],
  ] as const) {
    it(`${given} is refused: ${problem.source}`, () => {
      const parsed = parseUpstreamUrl(given);
      expect(parsed).to.have.property('problem').that.matches(problem);
    });
  }

  it('never shows credentials, a query or a fragment back', () => {
    const parsed = parseUpstreamUrl('https://svc:p4ss@app.internal/x?token=t0k#f4g');
    expect(parsed)
      .to.have.property('problem')
      .that.does.not.match(/svc|p4ss|t0k|f4g/);
  });

  it('createGateway refuses such an upstream before it starts anything', async () => {
    const { config } = resolveAuthConfig(
      { globalValidation: { requireAuthentication: false }, login: { tokenStore: { enabled: false } } },
      {},
    );
    const starting = createGateway({
      config,
      upstream: 'http://127.0.0.1:3000/app',
      core: fallbackCore,
      logger: createLogger('silent'),
    });
    await starting.then(
      () => expect.fail('createGateway accepted an upstream with a path'),
      (error: Error) =>
        expect(error.message).to.equal(
          "upstream must be the app's origin without a path (got http://127.0.0.1:3000/app): each request is forwarded with its own path",
        ),
    );
  });
});
