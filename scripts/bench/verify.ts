// Signature verification at 13 B, 8 KiB, 1 MiB, 25 MiB: the native addon vs
// node:crypto (createHmac + timingSafeEqual, the baseline) vs
// @octokit/webhooks-methods verify. Ratios are against node:crypto, same run.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

import { verify as octokitVerify } from '@octokit/webhooks-methods';

import { loadAddonCore } from '../../src/native/index.js';
import { formatRate, interleavedRates, table } from './measure.js';

const SECRET = 'bench-secret-0123456789';
const SIZES: Array<[string, number]> = [
  ['13 B', 13],
  ['8 KiB', 8 * 1024],
  ['1 MiB', 1024 * 1024],
  ['25 MiB', 25 * 1024 * 1024],
];

/** What a receiver without gatehouse typically writes. */
function nodeCryptoVerify(secret: string, body: Buffer, header: string): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const received = Buffer.from(header);
  return expected.length === received.length && timingSafeEqual(expected, received);
}

export async function benchVerify(quick: boolean): Promise<string> {
  const native = loadAddonCore();
  const verifier = native.createVerifier([SECRET]);
  const rows: string[][] = [];
  for (const [label, size] of SIZES) {
    // Printable bytes, so octokit (which takes a string) hashes the same bytes.
    const body = Buffer.from(randomBytes(size).toString('base64').slice(0, size), 'latin1');
    const text = body.toString('latin1');
    const header = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
    if (
      !verifier.verify(body, header) ||
      !nodeCryptoVerify(SECRET, body, header) ||
      !(await octokitVerify(SECRET, text, header))
    ) {
      throw new Error(`verifiers disagree at ${label}`);
    }
    const ms = (quick ? 1500 : 6000) * (size > 1e6 ? 2 : 1);
    const [baseline, prepared, oneShot, octokit] = (await interleavedRates(
      [
        { name: 'node:crypto', run: () => nodeCryptoVerify(SECRET, body, header) },
        { name: 'native Verifier', run: () => verifier.verify(body, header) },
        { name: 'native verifySignature', run: () => native.verifySignature([SECRET], body, header) },
        { name: 'octokit', run: () => octokitVerify(SECRET, text, header), async: true },
      ],
      ms,
      size > 1e6 ? 400 : 50,
    )) as [number, number, number, number];
    const ratio = (r: number) => `${(r / baseline).toFixed(2)}×`;
    rows.push([
      label,
      formatRate(baseline),
      `${formatRate(prepared)} (${ratio(prepared)})`,
      `${formatRate(oneShot)} (${ratio(oneShot)})`,
      `${formatRate(octokit)} (${ratio(octokit)})`,
    ]);
  }
  return table(
    ['body', 'node:crypto (1.00×)', 'native Verifier', 'native verifySignature', '@octokit/webhooks-methods'],
    rows,
  );
}
