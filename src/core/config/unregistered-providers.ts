// App Service's own exports list every built-in provider, registered or not:
// `"google": {"enabled": true, "login": {}, "registration": {}}`. Easy Auth offers only the ones
// with a registration, and so does gatehouse: such a block is left out, with a warning. Read as
// written, each was a list of "clientId: expected string" errors and the export could not be used.
// A block with part of a registration is still checked in full: its gaps are errors.
import { isJsonObject } from './json-object.js';
import { BUILT_IN_PROVIDERS } from './provider-settings.js';

/** No registration, or one with nothing in it (App Service writes `{}`; null or empty values count as nothing). */
function unregistered(block: Record<string, unknown>): boolean {
  const registration = block.registration;
  if (registration === undefined || registration === null) return true;
  return isJsonObject(registration) && Object.values(registration).every((value) => value === null || value === '');
}

/** `document` without its unregistered built-in provider blocks, and a warning for each enabled one left out. */
export function withoutUnregisteredProviders(document: unknown): {
  readonly document: unknown;
  readonly warnings: readonly string[];
} {
  if (!isJsonObject(document) || !isJsonObject(document.identityProviders)) return { document, warnings: [] };
  const providers: Record<string, unknown> = { ...document.identityProviders };
  const warnings: string[] = [];
  for (const key of Object.keys(BUILT_IN_PROVIDERS)) {
    const block = providers[key];
    if (!isJsonObject(block) || !unregistered(block)) continue;
    delete providers[key];
    if (block.enabled !== false) warnings.push(`identityProviders.${key}: no registration, so not enabled`);
  }
  return { document: { ...document, identityProviders: providers }, warnings };
}
