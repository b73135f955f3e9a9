// The Graph group lookup on its own, against the Graph stand-in and against
// servers answering what Graph never would: the bounds and the refusals.
import http from 'node:http';

import { expect } from 'chai';

import { graphGroupIds, GraphGroupsError } from '../../../src/core/providers/graph-groups.js';
import { MAX_ANSWER_BYTES } from '../../../src/core/providers/provider-http.js';
import { listen, type Listening } from '../../support/http.js';
import { startGraph, type GraphStandIn } from '../../stand-ins/graph.js';

const TOKEN = 'eyJ0eXAiOiJKV1QifQ.user-token.sig';

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(GraphGroupsError);
    expect((error as Error).message).to.not.include(TOKEN);
    return (error as Error).message;
  }
  return expect.fail('expected the lookup to fail');
}

/** A server answering every request with `answer`. */
async function answering(answer: (res: http.ServerResponse) => void): Promise<Listening> {
  return listen(http.createServer((_req, res) => answer(res)));
}

describe('graphGroupIds', () => {
  let graph: GraphStandIn;
  const others: Listening[] = [];
  beforeEach(async () => {
    graph = await startGraph((token) => Promise.resolve(token === TOKEN ? 'alice' : undefined));
    graph.groups.set('alice', ['g1', 'g2', 'g3']);
  });
  afterEach(async () => {
    await graph.close();
    await Promise.all(others.splice(0).map((server) => server.close()));
  });

  it('reads every page up to maxPages, groups only, with the bearer token', async () => {
    graph.pageSize = 2;
    expect(await graphGroupIds({ endpoint: graph.url, maxPages: 2 }, TOKEN)).to.deep.equal(['g1', 'g2', 'g3']);
    expect(graph.seen.map((r) => r.headers.authorization)).to.deep.equal([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`]);
    expect(graph.seen[0]!.url).to.equal('/v1.0/me/transitiveMemberOf?$select=id&$top=999');
    expect(await failure(graphGroupIds({ endpoint: graph.url, maxPages: 1 }, TOKEN))).to.equal(
      'Microsoft Graph lists more than 1 pages of memberships',
    );
  });

  it('a token Graph does not accept, throttling and outages fail', async () => {
    expect(await failure(graphGroupIds({ endpoint: graph.url, maxPages: 10 }, 'other'))).to.include('(401)');
    graph.failWith = 429;
    expect(await failure(graphGroupIds({ endpoint: graph.url, maxPages: 10 }, TOKEN))).to.include('throttling');
    graph.failWith = 502;
    expect(await failure(graphGroupIds({ endpoint: graph.url, maxPages: 10 }, TOKEN))).to.include('answered 502');
  });

  it('a next page at another origin is not followed: the token goes nowhere else', async () => {
    const elsewhere = await startGraph(() => Promise.resolve('alice'));
    others.push(elsewhere);
    const server = await answering((res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          value: [{ '@odata.type': '#microsoft.graph.group', id: 'g1' }],
          '@odata.nextLink': `${elsewhere.url}/v1.0/me/transitiveMemberOf?$skiptoken=1`,
        }),
      ),
    );
    others.push(server);
    expect(await failure(graphGroupIds({ endpoint: server.url, maxPages: 10 }, TOKEN))).to.include('another origin');
    expect(elsewhere.seen).to.have.length(0);
  });

  it('an answer too large, not JSON, without a list, or with a next page that is no address fails', async () => {
    const bodies = [
      `{"value":[${'"x",'.repeat(MAX_ANSWER_BYTES / 4)}"x"]}`,
      '<html>sign in</html>',
      '{"error":null}',
      '{"value":[],"@odata.nextLink":7}',
      '{"value":[],"@odata.nextLink":"not a url"}',
    ];
    const reasons = [];
    for (const body of bodies) {
      const server = await answering((res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
      others.push(server);
      reasons.push(await failure(graphGroupIds({ endpoint: server.url, maxPages: 10 }, TOKEN)));
    }
    expect(reasons).to.deep.equal([
      'Microsoft Graph: answer too large',
      'Microsoft Graph answered something other than JSON',
      'Microsoft Graph answered without a list of memberships',
      'Microsoft Graph answered a next page that is not an address',
      'Microsoft Graph answered a next page that is not an address',
    ]);
  });
});

describe('graphGroupIds against a Graph that never answers', function () {
  this.timeout(30_000);
  it('fails when the lookup is not answered within the time limit', async () => {
    const silent = await listen(http.createServer(() => undefined));
    try {
      expect(await failure(graphGroupIds({ endpoint: silent.url, maxPages: 10 }, TOKEN))).to.equal(
        'Microsoft Graph did not answer within 10 s',
      );
    } finally {
      silent.server.closeAllConnections();
      await silent.close();
    }
  });
});
