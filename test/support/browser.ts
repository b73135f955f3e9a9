// A minimal cookie-keeping HTTP client that follows redirects one hop at a
// time, like a browser without JavaScript. Enough to drive a real OIDC login.
import http, { type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';

interface StoredCookie {
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
  return text.replace(/&(?:quot|amp|lt|gt|#39|#x27|#34);/g, (entity) => ({ '&quot;': '"', '&amp;': '&', '&lt;': '<', '&gt;': '>', '&#39;': "'", '&#x27;': "'", '&#34;': '"' })[entity]!);
}

export class Browser {
  /** origin → cookie name → cookie */
  readonly jar = new Map<string, Map<string, StoredCookie>>();
  accept = 'text/html,application/xhtml+xml';

  cookie(origin: string, name: string): StoredCookie | undefined {
    return this.jar.get(origin)?.get(name);
  }

  #store(url: URL, setCookies: string[]): void {
    const cookies = this.jar.get(url.origin) ?? new Map<string, StoredCookie>();
    this.jar.set(url.origin, cookies);
    for (const line of setCookies) {
      const [pair, ...attributes] = line.split(';').map((s) => s.trim());
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const attrs = new Map(attributes.map((a) => {
        const i = a.indexOf('=');
        return (i === -1 ? [a.toLowerCase(), ''] : [a.slice(0, i).toLowerCase(), a.slice(i + 1)]) as [string, string];
      }));
      if (attrs.get('max-age') === '0') {
        cookies.delete(name);
        continue;
      }
      cookies.set(name, { value: pair!.slice(eq + 1), path: attrs.get('path') ?? '/', httpOnly: attrs.has('httponly'), sameSite: attrs.get('samesite'), secure: attrs.has('secure') });
    }
  }

  #cookieHeader(url: URL): string | undefined {
    const cookies = this.jar.get(url.origin);
    if (!cookies) return undefined;
    const parts = [...cookies].filter(([, c]) => url.pathname === c.path || url.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`) || c.path === '/').map(([n, c]) => `${n}=${c.value}`);
    return parts.length ? parts.join('; ') : undefined;
  }

  request(url: string, options: { method?: string; headers?: OutgoingHttpHeaders; body?: string } = {}): Promise<Response> {
    const target = new URL(url);
    const cookie = this.#cookieHeader(target);
    return new Promise((resolve, reject) => {
      const req = http.request(
        target,
        { method: options.method ?? 'GET', agent: false, headers: { accept: this.accept, ...(cookie ? { cookie } : {}), ...options.headers } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const setCookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
            this.#store(target, setCookies);
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), url: target.href, setCookies });
          });
        },
      );
      req.on('error', reject);
      req.end(options.body);
    });
  }

  /** Follows redirects (GET) until a non-redirect answer; returns every hop. */
  async follow(url: string, options: { method?: string; headers?: OutgoingHttpHeaders; body?: string } = {}, maxHops = 15): Promise<Response[]> {
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
    const hidden = Object.fromEntries([...form[2]!.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)].map((m) => [m[1]!, decodeEntities(m[2]!)]));
    const action = new URL(form[1]!.replace(/&amp;/g, '&'), page.url).href;
    return this.follow(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...hidden, ...fields }).toString(),
    });
  }
}
