// gatehouse.authorization: who may get in, per path (docs/configuration.md, "Who may get in").
import { z } from 'zod';

import { emailDomainProblem } from '../authorization/email-domain.js';
import { MAX_CLAIM_DEPTH } from '../authorization/claim-values.js';
import { excludedPathProblem } from '../excluded-paths.js';

const value = z.string().min(1, 'expected a non-empty value');
const values = z.array(value);

/** A claim's name, dotted into nested objects: `groups`, `realm_access.roles`. */
export const claimName = z
  .string()
  .regex(/^[^.\s]+(?:\.[^.\s]+)*$/, 'expected a claim name, dotted into nested claims ("realm_access.roles")')
  .refine((name) => name.split('.').length <= MAX_CLAIM_DEPTH, `expected at most ${MAX_CLAIM_DEPTH} dotted parts`);

const allowEntry = z.strictObject({
  /** Only callers of this provider (its alias or built-in key). */
  provider: z.string().min(1).optional(),
  /** An entry with no condition: every signed-in caller (said so, never by accident). */
  signedIn: z.literal(true, { error: 'expected true (or leave it out)' }).optional(),
  emails: values.optional(),
  subjects: values.optional(),
  names: values.optional(),
  emailDomains: z
    .array(
      z.string().superRefine((domain, context) => {
        const problem = emailDomainProblem(domain);
        if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
      }),
    )
    .optional(),
  groups: values.optional(),
  roles: values.optional(),
  /** Claim name → accepted values (a string claim equal to one, or an array claim holding one). */
  claims: z.record(claimName, values).optional(),
  applications: values.optional(),
  scopes: values.optional(),
});

export type AllowEntrySettings = z.infer<typeof allowEntry>;

const httpMethod = z.string().regex(/^[A-Za-z]+$/, 'expected an HTTP method such as "GET"');

const pathRule = z.strictObject({
  path: z.string().superRefine((source, context) => {
    const problem = excludedPathProblem(source);
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
  }),
  /** The methods the rule is for (GET covers HEAD); absent: every method. */
  methods: z.array(httpMethod).min(1, 'expected at least one method (or leave "methods" out: every method)').optional(),
  allow: z.array(allowEntry),
});

/** The directory's group overage looked up in Microsoft Graph (docs/configuration.md, "Where groups and roles come from"). */
const graphLookup = z.strictObject({
  /** Graph's origin; a national cloud's, or a stand-in's in tests. */
  endpoint: z
    .url({ protocol: /^https?$/, error: 'expected an http(s) URL such as https://graph.microsoft.com' })
    .refine((url) => new URL(url).pathname === '/' && new URL(url).search === '', {
      error: 'expected an origin only (https://graph.microsoft.com), without a path or query: gatehouse adds /v1.0/…',
    })
    .optional(),
  /** Pages of up to 999 memberships read at most; more, and the groups stay unknown. */
  maxPages: z.number().int().min(1).max(100).optional(),
});

const providerAlias = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'expected a provider alias');

export const authorizationSchema = z.strictObject({
  /** Per OpenID provider: the claims its groups and roles are read from. */
  claimSources: z
    .record(
      providerAlias,
      z.strictObject({ groups: claimName.optional(), roles: claimName.optional(), graph: graphLookup.optional() }),
    )
    .optional(),
  /** The rule for requests no path rule fits (absent: any signed-in user). */
  default: z.strictObject({ allow: z.array(allowEntry) }).optional(),
  paths: z.array(pathRule).optional(),
});

export type AuthorizationSettings = z.infer<typeof authorizationSchema>;
