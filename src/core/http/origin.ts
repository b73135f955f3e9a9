// The origin the browser used, for callback URLs and HTTPS checks. Forwarded
// headers count only when httpSettings.forwardProxy says a proxy sets them;
// otherwise a client could pick the host our redirects point to.
import type { AuthConfig } from '../config/auth-config.js';
import { headerValue, type RequestView } from './request-view.js';

export interface Origin {
  readonly scheme: 'http' | 'https';
  readonly host: string;
}

const HOST =
  /^((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?|\[[0-9A-Fa-f:.]+\]))(?::(\d{1,5}))?$/;
const MAX_PORT = 65535;

function firstValue(value: string | undefined): string | undefined {
  const first = value?.split(',')[0]?.trim();
  return first === '' ? undefined : first;
}

/** The request's origin, or null when the host is not a syntactically valid host[:port]. */
export function requestOrigin(request: RequestView, config: Pick<AuthConfig, 'forwardProxy'>): Origin | null {
  let host = request.host;
  let scheme: string = request.scheme;
  const proxy = config.forwardProxy;
  if (proxy.convention === 'Standard') {
    host = firstValue(headerValue(request, 'x-forwarded-host')) ?? host;
    scheme = firstValue(headerValue(request, 'x-forwarded-proto')) ?? scheme;
  } else if (proxy.convention === 'Custom') {
    if (proxy.hostHeader) host = firstValue(headerValue(request, proxy.hostHeader)) ?? host;
    if (proxy.protoHeader) scheme = firstValue(headerValue(request, proxy.protoHeader)) ?? scheme;
  }
  // Consecutive requests nearly always name the same host: the last answer is reused for the same inputs.
  if (host === last.host && scheme === last.scheme) return last.origin;
  const origin = checkedOrigin(scheme, host);
  last = { host, scheme, origin };
  return origin;
}

let last: { readonly host: string; readonly scheme: string; readonly origin: Origin | null } = {
  host: '',
  scheme: '',
  origin: null,
};

function checkedOrigin(rawScheme: string, host: string): Origin | null {
  const scheme = rawScheme.toLowerCase();
  if ((scheme !== 'http' && scheme !== 'https') || host.length > 255) return null;
  const match = HOST.exec(host);
  if (match === null) return null;
  // A port outside 1-65535 is no address a browser could have used: refuse it rather than build callbacks to it.
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > MAX_PORT)) return null;
  // Written as a URL writes it (new URL('https://app.example:0443').host is 'app.example'): the scheme's own port
  // left out, no leading zeros, IPv6 and numeric IPv4 forms shortened. A proxy that sends `Host: app.example:443`
  // (nginx's `$host:$server_port`) must not make the callback URL https://app.example:443/…, which providers compare
  // as text with the registered one. A host the URL parser refuses (`256.1.1.1`, `[1::2::3]`, `1.2.3.4.5`) is none a
  // browser could have used, and no callback URL is built from it.
  try {
    return { scheme, host: new URL(`${scheme}://${host}`).host };
  } catch {
    return null;
  }
}

/** Whether a proxy gatehouse trusts is in front of it (it sets the forwarding headers; their X-Forwarded-For chain is kept). */
export function behindTrustedProxy(config: Pick<AuthConfig, 'forwardProxy'>): boolean {
  return config.forwardProxy.convention !== 'NoProxy';
}

export function originUrl(origin: Origin): string {
  return `${origin.scheme}://${origin.host}`;
}

/**
 * Whether browsers count `host` (an Origin's host: lower case, port optional) as this machine: a
 * page from it is a secure context even over plain http, so it may set `Secure` cookies.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    name === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)
  );
}
