// The domain of a verified e-mail address, as a domain rule compares it:
// everything after the last "@", ASCII letters lower-cased and nothing else
// folded, so no look-alike spelling (a fullwidth "＠", a Cyrillic "а", a
// trailing dot) can pass for the configured domain.

/** A domain as configured: ASCII labels (an internationalized domain in its xn-- form), at least two. */
const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Lower-cases A-Z only: Unicode case folding maps some letters onto ASCII ones (the Kelvin sign onto "k"). */
export function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]/g, (letter) => String.fromCharCode(letter.charCodeAt(0) + 32));
}

/** What is wrong with a configured domain, or undefined when it is a good one. */
export function emailDomainProblem(domain: string): string | undefined {
  if (domain.startsWith('@')) return `${JSON.stringify(domain)}: write the domain without "@" (${domain.slice(1)})`;
  if (!DOMAIN.test(asciiLowerCase(domain)))
    return `${JSON.stringify(domain)} is not a domain name (ASCII letters, digits and "-" in dot-separated labels; an internationalized domain in its xn-- form)`;
  return undefined;
}

/** The domain part of an address, lower-cased; undefined when it has no "@" or nothing after it. */
export function emailDomain(address: string): string | undefined {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return undefined;
  return asciiLowerCase(address.slice(at + 1));
}
