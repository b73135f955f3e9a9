// Property tests for the two path judgements an attacker aims at: return URLs (an open redirect)
// and excluded paths (a protected path reached through an anonymous prefix). Inputs are built
// from the pieces such attacks are made of; the oracle is what a browser or an app would make of
// what gatehouse accepts: the WHATWG URL parser (as Chromium resolves a Location), and a path
// reading as lax as any server's (decoding repeatedly, `\` as `/`, `;` parameters dropped, Unicode
// folded, `//` collapsed, dot segments resolved).
import { expect } from 'chai';
import fc from 'fast-check';

import { matchExcludedPath, parseExcludedPaths } from '../../src/core/excluded-paths.js';
import { challengeReturnUrl, MAX_RETURN_URL_LENGTH, validateReturnUrl } from '../../src/core/return-url.js';

const APP = 'https://app.example';
const ALLOWED = 'https://allowed.example';
const RUNS = 3000;

/** The value and up to three further layers of percent-decoding, as a lax app might apply them. */
function decodingLayers(value: string): string[] {
  const layers = [value];
  for (let i = 0; i < 3; i++) {
    let next: string;
    try {
      next = decodeURIComponent(layers.at(-1)!);
    } catch {
      break;
    }
    if (next === layers.at(-1)) break;
    layers.push(next);
  }
  return layers;
}

function resolve(location: string, base?: string): URL | undefined {
  try {
    return new URL(location, base);
  } catch {
    return undefined;
  }
}

/** The path of `location` (against `base`) with its dot segments resolved, as written: URL parsing would trim the trailing space of a decoded `/.auth%20`. */
function pathAsWritten(location: string, base?: string): string {
  return resolve(location.replace(/[\u0000-\u0020]/g, encodeURIComponent), base)?.pathname ?? '';
}

describe('return URLs: what a browser makes of an accepted one (property tests)', () => {
  // Mostly pieces of ordinary URLs, so that many candidates are accepted and the property is tested on them.
  const ordinary = fc.constantFrom(
    '/',
    '//',
    '/.',
    'x',
    'é',
    '.',
    '..',
    '?',
    '#',
    '&',
    '=',
    '%20',
    '%2e',
    ':',
    '@',
    'next',
    'login',
    'logout',
    'done',
    '.auth',
    'allowed.example',
  );
  const hostile = fc.constantFrom(
    '//',
    '///',
    '\\',
    '%5c',
    '%5C',
    '%255c',
    '%2f',
    '%2F',
    '%252f',
    '%09',
    '\t',
    '%0a',
    '\n',
    '%0d',
    '%00',
    ' ',
    '%',
    '%25',
    '%2E',
    '%252e',
    '．',
    '／',
    '\uFE68',
    '\u3002',
    '\u2028',
    'evil.example',
    'app.example',
    'allowed.example.evil',
    'https:',
    'http:',
    'https://',
    'javascript:',
    'data:',
    'redirect_uri',
    'post_login_redirect_uri',
    '%2eauth',
    'callback',
    'refresh',
    '%zz',
  );
  const start = fc.constantFrom(
    '/',
    '/',
    '/',
    '',
    '//',
    'https://allowed.example',
    'https://allowed.example/',
    'http://allowed.example/',
    'https://app.example/',
    'https://app.example/.auth/',
  );
  const candidate = fc
    .tuple(
      start,
      fc.array(fc.oneof({ arbitrary: ordinary, weight: 3 }, { arbitrary: hostile, weight: 1 }), { maxLength: 10 }),
    )
    .map(([first, parts]) => first + parts.join(''));

  const throughAuthRoute = (path: string) =>
    (path === '/.auth' || path.startsWith('/.auth/')) && !['/.auth/login/done', '/.auth/logout/done'].includes(path);
  // No allow-list; another site's origin; and the app's own origin listed too, as Easy Auth users list it.
  const allowLists: ReadonlyArray<readonly string[]> = [[], [ALLOWED], [ALLOWED, `${APP}/any/path`]];
  for (const allowed of allowLists) {
    const origins = [APP, ...allowed.map((entry) => new URL(entry).origin)];
    it(`an accepted return URL leads to this origin or an allowed one, in every decoding layer, and never through an authentication route (allowed: ${allowed.length === 0 ? 'none' : allowed.join(', ')})`, () => {
      let accepted = 0;
      fc.assert(
        fc.property(candidate, (raw) => {
          const verdict = validateReturnUrl(raw, allowed);
          if (!verdict.ok) return;
          accepted++;
          const { location } = verdict;
          expect(location.length).to.be.at.most(MAX_RETURN_URL_LENGTH);
          expect(location).to.not.match(/[\u0000-\u001f\u007f\\]/);
          // Printable ASCII only: what a Location header carries unchanged.
          expect(location, raw).to.match(/^[\x21-\x7e]+$/);
          for (const layer of decodingLayers(location)) {
            const url = resolve(layer, APP);
            if (url === undefined) continue;
            expect(origins, `${JSON.stringify(raw)} → ${JSON.stringify(layer)}`).to.include(url.origin);
            expect(url.username + url.password).to.equal('');
            if (url.origin !== APP) continue;
            // Each decoding layer as written, and the path alone as a server decodes it: the fragment, never
            // sent, cannot stop that (`/.auth%2Flogin%2Fx#%%`).
            for (const path of [
              pathAsWritten(layer, APP),
              ...decodingLayers(url.pathname).map((decoded) => pathAsWritten(`${APP}${decoded}`)),
            ]) {
              expect(throughAuthRoute(path), `${JSON.stringify(raw)} → ${path}`).to.equal(false);
            }
          }
          // What was accepted is accepted again as it stands (it is stored, then sent as is).
          expect(validateReturnUrl(location, allowed)).to.deep.equal({ ok: true, location });
        }),
        { numRuns: RUNS },
      );
      // The pieces do make acceptable URLs: the property was tested, not skipped.
      expect(accepted).to.be.greaterThan(RUNS / 50);
    });
  }

  it('where a challenge sends the browser back to is always a return URL sign-in accepts', () => {
    fc.assert(
      fc.property(candidate, candidate, (path, query) => {
        expect(validateReturnUrl(challengeReturnUrl(`/${path}`, query)), `${path} ? ${query}`).to.deep.include({
          ok: true,
        });
      }),
      { numRuns: RUNS },
    );
  });

  it('a plain path on this site is accepted as it is', () => {
    const segment = fc.stringMatching(/^[a-z0-9_~-]{1,12}$/).filter((s) => s !== '.auth');
    fc.assert(
      fc.property(
        fc.array(segment, { minLength: 1, maxLength: 6 }),
        fc.option(fc.stringMatching(/^[a-z0-9=&]{1,20}$/)),
        (segments, query) => {
          const raw = `/${segments.join('/')}${query === null ? '' : `?${query}`}`;
          expect(validateReturnUrl(raw, [])).to.deep.equal({ ok: true, location: raw });
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** The path as the laxest app reads it: every decoding layer, `\` as `/`, NFKC, `;` parameters dropped, `//` collapsed, dot segments resolved. */
function laxReading(rawPath: string): string {
  const decoded = decodingLayers(rawPath).at(-1)!.normalize('NFKC').replace(/\\/g, '/');
  const out: string[] = [];
  const segments = decoded.split('/').map((segment) => segment.split(';')[0]!);
  segments.forEach((segment, i) => {
    if (segment === '..') out.pop();
    else if (segment !== '.' && (segment !== '' || i === segments.length - 1)) out.push(segment);
  });
  return `/${out.join('/')}`;
}

function within(path: string, rule: { path: string; prefix: boolean }): boolean {
  if (!rule.prefix) return path === rule.path;
  return rule.path === '/' || path === rule.path || path.startsWith(`${rule.path}/`);
}

describe('excluded paths: what an app makes of an exempted one (property tests)', () => {
  const rules = parseExcludedPaths(['/public/*', '/health', '/static/assets/*']);
  // Mostly ordinary pieces after an excluded prefix (or a spelling of one), so that many paths are exempted and the property is tested on them.
  const start = fc.constantFrom(
    '/public',
    '/public/',
    '/health',
    '/static/assets/',
    '/static/',
    '/',
    '/%70ublic/',
    '/PUBLIC/',
    '/h%65alth',
  );
  const ordinary = fc.constantFrom(
    '/',
    'x',
    'admin',
    'public',
    'health',
    'é',
    '%C3%A9',
    '%20',
    '~',
    '%7e',
    '-',
    '.',
    '..',
    'a.b',
    '*',
  );
  const hostile = fc.constantFrom(
    '//',
    '%2e',
    '%2E',
    '.%2e',
    '%2e%2e',
    '%252e',
    '%2f',
    '%2F',
    '%252f',
    '%5c',
    '\\',
    ';',
    '%3b',
    ';a=1',
    '%00',
    '%0a',
    '%25',
    '%',
    '%70ublic',
    '%61dmin',
    '．',
    '／',
    '%ef%bc%8f',
    '%ef%bc%8e',
    '%e2%80%a4',
    '\uFE68',
    '?',
    '#',
  );
  const rawPath = fc
    .tuple(
      start,
      fc.array(fc.oneof({ arbitrary: ordinary, weight: 3 }, { arbitrary: hostile, weight: 1 }), { maxLength: 8 }),
    )
    .map(([first, parts]) => first + parts.join(''));

  it('a path exempted from sign-in is under the same rule however the app reads it', () => {
    let exempted = 0;
    fc.assert(
      fc.property(rawPath, (raw) => {
        const rule = matchExcludedPath(rules, raw);
        if (rule === undefined) return;
        exempted++;
        const whatwg = resolve(raw, 'http://app.example')!.pathname;
        for (const reading of [...decodingLayers(whatwg), laxReading(raw), laxReading(whatwg)]) {
          expect(
            within(reading, rule),
            `${JSON.stringify(raw)} exempted by ${rule.source}, read as ${JSON.stringify(reading)}`,
          ).to.equal(true);
        }
      }),
      { numRuns: RUNS },
    );
    expect(exempted).to.be.greaterThan(RUNS / 50);
  });

  it('a plain path under an excluded prefix is exempted', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9_~-]{1,12}$/);
    fc.assert(
      fc.property(
        fc.constantFrom('/public', '/static/assets'),
        fc.array(segment, { maxLength: 5 }),
        fc.boolean(),
        (prefix, segments, slash) => {
          const raw = `${prefix}${segments.map((s) => `/${s}`).join('')}${slash ? '/' : ''}`;
          expect(matchExcludedPath(rules, raw)?.path).to.equal(prefix);
        },
      ),
      { numRuns: 300 },
    );
  });
});
