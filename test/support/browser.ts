// A minimal cookie-keeping HTTP client that follows redirects one hop at a
// time, like a browser without JavaScript. Enough to drive a real OIDC login.
import http, { type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';

const MAX_COOKIE_NAME_VALUE_BYTES = 4096;

interface StoredCookie {
  name: string;
  value: string;
  path: string;
  httpOnly: boolean;
  sameSite: string | undefined;
  secure: boolean;
}

export interface Response {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  url: string;
  setCookies: string[];
}

/** The character references pages use in attribute values. */
function decodeEntities(text: string): string {
  return text.replace(
    /&(?:quot|amp|lt|gt|#39|#x27|#34);/g,
    (entity) =>
      ({ '&quot;': '"', '&amp;': '&', '&lt;': '<', '&gt;': '>', '&#39;': "'", '&#x27;': "'", '&#34;': '"' })[entity]!,
  );
}

export class Browser {
  /** origin → "name path" → cookie: as in a browser, one name may hold several cookies, one per path. */
  readonly #jar = new Map<string, Map<string, StoredCookie>>();
  accept = 'text/html,application/xhtml+xml';

  /** The first cookie of that name, whatever its path. */
  cookie(origin: string, name: string): StoredCookie | undefined {
    return this.cookies(origin).find((c) => c.name === name);
  }

  /** Stores a cookie as if `url` had set it with this Set-Cookie line. */
  setCookie(url: string, line: string): void {
    this.#store(new URL(url), [line]);
  }

  cookies(origin: string): StoredCookie[] {
    return [...(this.#jar.get(origin)?.values() ?? [])];
  }

  #store(url: URL, setCookies: string[]): void {
    const cookies = this.#jar.get(url.origin) ?? new Map<string, StoredCookie>();
    this.#jar.set(url.origin, cookies);
    for (const line of setCookies) {
      const [pair, ...attributes] = line.split(';').map((s) => s.trim());
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const attrs = new Map(
        attributes.map((a) => {
          const i = a.indexOf('=');
          return (i === -1 ? [a.toLowerCase(), ''] : [a.slice(0, i).toLowerCase(), a.slice(i + 1)]) as [string, string];
        }),
      );
      // Browsers ignore a cookie whose name and value together exceed 4096 bytes (RFC 6265bis §5.7).
      if (Buffer.byteLength(pair!) - 1 > MAX_COOKIE_NAME_VALUE_BYTES) continue;
      const cookiePath = attrs.get('path') ?? '/';
      // And a prefixed name set without what its prefix demands (RFC 6265bis §4.1.3, case-insensitive).
      if (/^__(secure|host)-/i.test(name) && !attrs.has('secure')) continue;
      if (/^__host-/i.test(name) && (cookiePath !== '/' || attrs.has('domain'))) continue;
      const key = `${name} ${cookiePath}`;
      if (attrs.get('max-age') === '0') {
        cookies.delete(key);
        continue;
      }
      cookies.set(key, {
        name,
        value: pair!.slice(eq + 1),
        path: cookiePath,
        httpOnly: attrs.has('httponly'),
        sameSite: attrs.get('samesite'),
        secure: attrs.has('secure'),
      });
    }
  }

  #cookieHeader(url: URL): string | undefined {
    const matching = this.cookies(url.origin).filter(
      (c) =>
        url.pathname === c.path ||
        url.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`) ||
        c.path === '/',
    );
    // Longer paths first, as browsers send them (RFC 6265 §5.4).
    const parts = matching.sort((a, b) => b.path.length - a.path.length).map((c) => `${c.name}=${c.value}`);
    return parts.length ? parts.join('; ') : undefined;
  }

  request(
    url: string,
    options: { method?: string; headers?: OutgoingHttpHeaders; body?: string } = {},
  ): Promise<Response> {
    const target = new URL(url);
    const cookie = this.#cookieHeader(target);
    return new Promise((resolve, reject) => {
      const req = http.request(
        target,
        {
          method: options.method ?? 'GET',
          agent: false,
          headers: { accept: this.accept, ...(cookie ? { cookie } : {}), ...options.headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const setCookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
            this.#store(target, setCookies);
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
              url: target.href,
              setCookies,
            });
          });
        },
      );
      req.on('error', reject);
      req.end(options.body);
    });
  }

  /** Follows redirects (GET) until a non-redirect answer; returns every hop. */
  async follow(
    url: string,
    options: { method?: string; headers?: OutgoingHttpHeaders; body?: string } = {},
    maxHops = 15,
  ): Promise<Response[]> {
    const hops: Response[] = [];
    let response = await this.request(url, options);
    hops.push(response);
    while ([301, 302, 303, 307].includes(response.status) && hops.length < maxHops) {
      const next = new URL(response.headers.location!, response.url).href;
      response = await this.request(next);
      hops.push(response);
    }
    return hops;
  }

  /** Submits the first form on a page whose action matches, with these fields. */
  async submitForm(page: Response, actionPattern: RegExp, fields: Record<string, string>): Promise<Response[]> {
    const forms = [...page.body.matchAll(/<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/g)];
    const form = forms.find((f) => actionPattern.test(f[1]!.replace(/&amp;/g, '&')));
    if (!form) throw new Error(`no form matching ${actionPattern} in ${page.url}`);
    const hidden = Object.fromEntries(
      [...form[2]!.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)].map((m) => [
        m[1]!,
        decodeEntities(m[2]!),
      ]),
    );
    const action = new URL(form[1]!.replace(/&amp;/g, '&'), page.url).href;
    return this.follow(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...hidden, ...fields }).toString(),
    });
  }
}
