// The token requests of a multi-tenant directory are openid-client's, but its
// check of an ID token's issuer is not: it compares the issuer with the
// metadata's, here the tenant template (`.../{tenantid}/v2.0`), never a
// token's. openid-client fills the template itself only for
// https://login.microsoftonline.com, and with any tenant; gatehouse also
// serves the directory's other clouds and a tenant allow-list. So the ID token
// is taken out of the token answer before openid-client reads it, and the
// provider client checks it with its own JWT rules (docs/architecture.md#dependencies).
import type * as oidc from 'openid-client';

import { boundedFetch } from '../providers/provider-http.js';

/** Holds the ID token of one token request (one per instance: make one for each request). */
export class IdTokenAside {
  #idToken: string | undefined;

  /** The ID token the last answer carried, if any. */
  get idToken(): string | undefined {
    return this.#idToken;
  }

  /** openid-client's customFetch: the answer as boundedFetch gives it, a successful one less its `id_token`. */
  readonly fetch: oidc.CustomFetch = async (url, options) => {
    const response = await boundedFetch(url, options);
    if (response.status !== 200) return response;
    const text = await response.text();
    const answer = parsedObject(text);
    const idToken = answer?.id_token;
    if (typeof idToken === 'string') {
      this.#idToken = idToken;
      delete answer!.id_token;
    }
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    const body = typeof idToken === 'string' ? JSON.stringify(answer) : text;
    return new Response(body, { status: response.status, statusText: response.statusText, headers });
  };
}

/** A JSON object, or undefined for anything else (openid-client then says what is wrong with it). */
function parsedObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
