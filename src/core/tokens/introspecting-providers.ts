// Which providers an opaque bearer token may be asked about: those that introspect
// (configured so, with an introspection endpoint). A provider whose metadata
// cannot be fetched now makes the check unavailable (503), never a refusal.
import { ProviderUnavailableError } from '../providers/errors.js';
import type { Provider } from '../providers/provider.js';

export async function introspectingProviders(
  providers: Iterable<Provider>,
): Promise<{ providers: readonly Provider[]; unavailable: boolean }> {
  const introspecting: Provider[] = [];
  let unavailable = false;
  for (const provider of providers) {
    if (provider.bearer?.introspects === undefined || provider.bearer.introspect === undefined) continue;
    try {
      if (await provider.bearer.introspects()) introspecting.push(provider);
    } catch (error) {
      if (!(error instanceof ProviderUnavailableError)) throw error;
      unavailable = true;
    }
  }
  return { providers: introspecting, unavailable };
}
