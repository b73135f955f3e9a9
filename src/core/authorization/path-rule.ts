// Which rule a request's path and method fall under. Path rules are written
// as excludedPaths are (an absolute path, or one ending in `/*` for everything
// below it) and tried in order; the first that fits decides. Where excluded
// paths match narrowly (a spelling they do not recognise stays protected), a
// restriction matches broadly: without regard to case, percent-escapes decoded,
// Unicode compatibility forms folded, one trailing "/" ignored; and a path that
// cannot be read unambiguously falls under every rule at once.
import { canonicalPath, parseExcludedPaths } from '../excluded-paths.js';
import type { AccessRule } from './access-rule.js';
import { asciiLowerCase } from './email-domain.js';

export interface PathRule {
  /** As configured (`/admin/*`). */
  readonly source: string;
  /** Folded as request paths are folded (see `foldedPath`). */
  readonly path: string;
  readonly prefix: boolean;
  /** Upper case; undefined: every method. GET covers HEAD. */
  readonly methods: ReadonlySet<string> | undefined;
  readonly rule: AccessRule;
}

/**
 * A request path as restrictions compare it: decoded, NFKC-folded where not ASCII, lower case, dots
 * and blanks at the end of a segment off (Windows and IIS open `/admin./x` and `/admin%20/x` as
 * `/admin/x`), one trailing "/" off.
 */
function foldedPath(decoded: string): string {
  const lower = /[^\u0000-\u007f]/.test(decoded) ? decoded.normalize('NFKC').toLowerCase() : asciiLowerCase(decoded);
  const folded = /[. ](?:\/|$)/.test(lower) ? lower.replace(/[. ]+(?=\/|$)/g, '') : lower;
  return folded.length > 1 && folded.endsWith('/') ? folded.slice(0, -1) : folded;
}

/**
 * Printable ASCII with nothing canonicalPath would decode or refuse (escapes, `;`, `?`, `#`,
 * backslashes, dot segments, empty segments, a segment ending in a dot): such a path is its own
 * decoded form, and most are.
 */
const PLAIN_PATH = /^(?!.*(?:\/\/|\/\.|\.\/|\.$))[\x21-\x22\x24\x26-\x3a\x3c-\x3e\x40-\x5b\x5d-\x7e]*$/;

/** The decoded path, or null when it cannot be read unambiguously: canonicalPath's answer, quicker for a plain path. */
export function decodedPath(rawPath: string): string | null {
  return rawPath.startsWith('/') && PLAIN_PATH.test(rawPath) ? rawPath : canonicalPath(rawPath);
}

/** A path rule from its configuration (its path checked as an excluded path's is: the schema reports problems). */
export function pathRule(source: string, methods: readonly string[] | undefined, rule: AccessRule): PathRule {
  const [parsed] = parseExcludedPaths([source]);
  return {
    source,
    path: foldedPath(parsed!.path),
    prefix: parsed!.prefix,
    methods: methods === undefined ? undefined : new Set(methods.map((m) => m.toUpperCase())),
    rule,
  };
}

function methodFits(rule: PathRule, method: string): boolean {
  if (rule.methods === undefined) return true;
  const upper = method.toUpperCase();
  return rule.methods.has(upper) || (upper === 'HEAD' && rule.methods.has('GET'));
}

function pathFits(rule: PathRule, path: string): boolean {
  if (rule.prefix) return rule.path === '/' || path === rule.path || path.startsWith(`${rule.path}/`);
  return path === rule.path;
}

/**
 * The rules a request falls under: the first path rule that fits, else the default (when one is
 * configured); every path rule and the default when its path is not canonical.
 */
export function rulesFor(
  paths: readonly PathRule[],
  fallback: AccessRule | undefined,
  method: string,
  rawPath: string,
): readonly AccessRule[] {
  if (paths.length === 0) return fallback === undefined ? [] : [fallback];
  const decoded = decodedPath(rawPath);
  if (decoded === null) {
    const all = paths.map((p) => p.rule);
    return fallback === undefined ? all : [...all, fallback];
  }
  const path = foldedPath(decoded);
  for (const rule of paths) if (methodFits(rule, method) && pathFits(rule, path)) return [rule.rule];
  return fallback === undefined ? [] : [fallback];
}
