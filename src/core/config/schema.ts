// The authsettingsV2 document (Easy-Auth style), as gatehouse reads it.
import { z } from 'zod';

import { excludedPathProblem } from '../excluded-paths.js';
import { clientKeyFields } from './client-key-settings.js';
import { verifyCacheSchema } from '../forward-auth/cache-settings.js';
import { authorizationSchema } from './authorization-schema.js';
import { identityAssertionSchema } from '../assertion/settings.js';
import { jsonPath } from './json-path.js';

/**
 * The longest any duration setting may be: ten years. Every date counted from a setting must be one
 * a cookie's Max-Age, a stored record and a JavaScript Date can hold (a hundred million days is
 * past the last date there is); a session or a grace period longer than this is a mistake.
 */
const LONGEST_DURATION_DAYS = 3650;
const LONGEST_DURATION_MS = LONGEST_DURATION_DAYS * 24 * 3600_000;

/** TimeSpan text: `hh:mm:ss` or `d.hh:mm:ss`, read as .NET reads it for Easy Auth (hours to 23, minutes and seconds to 59). */
export const timeSpan = z
  .string()
  .regex(/^(\d+\.)?([01]?\d|2[0-3]):[0-5]\d:[0-5]\d$/, {
    error: 'expected a time span "hh:mm:ss" or "d.hh:mm:ss" (hours 0-23, minutes and seconds 0-59)',
    abort: true,
  })
  .refine((text) => timeSpanMs(text) > 0, { error: 'expected a positive time span', abort: true })
  .refine(
    (text) => timeSpanMs(text) <= LONGEST_DURATION_MS,
    `expected at most ${LONGEST_DURATION_DAYS}.00:00:00 (ten years)`,
  );

/** A whole or fractional count of `unit`s, from 0 up to ten years. */
function duration(unit: 'hours' | 'seconds', perDay: number) {
  const most = LONGEST_DURATION_DAYS * perDay;
  return z.number().nonnegative().max(most, `expected at most ${most} ${unit} (ten years)`);
}

export function timeSpanMs(text: string): number {
  const match = /^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})$/.exec(text);
  if (!match) return Number.NaN;
  const [, days, hours, minutes, seconds] = match;
  return (((Number(days ?? 0) * 24 + Number(hours)) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1000;
}

const httpUrl = z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' });

const openIdConnectConfiguration = z.object({
  wellKnownOpenIdConfiguration: httpUrl.optional(),
  authorizationEndpoint: httpUrl.optional(),
  tokenEndpoint: httpUrl.optional(),
  issuer: z.string().min(1).optional(),
  certificationUri: httpUrl.optional(),
  endSessionEndpoint: httpUrl.optional(),
});

const scopeToken = z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'expected a scope token');
const nameValue = z.string().regex(/^[^=]+=.*$/, 'expected "name=value"');
/** The name of the environment variable a secret is read from: no `=` or control character can be part of one. */
const settingName = z.string().regex(/^[^=\u0000-\u001f\u007f]+$/, 'expected an environment variable name');
/** Provider endpoint overrides: for enterprise or sovereign installations (and test stand-ins). */
const endpoint = httpUrl.optional();

const loginSettings = z
  .object({
    nameClaimType: z.string().min(1).optional(),
    /** gatehouse's own: add the userinfo endpoint's claims to the ID token's after a sign-in (OpenID providers). */
    claimsFromUserInfo: z.boolean().optional(),
    /** gatehouse's own: push the authorization request first (RFC 9126); default: when the provider requires it. */
    pushedAuthorizationRequests: z.boolean().optional(),
    scopes: z.array(scopeToken).optional(),
    /** `name=value` strings, or an object of names to values. */
    loginParameters: z.union([z.array(nameValue), z.record(z.string(), z.string())]).optional(),
    /** Easy Auth's spelling of the same. */
    loginParameterNames: z.array(nameValue).optional(),
  })
  .optional();

const audienceValidation = z.object({ allowedAudiences: z.array(z.string().min(1)).optional() }).optional();

const customOpenIdConnectProvider = z.object({
  enabled: z.boolean().default(true),
  registration: z.object({
    clientId: z.string().min(1, 'clientId must not be empty'),
    clientCredential: z
      .object({
        /** Easy Auth's one method: the secret in the token request's body instead of a Basic header. */
        method: z.enum(['ClientSecretPost']).optional(),
        clientSecretSettingName: settingName.optional(),
        /** gatehouse's own: a private key instead of a secret (private_key_jwt). */
        ...clientKeyFields,
      })
      .optional(),
    /** gatehouse's own: tokens bound to a key per session (DPoP, RFC 9449). */
    proofOfPossession: z.enum(['DPoP']).optional(),
    openIdConnectConfiguration,
  }),
  login: loginSettings,
  validation: z
    .object({
      allowedAudiences: z.array(z.string().min(1)).optional(),
      /** gatehouse's own: opaque bearer tokens checked at the provider (config/introspection-settings.ts). */
      introspection: z
        .object({ enabled: z.boolean().optional(), endpoint: httpUrl.optional(), cacheDuration: timeSpan.optional() })
        .optional(),
    })
    .optional(),
});

const azureActiveDirectory = z.object({
  enabled: z.boolean().default(true),
  registration: z.object({
    /** `https://login.microsoftonline.com/<tenant>/v2.0`; `common`, `organizations` or `consumers` for multi-tenant apps. */
    openIdIssuer: httpUrl,
    clientId: z.string().min(1, 'clientId must not be empty'),
    clientSecretSettingName: settingName.optional(),
    /** Easy Auth's certificate credential: the SHA-1 thumbprint of the certificate below, checked against it. */
    clientSecretCertificateThumbprint: z
      .string()
      .regex(/^[0-9A-Fa-f]{40}$/, 'expected a SHA-1 thumbprint of 40 hexadecimal digits')
      .optional(),
    /** gatehouse's own: the certificate's private key and the certificate (private_key_jwt). */
    clientCredential: z.object(clientKeyFields).optional(),
  }),
  login: loginSettings,
  validation: z
    .object({
      allowedAudiences: z.array(z.string().min(1)).optional(),
      defaultAuthorizationPolicy: z
        .object({
          allowedApplications: z.array(z.string().min(1)).optional(),
          allowedPrincipals: z
            .object({
              identities: z.array(z.string().min(1)).optional(),
              groups: z.array(z.string().min(1)).optional(),
            })
            .optional(),
        })
        .optional(),
      /** Multi-tenant apps: the tenants (`tid`) allowed to sign in; absent means any. */
      allowedTenants: z.array(z.string().min(1)).optional(),
      /** Groups every caller must be in; client applications bearer tokens must come from. */
      jwtClaimChecks: z
        .object({
          allowedGroups: z.array(z.string()).optional(),
          allowedClientApplications: z.array(z.string()).optional(),
        })
        .optional(),
    })
    .optional(),
});

const google = z.object({
  enabled: z.boolean().default(true),
  registration: z.object({
    clientId: z.string().min(1, 'clientId must not be empty'),
    clientSecretSettingName: settingName,
  }),
  login: loginSettings,
  validation: audienceValidation,
  /** Default https://accounts.google.com/.well-known/openid-configuration. */
  wellKnownOpenIdConfiguration: endpoint,
});

const facebook = z.object({
  enabled: z.boolean().default(true),
  registration: z.object({ appId: z.string().min(1, 'appId must not be empty'), appSecretSettingName: settingName }),
  /** Graph API version, such as "v19.0". */
  graphApiVersion: z
    .string()
    .regex(/^v\d+\.\d+$/, 'expected a Graph API version such as "v19.0"')
    .optional(),
  login: z.object({ scopes: z.array(scopeToken).optional() }).optional(),
  endpoints: z.object({ authorization: endpoint, graph: endpoint }).optional(),
});

const gitHub = z.object({
  enabled: z.boolean().default(true),
  registration: z.object({
    clientId: z.string().min(1, 'clientId must not be empty'),
    clientSecretSettingName: settingName,
  }),
  login: z.object({ scopes: z.array(scopeToken).optional() }).optional(),
  /** GitHub Enterprise Server: its web origin and API base (`https://host/api/v3`). */
  endpoints: z.object({ web: endpoint, api: endpoint }).optional(),
});

const twitter = z.object({
  enabled: z.boolean().default(true),
  registration: z.object({
    consumerKey: z.string().min(1, 'consumerKey must not be empty'),
    consumerSecretSettingName: settingName,
  }),
  endpoints: z.object({ api: endpoint }).optional(),
});

const apple = z.object({
  enabled: z.boolean().default(true),
  registration: z.object({
    /** The Services ID. */
    clientId: z.string().min(1, 'clientId must not be empty'),
    /** A ready-made client-secret JWT (renewed by hand); or let gatehouse sign one from the key below. */
    clientSecretSettingName: settingName.optional(),
    teamId: z.string().min(1).optional(),
    keyId: z.string().min(1).optional(),
    /** Environment variable holding the Sign in with Apple private key (PKCS#8 PEM). */
    privateKeySettingName: settingName.optional(),
  }),
  login: z.object({ scopes: z.array(scopeToken).optional() }).optional(),
  /** Default https://appleid.apple.com/.well-known/openid-configuration. */
  wellKnownOpenIdConfiguration: endpoint,
});

export const authSettingsSchema = z.object({
  platform: z.object({ enabled: z.boolean().default(true), runtimeVersion: z.string().optional() }).optional(),
  globalValidation: z
    .object({
      requireAuthentication: z.boolean().optional(),
      unauthenticatedClientAction: z
        .enum(['RedirectToLoginPage', 'AllowAnonymous', 'Return401', 'Return403', 'RejectWith401', 'RejectWith404'])
        .optional(),
      redirectToProvider: z.string().min(1).optional(),
      excludedPaths: z
        .array(
          z.string().superRefine((source, context) => {
            const problem = excludedPathProblem(source);
            if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
          }),
        )
        .optional(),
    })
    .optional(),
  httpSettings: z
    .object({
      requireHttps: z.boolean().optional(),
      routes: z
        .object({
          apiPrefix: z
            .string()
            .regex(/^\/[A-Za-z0-9._~/-]*[A-Za-z0-9._~-]$/, 'expected a path such as "/.auth"')
            .optional(),
        })
        .optional(),
      forwardProxy: z
        .object({
          convention: z.enum(['NoProxy', 'Standard', 'Custom']).optional(),
          customHostHeaderName: z
            .string()
            .regex(/^[A-Za-z0-9-]+$/, 'expected a header name')
            .optional(),
          customProtoHeaderName: z
            .string()
            .regex(/^[A-Za-z0-9-]+$/, 'expected a header name')
            .optional(),
        })
        .refine(
          (proxy) => proxy.convention !== 'Custom' || proxy.customHostHeaderName || proxy.customProtoHeaderName,
          'convention Custom needs customHostHeaderName and/or customProtoHeaderName',
        )
        .optional(),
    })
    .optional(),
  login: z
    .object({
      tokenStore: z
        .object({
          enabled: z.boolean().optional(),
          tokenRefreshExtensionHours: duration('hours', 24).optional(),
          // App Service writes `"fileSystem": {}`: the default directory.
          fileSystem: z.object({ directory: z.string().min(1).optional() }).optional(),
        })
        .optional(),
      allowedExternalRedirectUrls: z.array(httpUrl).optional(),
      cookieExpiration: z
        .object({
          convention: z.enum(['FixedTime', 'IdentityProviderDerived']).optional(),
          timeToExpiration: timeSpan.optional(),
          /** gatehouse's own: a session unused for this long needs a new sign-in (session/activity.ts). */
          inactivityTimeout: timeSpan
            .refine((text) => timeSpanMs(text) >= 60_000, 'expected at least 00:01:00')
            .optional(),
        })
        .optional(),
      nonce: z
        .object({ validateNonce: z.boolean().optional(), nonceExpirationInterval: timeSpan.optional() })
        .optional(),
      preserveUrlFragmentsForLogins: z.boolean().optional(),
    })
    .optional(),
  identityProviders: z
    .object({
      azureActiveDirectory: azureActiveDirectory.optional(),
      google: google.optional(),
      facebook: facebook.optional(),
      gitHub: gitHub.optional(),
      twitter: twitter.optional(),
      apple: apple.optional(),
      customOpenIdConnectProviders: z
        .record(
          z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'expected a provider alias of letters, digits, "-" and "_"'),
          customOpenIdConnectProvider,
        )
        .optional(),
    })
    .optional(),
  /** gatehouse's own settings. */
  gatehouse: z
    .object({
      /** App scope of sessions and token-store records (part of the key derivation's input, which is bounded). */
      app: z
        .string()
        .regex(/^[^\u0000-\u001f\u007f]{1,200}$/, 'expected a name of 1 to 200 characters, none a control character')
        .optional(),
      headerPrefix: z
        .string()
        .regex(/^[A-Za-z0-9-_]+-$/, 'expected a header prefix ending in "-", such as "X-PLATFORM-"')
        .optional(),
      sessionCookieName: z
        .string()
        .regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, 'expected a cookie name')
        .optional(),
      /** Refresh implicitly when the access token expires within this many seconds. */
      refreshWindowSeconds: duration('seconds', 24 * 3600)
        .int()
        .optional(),
      /** Forward CORS preflights (OPTIONS with Origin and Access-Control-Request-Method) on protected paths to the app, anonymously. */
      forwardCorsPreflights: z.boolean().optional(),
      /** Let a web server keep the verify endpoint's allowed answers for a session (`{}`: 1 s). */
      verifyCache: verifyCacheSchema.optional(),
      /** Who may get in: rules by user, domain, group, role and claim, per path. */
      authorization: authorizationSchema.optional(),
      /** A signed identity assertion header on every forwarded request with an identity (`{}`: the defaults). */
      identityAssertion: identityAssertionSchema.optional(),
    })
    .optional(),
});

export type AuthSettingsDocument = z.infer<typeof authSettingsSchema>;

interface Def {
  type: string;
  shape?: Record<string, { _zod: { def: Def } }>;
  innerType?: { _zod: { def: Def } };
  valueType?: { _zod: { def: Def } };
  element?: { _zod: { def: Def } };
  options?: Array<{ _zod: { def: Def } }>;
}

/**
 * JSON paths of keys the schema does not know (they are ignored, and warned about). A document's
 * keys are looked up as own properties only: `constructor` or `toString` is an unknown key like
 * any other, not Object.prototype's member. `__proto__` (JSON.parse makes it an ordinary key)
 * is dropped by the schema wherever it stands, provider aliases included, so it is reported too.
 */
export interface UnknownKey {
  /** Where it stands, as problems name places. */
  readonly path: string;
  readonly key: string;
  /** The keys its object does know (for "did you mean"). */
  readonly known: readonly string[];
}

export function unknownKeys(
  value: unknown,
  def: Def = (authSettingsSchema as unknown as { _zod: { def: Def } })._zod.def,
  path: readonly string[] = [],
): UnknownKey[] {
  if (def.innerType) return unknownKeys(value, def.innerType._zod.def, path);
  if (typeof value !== 'object' || value === null) return [];
  if (def.type === 'object' && def.shape && !Array.isArray(value)) {
    const shape = def.shape;
    return Object.entries(value).flatMap(([key, child]) => {
      const childPath = [...path, key];
      return Object.hasOwn(shape, key)
        ? unknownKeys(child, shape[key]!._zod.def, childPath)
        : [{ path: jsonPath(childPath), key, known: Object.keys(shape) }];
    });
  }
  if (def.type === 'record' && def.valueType && !Array.isArray(value)) {
    const valueDef = def.valueType._zod.def;
    return Object.entries(value).flatMap(([key, child]) =>
      key === '__proto__'
        ? [{ path: jsonPath([...path, key]), key, known: [] }]
        : unknownKeys(child, valueDef, [...path, key]),
    );
  }
  if (def.type === 'array' && def.element && Array.isArray(value)) {
    const elementDef = def.element._zod.def;
    return value.flatMap((item, i) => unknownKeys(item, elementDef, [...path, String(i)]));
  }
  if (def.type === 'union' && def.options) {
    const object = def.options.find((o) => o._zod.def.type === 'object');
    return object ? unknownKeys(value, object._zod.def, path) : [];
  }
  return [];
}
