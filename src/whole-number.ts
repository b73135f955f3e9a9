/**
 * A numeric setting as written: a number as given, a string only when it is decimal digits.
 * NaN otherwise, for the caller to refuse with its own message: `Number()` alone would take
 * "1e3", "0x10", " 60 " and "" (as 0).
 */
export function wholeNumber(value: number | string): number {
  if (typeof value === 'number') return value;
  return /^\d+$/.test(value) ? Number(value) : NaN;
}
