// globalValidation.excludedPaths: paths served without authentication.
//
// A request is anonymous-allowed only when its path is in canonical form and
// matches a rule. Anything a server or proxy might interpret differently
// (dot segments, empty segments, encoded slashes or dots, backslashes,
// `;` parameters, control characters, Unicode look-alikes of those, segments that end in a dot or a
// blank, which Windows trims: IIS and apps that follow its path rules read `/public/.. /admin` as
// `/public/../admin`, that is `/admin`) is never excluded, so no spelling of
// a protected path can slip through an excluded prefix: it stays protected. The part of the path
// a rule names must also arrive spelled as the rule is: some apps route on the path as sent (Express
// does), and would not take `/%70ublic/x` for `/public/x`.

export interface ExcludedPathRule {
  /** The configured text, for logs. */
  readonly source: string;
  readonly path: string;
  /** Trailing `/*`: the path itself and everything below it. */
  readonly prefix: boolean;
  /** `path` as browsers send it (percent-encoded where they must), lower case: escapes' hex digits may be either. */
  readonly sentAs: string;
}

export class ExcludedPathError extends Error {}

// Encoded '/', '\', '.', '%' and ';' change how a path splits into segments.
const ENCODED_STRUCTURE = /%(2f|5c|2e|25|3b|00)/i;

/** A rule's path, and whether a final `/*` extends it to everything below. */
function ruleParts(source: string): { readonly path: string; readonly prefix: boolean } {
  const prefix = source.endsWith('/*');
  return { path: prefix ? source.slice(0, -2) || '/' : source, prefix };
}

/** What is wrong with one configured rule, or undefined when it is a good one. */
export function excludedPathProblem(source: string): string | undefined {
  const { path } = ruleParts(source);
  if (!path.startsWith('/')) return `expected an absolute path starting with "/", got ${JSON.stringify(source)}`;
  if (path.includes('*'))
    return `${JSON.stringify(source)}: "*" is allowed only as a final "/*" (everything below a path)`;
  const canonical = canonicalPath(path);
  if (canonical === null) {
    return `${JSON.stringify(source)} is not a canonical path (no "." or ".." segments, "//", ";", "?", "#", backslashes, control characters, encoded "/", ".", "%", or Unicode look-alikes of them)`;
  }
  // Requests are matched decoded, so a rule is written decoded too.
  if (canonical !== path)
    return `${JSON.stringify(source)} has percent-escapes: write it decoded, as ${JSON.stringify(canonical + source.slice(path.length))}`;
  return undefined;
}

/** Parses configured rules: absolute paths, optionally ending in `/*`. */
export function parseExcludedPaths(rules: readonly string[]): ExcludedPathRule[] {
  return rules.map((source) => {
    const problem = excludedPathProblem(source);
    if (problem !== undefined) throw new ExcludedPathError(`excluded path ${problem}`);
    const parts = ruleParts(source);
    // As a browser writes it (the WHATWG URL parser's path encoding).
    const sentAs = new URL(parts.path, 'http://rule.invalid').pathname.toLowerCase();
    return { source, ...parts, sentAs };
  });
}

/** The characters that decide how a path splits into segments, in order (blanks: where Windows trims one). */
function structure(path: string): string {
  return path.replace(/[^/\\.;%?# ]/g, '');
}

/**
 * Whether Unicode compatibility folding (NFKC) would turn some character into a "/", ".", a
 * backslash or the like: fullwidth "／" and "．", the one-dot leader "․". An app that folds paths before
 * routing would see segments gatehouse did not (`/public/．．／admin`). Accented letters, in
 * either normalization form, fold into letters and are left alone.
 */
function foldsIntoStructure(decoded: string): boolean {
  if (!/[^\u0000-\u007f]/.test(decoded)) return false;
  return structure(decoded.normalize('NFKC')) !== structure(decoded);
}

/** A segment that ends in a dot or a blank: Windows path rules trim them. */
const TRIMMED_BY_WINDOWS = /[. ]$/;

/**
 * The decoded path when `rawPath` (no query, no fragment) is canonical,
 * else null. Percent-escapes of ordinary characters are decoded.
 */
export function canonicalPath(rawPath: string): string | null {
  if (!rawPath.startsWith('/') || ENCODED_STRUCTURE.test(rawPath)) return null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return null;
  }
  if (/[\u0000-\u001f\u007f\\;?#]/.test(decoded)) return null;
  if (foldsIntoStructure(decoded)) return null;
  const segments = decoded.split('/').slice(1);
  // An empty segment is only allowed as the final one (a trailing slash). A segment ending in a dot
  // or a blank ("." and ".." among them) is one Windows reads without them.
  if (segments.some((segment, i) => TRIMMED_BY_WINDOWS.test(segment) || (segment === '' && i !== segments.length - 1)))
    return null;
  return decoded;
}

/** The rule that exempts this request path, or undefined (the path is protected). */
export function matchExcludedPath(rules: readonly ExcludedPathRule[], rawPath: string): ExcludedPathRule | undefined {
  if (rules.length === 0) return undefined;
  const path = canonicalPath(rawPath);
  if (path === null) return undefined;
  return rules.find((rule) => {
    if (rule.prefix && rule.path === '/') return true;
    // Canonical, so its rule part is the request's up to the same '/' (or its end).
    const sent = rawPath.slice(0, rule.sentAs.length + 1).toLowerCase();
    if (!rule.prefix) return path === rule.path && sent === rule.sentAs;
    return (
      (path === rule.path && sent === rule.sentAs) || (path.startsWith(`${rule.path}/`) && sent === `${rule.sentAs}/`)
    );
  });
}
