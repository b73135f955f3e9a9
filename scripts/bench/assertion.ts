// The signed identity assertion's cost: a signed-in GET's whole core path (AuthLayer.decide, then
// the forwarded-header build the sidecar does) with gatehouse.identityAssertion on and off, over
// the same stored session, measured in interleaved slices in one run (target: on at most 1.05×
// off). The assertion is signed once per session and then looked up, so what is left is the lookup
// and one more header.
import { signedInCorePath } from './core-path.js';
import { formatRate, interleavedMeasure, table } from './measure.js';

const ASSERTION_HEADER = 'X-PLATFORM-CLIENT-PRINCIPAL-ASSERTION';

/** One signed-in request through a layer, as the sidecar handles it; checks the assertion is there, or not. */
async function signedInRequest(assertions: boolean): Promise<() => Promise<void>> {
  const { layer, view, once } = await signedInCorePath(assertions ? { identityAssertion: {} } : {});
  const decision = await layer.decide(view);
  const carries = decision.kind === 'forward' && decision.edits.set.some(([name]) => name === ASSERTION_HEADER);
  if (carries !== assertions) throw new Error(`the bench request ${assertions ? 'lacks' : 'carries'} an assertion`);
  return once;
}

export async function benchAssertion(quick: boolean): Promise<string> {
  const off = await signedInRequest(false);
  const on = await signedInRequest(true);
  const { rates, threadCpuNsPerRun } = await interleavedMeasure(
    [
      { name: 'off', run: off, async: true },
      { name: 'on', run: on, async: true },
    ],
    quick ? 2_000 : 10_000,
  );
  const cpu = (i: number) => (threadCpuNsPerRun ? `${(threadCpuNsPerRun[i]! / 1000).toFixed(2)} µs` : 'n/a');
  const cost = (i: number) =>
    threadCpuNsPerRun ? `${(threadCpuNsPerRun[i]! / threadCpuNsPerRun[0]!).toFixed(3)}×` : 'n/a';
  return table(
    ['signed-in GET, core path in process', 'requests/s', 'CPU per request', 'CPU vs off (target ≤ 1.05×)'],
    [
      ['identity assertion off', formatRate(rates[0]!), cpu(0), '1.000×'],
      ['identity assertion on', formatRate(rates[1]!), cpu(1), cost(1)],
    ],
  );
}
