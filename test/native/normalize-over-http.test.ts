// Spoofed identity headers as Node's HTTP parser really delivers them
// (rawHeaders: original case, duplicates kept), through normalizeHeaders.
import http from 'node:http';

import { expect } from 'chai';

import { coresUnderTest } from '../support/cores.js';
import { listen } from '../support/http.js';
import { raw } from '../support/raw-http.js';

function pairs(raw: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

for (const { name, load } of coresUnderTest()) {
  describe(`spoofed identity headers over real HTTP (${name})`, () => {
    it('every alias a client can send is removed and the canonical headers set', async () => {
      const core = load();
      const server = await listen(
        http.createServer((req, res) => {
          const result = core.normalizeHeaders(pairs(req.rawHeaders), {
            provider: 'aad',
            userId: 'real-id',
            userName: 'Real User',
            authType: 'aad',
            nameType: 'name',
            roleType: 'roles',
            claims: [],
          });
          // Apply the decision the way a host does, then report what the app would see.
          const seen = new Map<string, string[]>();
          for (const [n, v] of pairs(req.rawHeaders)) {
            if (result.remove.includes(n)) continue;
            seen.set(n.toLowerCase(), [...(seen.get(n.toLowerCase()) ?? []), v]);
          }
          for (const [n, v] of result.set) seen.set(n.toLowerCase(), [v]);
          res.setHeader('connection', 'close');
          res.end(JSON.stringify(Object.fromEntries(seen)));
        }),
      );
      try {
        const head =
          'GET / HTTP/1.1\r\nHost: app\r\n' +
          'X-PLATFORM-CLIENT-PRINCIPAL-ID: admin\r\n' +
          'x-platform-client-principal-id: admin2\r\n' +
          'X_PLATFORM_CLIENT_PRINCIPAL: forged\r\n' +
          'x.platform.client.principal.name: root\r\n' +
          'X-Platform-Token-Aad-Access-Token: stolen\r\n' +
          'X-Other: kept\r\n\r\n';
        // The app closes the connection after its answer (Connection: close), which ends the read.
        const response = await raw(server.url, head);
        const seen = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as Record<string, string[]>;
        expect(seen['x-platform-client-principal-id']).to.deep.equal(['real-id']);
        expect(seen['x-platform-client-principal-name']).to.deep.equal(['Real User']);
        expect(seen['x-platform-client-principal-idp']).to.deep.equal(['aad']);
        expect(seen).not.to.have.property('x_platform_client_principal');
        expect(seen).not.to.have.property('x.platform.client.principal.name');
        expect(seen).not.to.have.property('x-platform-token-aad-access-token');
        expect(seen['x-other']).to.deep.equal(['kept']);
        expect(Buffer.from(seen['x-platform-client-principal']![0]!, 'base64').toString()).to.contain(
          '"auth_typ":"aad"',
        );
      } finally {
        await server.close();
      }
    });
  });
}
