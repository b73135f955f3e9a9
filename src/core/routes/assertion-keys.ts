// GET, HEAD {apiPrefix}/keys: the keys identity assertions are signed with (docs/endpoints.md#keys-authkeys).
// Anonymous, like the key sets of identity providers. Without gatehouse.identityAssertion there
// are none, and the route is a 404 like any unknown endpoint.
import { jwksDecision } from '../assertion/jwks-document.js';
import type { AssertionKeyRing } from '../assertion/key-ring.js';
import type { Decision, RouteRequest } from '../http/request-view.js';
import { errorDecision } from '../http/responses.js';

export async function assertionKeys(ring: AssertionKeyRing | undefined, request: RouteRequest): Promise<Decision> {
  if (ring === undefined)
    return errorDecision(
      404,
      'Not found',
      'No such authentication endpoint (identity assertions are off).',
      request.json,
    );
  return jwksDecision(await ring.publishedKeys());
}
