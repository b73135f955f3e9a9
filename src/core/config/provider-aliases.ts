// How providers are named: the built-in providers' keys under identityProviders and their
// aliases (`/.auth/login/<alias>`, `-IDP`), the names gatehouse keeps for its own pages, and how a
// name written in a document or a path finds the enabled provider it means.

/** Each built-in provider's key under identityProviders, and its alias (`/.auth/login/<alias>`, `-IDP`). */
export const BUILT_IN_PROVIDERS = {
  azureActiveDirectory: 'aad',
  google: 'google',
  facebook: 'facebook',
  gitHub: 'github',
  twitter: 'twitter',
  apple: 'apple',
} as const;

/** The aliases of the built-in providers. */
export const BUILT_IN_ALIASES: readonly string[] = Object.values(BUILT_IN_PROVIDERS);

/**
 * Every way to name a built-in provider, lower case, and its alias: its key or its alias. Easy Auth
 * documents name the default provider by either, in any case: `"redirectToProvider": "azureactivedirectory"`
 * is what App Service's own configurations carry.
 */
const BUILT_IN_NAMES: ReadonlyMap<string, string> = new Map(
  Object.entries(BUILT_IN_PROVIDERS).flatMap(([key, alias]) => [
    [key.toLowerCase(), alias],
    [alias, alias],
  ]),
);

type Aliases = ReadonlySet<string> | ReadonlyMap<string, unknown>;

/**
 * The alias of the enabled provider `name` names: an alias as written, else a built-in kind's key or
 * alias in any case, else the alias equal to it but for case. Undefined when none fits.
 */
export function providerAliasNamed(name: string, aliases: Aliases): string | undefined {
  if (aliases.has(name)) return name;
  const builtIn = BUILT_IN_NAMES.get(name.toLowerCase());
  if (builtIn !== undefined) return aliases.has(builtIn) ? builtIn : undefined;
  return aliasIgnoringCase(name, aliases);
}

/** The alias equal to `name` but for case; there is at most one (customProviders refuses aliases that differ only in case). */
export function aliasIgnoringCase(name: string, aliases: Aliases): string | undefined {
  const lower = name.toLowerCase();
  return [...aliases.keys()].find((alias) => alias.toLowerCase() === lower);
}

/** Names under /.auth/login/ that are gatehouse's own pages, so no provider may take them. */
export const RESERVED_ALIASES = ['done'] as const;
