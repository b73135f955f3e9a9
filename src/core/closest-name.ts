// "Did you mean": the known name a mistyped one most likely meant, for flags and configuration
// keys. Close means a small edit distance for its length (fastest-levenshtein), or the same
// letters in another case: `excludedPath` → `excludedPaths`, `--prot` → `--port`.
import { distance } from 'fastest-levenshtein';

/** The known name closest to `typed`, when one is close enough to be what was meant. */
export function closestName(typed: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  const lower = typed.toLowerCase();
  for (const name of known) {
    if (name.toLowerCase() === lower) return name;
    const d = distance(lower, name.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  // Two edits (a swapped pair of letters is two), or a third of a longer name, three at most:
  // closer than chance for names of a flag's or a key's length.
  const allowed = Math.min(3, Math.max(2, Math.floor(typed.length / 3)));
  return bestDistance <= allowed ? best : undefined;
}

/** ` (did you mean "x"?)`, or nothing. */
export function didYouMean(
  typed: string,
  known: Iterable<string>,
  quote: (name: string) => string = (name) => `"${name}"`,
): string {
  const name = closestName(typed, known);
  return name === undefined ? '' : ` (did you mean ${quote(name)}?)`;
}
