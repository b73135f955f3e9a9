// Microsoft Graph as the directory's group lookup sees it: GET
// /v1.0/me/transitiveMemberOf with a bearer token, answering the signed-in
// user's memberships (groups, and a directory role to be left out) in pages
// linked by @odata.nextLink, Graph's error objects for a token it does not
// know (401), throttling (429 with Retry-After) and outages (503).
import type { ServerResponse } from 'node:http';

import { sendJson, startStandIn, type StandIn } from './http-kit.js';

export interface GraphStandIn extends StandIn {
  /** Group ids per user, by the user id the bearer token stands for. */
  readonly groups: Map<string, string[]>;
  /** Memberships per page at most (Graph's own is `$top`, up to 999); small to make pages in tests. */
  pageSize: number;
  /** A status every request gets instead (429, 503), until set back to undefined. */
  failWith: number | undefined;
}

const ROLE = { '@odata.type': '#microsoft.graph.directoryRole', id: 'role-global-reader' };

function graphError(res: ServerResponse, status: number, code: string, headers: Record<string, string> = {}): void {
  sendJson(
    res,
    status,
    { error: { code, message: code, innerError: { date: new Date().toISOString(), 'request-id': 'stand-in' } } },
    headers,
  );
}

/**
 * `userOf` says which user a bearer token belongs to (the test asks the identity provider, as
 * Graph checks the token it is given); undefined is a token Graph does not accept.
 */
export async function startGraph(userOf: (token: string) => Promise<string | undefined>): Promise<GraphStandIn> {
  const graph: GraphStandIn = Object.assign(
    await startStandIn(async (req, res, url) => {
      if (graph.failWith === 429) return graphError(res, 429, 'TooManyRequests', { 'retry-after': '10' });
      if (graph.failWith !== undefined) return graphError(res, graph.failWith, 'ServiceNotAvailable');
      if (req.method !== 'GET' || url.pathname !== '/v1.0/me/transitiveMemberOf')
        return graphError(res, 400, 'BadRequest');
      const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      const user = bearer === undefined ? undefined : await userOf(bearer);
      if (user === undefined) return graphError(res, 401, 'InvalidAuthenticationToken');
      const top = Number(url.searchParams.get('$top') ?? '100');
      if (!(top >= 1 && top <= 999)) return graphError(res, 400, 'Request_BadRequest');
      const all = [
        ROLE,
        ...(graph.groups.get(user) ?? []).map((id) => ({ '@odata.type': '#microsoft.graph.group', id })),
      ];
      const from = Number(url.searchParams.get('$skiptoken') ?? '0');
      const size = Math.min(top, graph.pageSize);
      const next = new URL(url.pathname + url.search, graph.url);
      next.searchParams.set('$skiptoken', String(from + size));
      sendJson(res, 200, {
        '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#directoryObjects(id)',
        ...(from + size < all.length ? { '@odata.nextLink': next.toString() } : {}),
        value: all.slice(from, from + size),
      });
    }),
    { groups: new Map<string, string[]>(), pageSize: 999, failWith: undefined },
  );
  return graph;
}
