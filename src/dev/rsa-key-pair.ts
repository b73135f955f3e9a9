// RSA key pairs whose keys can be exported as JWK without hanging the process.
//
// On Node 20 (seen on 20.20.2; not on 22 or 24), exporting as JWK a key that generateKeyPair or
// generateKeyPairSync returned can deadlock: the export holds the key's lock while it allocates,
// a garbage collection in that moment destroys the key generation job, which still shares the key,
// and the job's destructor waits for the same lock, on the same thread, for ever. Keys generated
// into DER and imported again share nothing with the job.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';

export function generateRsaKeyPair(modulusLength = 2048): { privateKey: KeyObject; publicKey: KeyObject } {
  const der = generateKeyPairSync('rsa', {
    modulusLength,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'der' },
  });
  return {
    privateKey: createPrivateKey({ key: der.privateKey, format: 'der', type: 'pkcs8' }),
    publicKey: createPublicKey({ key: der.publicKey, format: 'der', type: 'spki' }),
  };
}
