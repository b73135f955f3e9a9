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
    if (entries.length === 0)
      throw new TrustedProxiesError(`${TRUSTED_PROXIES_VARIABLE} names no address (leave it unset for loopback)`);
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

/** An IPv4-mapped IPv6 address (::ffff:10.0.0.1), which node shows for IPv4 peers of a dual-stack listener. */
const IPV4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

function addRange(list: BlockList, range: string, entry: string): void {
  const slash = range.indexOf('/');
  const written = slash === -1 ? range : range.slice(0, slash);
  const problem = `${TRUSTED_PROXIES_VARIABLE}: ${JSON.stringify(entry)} is not an address, a CIDR range (10.0.0.0/8) or one of ${Object.keys(NAMED_RANGES).join(', ')}`;
  if (isIP(written) === 0) throw new TrustedProxiesError(problem);
  // Taken as the IPv4 address it maps: its prefix counted in IPv6 bits (::ffff:10.0.0.0/8 is ::/8)
  // would take in every IPv4 peer.
  const mapped = IPV4_MAPPED.exec(written)?.[1];
  const address = mapped ?? written;
  const family = isIP(address);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (slash === -1) {
    list.addAddress(address, type);
    return;
  }
  const bits = range.slice(slash + 1);
  const given = /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
  const prefix = mapped !== undefined ? given - 96 : given;
  if (!(prefix >= 0 && prefix <= (family === 4 ? 32 : 128))) {
    throw new TrustedProxiesError(
      mapped !== undefined
        ? `${TRUSTED_PROXIES_VARIABLE}: ${JSON.stringify(entry)}: an IPv4-mapped range needs a prefix from 96 to 128 (or write ${address}/${Math.max(0, given)} as IPv4)`
        : problem,
    );
  }
  // Bits past the prefix are a typo for another range (10.0.0.5/0 would trust everyone).
  if (family === 4 && hostBits(address, prefix) !== 0) {
    throw new TrustedProxiesError(
      `${TRUSTED_PROXIES_VARIABLE}: ${JSON.stringify(entry)} has address bits past its /${prefix}: write the range's first address`,
    );
  }
  list.addSubnet(address, prefix, type);
}

/** The bits of an IPv4 address past the first `prefix`. */
function hostBits(address: string, prefix: number): number {
  const value = address.split('.').reduce((sum, part) => sum * 256 + Number(part), 0);
  return prefix === 0 ? value : value % 2 ** (32 - prefix);
}
