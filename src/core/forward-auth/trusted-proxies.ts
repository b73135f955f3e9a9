// Which peers may ask the verify endpoint: the web servers in front of gatehouse. Their headers
// say what the original request was (its method, path, host and scheme), so whoever may send
// them may make gatehouse judge any request it likes; from any other peer the endpoint answers
// 403 and reads none of them. Loopback by default: the web server on the same machine.
import { BlockList, isIP } from 'node:net';

/** Where the list is read from (`gatehouse serve`), as addresses and CIDR ranges separated by commas. */
export const TRUSTED_PROXIES_VARIABLE = 'GATEHOUSE_TRUSTED_PROXIES';

/** What an unset GATEHOUSE_TRUSTED_PROXIES means: this machine only. */
export const DEFAULT_TRUSTED_PROXIES = 'loopback';

/** Names for ranges a deployment commonly means, so that nobody has to spell them out. */
const NAMED_RANGES: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  // RFC 1918 and RFC 4193: a web server in the same private network (a container network, a VPC).
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

export class TrustedProxiesError extends Error {}

export class TrustedProxies {
  readonly #list: BlockList;
  /** The last address asked about and the answer: the web server in front asks from one address, request after request. */
  #last: { readonly address: string; readonly trusted: boolean } = { address: '', trusted: false };
  /** The entries as configured, for the start-up line and logs. */
  readonly description: string;

  private constructor(list: BlockList, description: string) {
    this.#list = list;
    this.description = description;
  }

  /**
   * The list in `text` (default: loopback): addresses, CIDR ranges and the names `loopback` and
   * `private`, separated by commas. Throws TrustedProxiesError naming the first entry that is none
   * of these: a typo must not leave the endpoint open, or closed, without a word.
   */
  static parse(text: string | undefined = DEFAULT_TRUSTED_PROXIES): TrustedProxies {
    const entries = text
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '');
    if (entries.length === 0) throw new TrustedProxiesError(`${TRUSTED_PROXIES_VARIABLE} names no address (leave it unset for loopback)`);
    const list = new BlockList();
    for (const entry of entries) {
      for (const range of NAMED_RANGES[entry.toLowerCase()] ?? [entry]) addRange(list, range, entry);
    }
    return new TrustedProxies(list, entries.join(', '));
  }

  /** Whether a peer at `address` (a socket's remote address, as node gives it) is one of them. */
  trusts(address: string | undefined): boolean {
    if (address === undefined) return false;
    if (address === this.#last.address) return this.#last.trusted;
    const family = isIP(address);
    // BlockList also finds an IPv4-mapped IPv6 address (::ffff:127.0.0.1) in an IPv4 range.
    const trusted = family !== 0 && this.#list.check(address, family === 4 ? 'ipv4' : 'ipv6');
    this.#last = { address, trusted };
    return trusted;
  }
}

function addRange(list: BlockList, range: string, entry: string): void {
  const slash = range.indexOf('/');
  const address = slash === -1 ? range : range.slice(0, slash);
  const family = isIP(address);
  const problem = `${TRUSTED_PROXIES_VARIABLE}: ${JSON.stringify(entry)} is not an address, a CIDR range (10.0.0.0/8) or one of ${Object.keys(NAMED_RANGES).join(', ')}`;
  if (family === 0) throw new TrustedProxiesError(problem);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (slash === -1) {
    list.addAddress(address, type);
    return;
  }
  const bits = range.slice(slash + 1);
  const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
  if (!(prefix >= 0 && prefix <= (family === 4 ? 32 : 128))) throw new TrustedProxiesError(problem);
  list.addSubnet(address, prefix, type);
}
