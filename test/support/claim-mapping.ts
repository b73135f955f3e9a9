// Checks forwarded identity headers against test/vectors/claim-mapping.json.
import { readFileSync } from 'node:fs';

import { expect } from 'chai';

import { principal } from './principal.js';

interface Mapping {
  readonly id: string;
  readonly name: string;
  readonly tokens: readonly string[];
}

export const CLAIM_MAPPING = (
  JSON.parse(readFileSync(new URL('../vectors/claim-mapping.json', import.meta.url), 'utf8')) as {
    providers: Record<string, Mapping>;
  }
).providers;

/** -ID and -NAME come from the mapped claims, name_typ names the name claim, and exactly the mapped token headers are present. */
export function expectClaimMapping(kind: string, alias: string, headers: Record<string, string>): void {
  const mapping = CLAIM_MAPPING[kind]!;
  const p = principal(headers);
  expect(headers['x-platform-client-principal-idp'], 'IDP').to.equal(alias);
  expect(p.claims, `${kind}: -ID from ${mapping.id}`).to.deep.include({
    typ: mapping.id,
    val: headers['x-platform-client-principal-id'],
  });
  expect(p.name_typ, `${kind}: name_typ`).to.equal(mapping.name);
  expect(p.claims, `${kind}: -NAME from ${mapping.name}`).to.deep.include({
    typ: mapping.name,
    val: headers['x-platform-client-principal-name'],
  });
  const prefix = `x-platform-token-${alias.toLowerCase()}-`;
  const tokens = Object.keys(headers)
    .filter((h) => h.startsWith(prefix))
    .map((h) => h.slice(prefix.length).toUpperCase());
  expect(tokens.sort(), `${kind}: token headers`).to.deep.equal([...mapping.tokens].sort());
}
