// The signed-in user's groups from Microsoft Graph, for a directory token that
// refers to them instead of carrying them (the group overage): asked once at
// sign-in and at refresh with the user's own access token, every page within
// the provider size limit, the whole lookup within one time limit, and a page
// count past which the groups are taken as unknown (docs/configuration.md,
// "Where groups and roles come from").
import { readAnswerBody, PROVIDER_TIMEOUT_MS } from './provider-http.js';

/** Where Graph is and how much of it one lookup may read (`claimSources.<aad>.graph`). */
export interface GraphGroupsLookup {
  /** Graph's origin: `https://graph.microsoft.com`, or a national cloud's (`https://graph.microsoft.us`). */
  readonly endpoint: string;
  /** Pages of up to 999 memberships each; more than this and the groups stay unknown. */
  readonly maxPages: number;
}

export const DEFAULT_GRAPH_ENDPOINT = 'https://graph.microsoft.com';
export const DEFAULT_GRAPH_MAX_PAGES = 10;
/** Graph's largest page of memberships. */
const PAGE_SIZE = 999;
const GROUP_TYPE = '#microsoft.graph.group';

/** Why Graph did not tell the groups; its message is safe to show and log (never the token). */
export class GraphGroupsError extends Error {}

function firstPage(endpoint: string): string {
  // `/me/transitiveMemberOf` needs only the delegated User.Read permission for the user's own memberships.
  return `${endpoint.replace(/\/+$/, '')}/v1.0/me/transitiveMemberOf?$select=id&$top=${PAGE_SIZE}`;
}

function statusProblem(status: number): string {
  if (status === 401 || status === 403)
    return `Microsoft Graph refused the access token (${status}): the sign-in's access token must be for Graph with the delegated User.Read permission`;
  if (status === 429) return 'Microsoft Graph is throttling the application (429)';
  return `Microsoft Graph answered ${status}`;
}

/** The ids of one page's groups (directory roles and administrative units left out), and the next page's address. */
function readPage(text: string): { ids: string[]; next: string | undefined } {
  let page: unknown;
  try {
    page = JSON.parse(text);
  } catch {
    throw new GraphGroupsError('Microsoft Graph answered something other than JSON');
  }
  const value = (page as { value?: unknown } | null)?.value;
  if (!Array.isArray(value)) throw new GraphGroupsError('Microsoft Graph answered without a list of memberships');
  const ids: string[] = [];
  for (const item of value as unknown[]) {
    const { id, '@odata.type': type } = (item ?? {}) as Record<string, unknown>;
    if (type === GROUP_TYPE && typeof id === 'string' && id !== '') ids.push(id);
  }
  const next = (page as Record<string, unknown>)['@odata.nextLink'];
  if (next !== undefined && typeof next !== 'string')
    throw new GraphGroupsError('Microsoft Graph answered a next page that is not an address');
  return { ids, next };
}

/**
 * Every group id of the signed-in user, transitively. Fails with GraphGroupsError when Graph
 * cannot be reached or refuses, answers too much, too slowly or in more than `maxPages` pages, or
 * names a next page elsewhere than at its own origin (the token is never sent anywhere else).
 */
export async function graphGroupIds(lookup: GraphGroupsLookup, accessToken: string): Promise<string[]> {
  const origin = new URL(lookup.endpoint).origin;
  const deadline = AbortSignal.timeout(PROVIDER_TIMEOUT_MS);
  const groups = new Set<string>();
  let url: string | undefined = firstPage(lookup.endpoint);
  for (let pages = 0; url !== undefined; pages++) {
    if (pages === lookup.maxPages)
      throw new GraphGroupsError(`Microsoft Graph lists more than ${lookup.maxPages} pages of memberships`);
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
        redirect: 'error',
        signal: deadline,
      });
    } catch {
      throw new GraphGroupsError(
        deadline.aborted
          ? `Microsoft Graph did not answer within ${PROVIDER_TIMEOUT_MS / 1000} s`
          : 'Microsoft Graph could not be reached',
      );
    }
    let text: string;
    try {
      text = (await readAnswerBody(response, 'Microsoft Graph')).toString('utf8');
    } catch (error) {
      throw new GraphGroupsError(deadline.aborted ? 'Microsoft Graph answered too slowly' : (error as Error).message);
    }
    if (response.status !== 200) throw new GraphGroupsError(statusProblem(response.status));
    const page = readPage(text);
    for (const id of page.ids) groups.add(id);
    if (page.next !== undefined && !URL.canParse(page.next))
      throw new GraphGroupsError('Microsoft Graph answered a next page that is not an address');
    if (page.next !== undefined && new URL(page.next).origin !== origin)
      throw new GraphGroupsError('Microsoft Graph named a next page at another origin');
    url = page.next;
  }
  return [...groups];
}
