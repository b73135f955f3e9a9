// Keys exported as JWK (the development provider's signing key, the test token issuers' key
// sets) must not hang the process: on Node 20 a generateKeyPairSync key can deadlock there.
import { spawnSync } from 'node:child_process';
import { createPublicKey, createSign, createVerify } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect } from 'chai';

import { generateRsaKeyPair } from '../../src/dev/rsa-key-pair.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Many small keys, each exported as JWK at once, with a young generation so small that garbage
 * collections keep falling inside the exports. With generateKeyPairSync's own key objects, two
 * of three runs of 1000 keys hung Node 20.20.2.
 */
const EXPORTS_UNDER_GC_PRESSURE = `
  import { generateRsaKeyPair } from ${JSON.stringify(path.join(root, 'src', 'dev', 'rsa-key-pair.ts'))};
  const kept = [];
  for (let n = 0; n < 1500; n++) {
    const { privateKey } = generateRsaKeyPair(512);
    for (let i = 0; i < 3; i++) kept.push(privateKey.export({ format: 'jwk' }));
    if (kept.length > 3000) kept.length = 0;
  }
  console.log('exported');
`;

describe('RSA key pairs for JWK export', function () {
  this.timeout(60_000);

  it('a key pair that signs and verifies, 2048 bits by default', () => {
    const { privateKey, publicKey } = generateRsaKeyPair();
    expect(privateKey.asymmetricKeyDetails?.modulusLength).to.equal(2048);
    const signature = createSign('sha256').update('x').sign(privateKey);
    expect(createVerify('sha256').update('x').verify(publicKey, signature)).to.equal(true);
    expect(createPublicKey(privateKey).export({ format: 'jwk' })).to.deep.equal(publicKey.export({ format: 'jwk' }));
  });

  it('exports as JWK under constant garbage collection without hanging the process', () => {
    const run = spawnSync(
      process.execPath,
      ['--max-semi-space-size=1', '--import', 'tsx', '--input-type=module', '--eval', EXPORTS_UNDER_GC_PRESSURE],
      {
        cwd: root,
        encoding: 'utf8',
        // spawnSync blocks the event loop, so mocha's timeout could not end a hung child: this does.
        timeout: 45_000,
        killSignal: 'SIGKILL',
      },
    );
    expect(run.signal, 'the child hung and was killed').to.equal(null);
    expect(run.stdout.trim()).to.equal('exported');
  });
});
