// gatehouse.authorization and Easy Auth's directory policy, resolved into the
// rules the core judges callers by; every rule that would let in nobody, or
// names what is not there, is a problem that says what to fix.
import { didYouMean } from '../closest-name.js';
import type { AccessRule } from '../authorization/access-rule.js';
import type { AllowEntry, ClaimCondition } from '../authorization/allow-entry.js';
import { claimPath } from '../authorization/claim-values.js';
import { DEFAULT_CLAIM_SOURCES, type ClaimSources } from '../authorization/claims-access.js';
import { asciiLowerCase } from '../authorization/email-domain.js';
import { pathRule, type PathRule } from '../authorization/path-rule.js';
import { DEFAULT_GRAPH_ENDPOINT, DEFAULT_GRAPH_MAX_PAGES } from '../providers/graph-groups.js';
import { OPEN_POLICY, type AuthorizationPolicy } from '../authorization/policy.js';
import type { AllowEntrySettings, AuthorizationSettings } from './authorization-schema.js';
import { providerAliasNamed, type ProviderConfig } from './provider-settings.js';

const ROOT = 'gatehouse.authorization';
const DIRECTORY = 'identityProviders.azureActiveDirectory.validation';

/** The scope GitHub needs to tell a user's organisations and teams. */
export const GITHUB_ORGANISATION_SCOPE = 'read:org';

export interface ResolvedAuthorization {
  readonly policy: AuthorizationPolicy;
  /** The providers, with where their groups come from (claim sources, GitHub's organisation lookup). */
  readonly providers: Map<string, ProviderConfig>;
}

/** Which providers tell groups and roles, and how. */
function tellsGroups(kind: ProviderConfig['kind']): boolean {
  return kind !== 'facebook' && kind !== 'twitter';
}

class Resolver {
  /** Whether some entry asks a GitHub caller for a group (the lookup is made only then). */
  githubGroups = false;

  constructor(
    private readonly providers: ReadonlyMap<string, ProviderConfig>,
    private readonly problems: string[],
  ) {}

  rule(name: string, path: string, allow: readonly AllowEntrySettings[]): AccessRule | undefined {
    if (allow.length === 0) {
      this.problems.push(
        `${path}.allow: an empty list lets in nobody; list who may get in (an entry {"signedIn": true} lets in every signed-in user)`,
      );
      return undefined;
    }
    const entries = allow.map((entry, i) => this.entry(`${path}.allow.${i}`, entry));
    if (entries.some((entry) => entry === undefined)) return undefined;
    return { name, allow: entries as AllowEntry[] };
  }

  entry(path: string, settings: AllowEntrySettings): AllowEntry | undefined {
    const before = this.problems.length;
    let provider: string | undefined;
    if (settings.provider !== undefined) {
      provider = providerAliasNamed(settings.provider, this.providers);
      if (provider === undefined)
        this.problems.push(
          `${path}.provider: ${JSON.stringify(settings.provider)} is not an enabled provider (${[...this.providers.keys()].join(', ') || 'none enabled'})${didYouMean(settings.provider, this.providers.keys())}`,
        );
    }
    const lists: Array<[keyof AllowEntrySettings, readonly string[] | undefined]> = [
      ['emails', settings.emails],
      ['subjects', settings.subjects],
      ['names', settings.names],
      ['emailDomains', settings.emailDomains],
      ['groups', settings.groups],
      ['roles', settings.roles],
      ['applications', settings.applications],
      ['scopes', settings.scopes],
      ...Object.entries(settings.claims ?? {}).map(
        ([claim, accepted]) =>
          [`claims.${claim}` as keyof AllowEntrySettings, accepted] as [keyof AllowEntrySettings, string[]],
      ),
    ];
    const named = lists.filter(([, list]) => list !== undefined);
    for (const [key, list] of named)
      if (list!.length === 0)
        this.problems.push(`${path}.${key}: an empty list lets in nobody; list who may get in, or remove the key`);
    if (named.length === 0 && settings.signedIn !== true)
      this.problems.push(
        `${path}: names no condition, so it would let in every signed-in user${provider !== undefined ? ` of ${provider}` : ''}; add one (emails, emailDomains, groups, roles, claims...), or say {"signedIn": true} if that is meant`,
      );
    const config = provider === undefined ? undefined : this.providers.get(provider);
    if (
      config !== undefined &&
      !tellsGroups(config.kind) &&
      (settings.groups !== undefined || settings.roles !== undefined)
    )
      this.problems.push(
        `${path}: ${provider} tells no groups or roles, so this entry lets in nobody; allow its users by subjects or names (it does not say whether an address is verified)`,
      );
    if ((provider === undefined || config?.kind === 'github') && settings.groups !== undefined)
      this.githubGroups ||= [...this.providers.values()].some((p) => p.kind === 'github');
    if (this.problems.length > before) return undefined;
    const set = (list: readonly string[] | undefined, fold = false) =>
      list === undefined ? undefined : new Set(fold ? list.map(asciiLowerCase) : list);
    const claims: ClaimCondition[] | undefined =
      settings.claims === undefined
        ? undefined
        : Object.entries(settings.claims).map(([name, accepted]) => ({
            name,
            path: claimPath(name),
            values: new Set(accepted),
          }));
    const entry: Record<string, unknown> = {
      provider,
      emails: set(settings.emails, true),
      subjects: set(settings.subjects),
      names: set(settings.names, true),
      emailDomains: set(settings.emailDomains, true),
      groups: set(settings.groups),
      roles: set(settings.roles),
      claims,
      applications: set(settings.applications),
      scopes: set(settings.scopes),
    };
    for (const key of Object.keys(entry)) if (entry[key] === undefined) delete entry[key];
    return entry as AllowEntry;
  }

  claimSources(settings: AuthorizationSettings['claimSources']): Map<string, ClaimSources> {
    const sources = new Map<string, ClaimSources>();
    for (const [alias, given] of Object.entries(settings ?? {})) {
      const path = `${ROOT}.claimSources.${alias}`;
      const named = providerAliasNamed(alias, this.providers);
      const config = named === undefined ? undefined : this.providers.get(named);
      if (config === undefined) {
        this.problems.push(
          `${path}: ${JSON.stringify(alias)} is not an enabled provider (${[...this.providers.keys()].join(', ') || 'none enabled'})${didYouMean(alias, this.providers.keys())}`,
        );
        continue;
      }
      if (config.kind === 'github') {
        this.problems.push(
          `${path}: github's groups are its organisations and teams (GitHub's API, the ${GITHUB_ORGANISATION_SCOPE} scope), not claims; remove this source`,
        );
        continue;
      }
      if (config.kind === 'facebook' || config.kind === 'twitter') {
        this.problems.push(`${path}: ${config.alias} tells no groups or roles; remove this source`);
        continue;
      }
      const { graph, ...claims } = given;
      if (graph !== undefined && config.kind !== 'aad') {
        this.problems.push(
          `${path}.graph: only Microsoft's directory (azureActiveDirectory) refers to Microsoft Graph for its groups; remove it`,
        );
        continue;
      }
      sources.set(config.alias, {
        ...DEFAULT_CLAIM_SOURCES,
        ...claims,
        ...(graph !== undefined
          ? {
              graph: {
                endpoint: graph.endpoint ?? DEFAULT_GRAPH_ENDPOINT,
                maxPages: graph.maxPages ?? DEFAULT_GRAPH_MAX_PAGES,
              },
            }
          : {}),
      });
    }
    return sources;
  }

  /**
   * Easy Auth's directory policy: `allowedPrincipals` (the user's `oid` listed, or a group of it
   * held) and `jwtClaimChecks.allowedGroups` (a group held), for every caller of the directory.
   */
  directoryGates(directory: ProviderConfig | undefined): AccessRule[] {
    if (directory?.kind !== 'aad' || directory.directory === undefined) return [];
    const { principalIdentities, allowedGroups, requiredGroups } = directory.directory;
    const gates: AccessRule[] = [];
    if ((allowedGroups ?? []).length > 0) {
      gates.push({
        name: `${DIRECTORY}.defaultAuthorizationPolicy.allowedPrincipals`,
        allow: [
          ...((principalIdentities ?? []).length > 0 ? [{ subjects: new Set(principalIdentities) }] : []),
          { groups: new Set(allowedGroups) },
        ],
      });
    }
    if ((requiredGroups ?? []).length > 0)
      gates.push({ name: `${DIRECTORY}.jwtClaimChecks.allowedGroups`, allow: [{ groups: new Set(requiredGroups) }] });
    return gates;
  }
}

/** The providers as the rules need them, and the policy; problems are pushed to `problems`. */
export function resolveAuthorization(
  settings: AuthorizationSettings | undefined,
  providers: Map<string, ProviderConfig>,
  problems: string[],
  githubScopesConfigured: boolean,
): ResolvedAuthorization {
  const resolver = new Resolver(providers, problems);
  const gates = new Map<string, readonly AccessRule[]>();
  const directoryGates = resolver.directoryGates(providers.get('aad'));
  if (directoryGates.length > 0) gates.set('aad', directoryGates);
  const fallback =
    settings?.default === undefined ? undefined : resolver.rule('default', `${ROOT}.default`, settings.default.allow);
  const paths: PathRule[] = [];
  for (const [i, given] of (settings?.paths ?? []).entries()) {
    const rule = resolver.rule(`paths.${i}`, `${ROOT}.paths.${i}`, given.allow);
    if (rule !== undefined) paths.push(pathRule(given.path, given.methods, rule));
  }
  const sources = resolver.claimSources(settings?.claimSources);
  const resolved = new Map<string, ProviderConfig>();
  for (const [alias, config] of providers) {
    if (config.kind === 'github') {
      const lookUp = resolver.githubGroups;
      if (lookUp && githubScopesConfigured && !config.scopes.includes(GITHUB_ORGANISATION_SCOPE))
        problems.push(
          `identityProviders.gitHub.login.scopes: a rule allows by group, and GitHub tells a user's organisations and teams only with the ${GITHUB_ORGANISATION_SCOPE} scope; add "${GITHUB_ORGANISATION_SCOPE}"`,
        );
      resolved.set(
        alias,
        lookUp
          ? {
              ...config,
              scopes: config.scopes.includes(GITHUB_ORGANISATION_SCOPE)
                ? config.scopes
                : [...config.scopes, GITHUB_ORGANISATION_SCOPE],
              organisations: true,
            }
          : config,
      );
    } else if (config.kind !== 'facebook' && config.kind !== 'twitter') {
      const source = sources.get(alias);
      resolved.set(alias, source === undefined ? config : { ...config, claimSources: source });
    } else resolved.set(alias, config);
  }
  const policy =
    gates.size === 0 && paths.length === 0 && fallback === undefined ? OPEN_POLICY : { gates, paths, fallback };
  return { policy, providers: resolved };
}
