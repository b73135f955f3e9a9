// Authorization rules' cost: a signed-in GET's whole core path (AuthLayer.decide, then the
// forwarded-header build the sidecar does) under five rules (four path rules the request does not
// fall under, and a default that lets the user in) and with no rules, over the same stored session,
// measured in interleaved slices in one run (target: with rules at most 1.05× without). Rules are
// judged once per session and rule and remembered with the session's record, so what is left per
// request is matching the path and one lookup.
import { signedInCorePath } from './core-path.js';
import { formatRate, interleavedMeasure, table } from './measure.js';

/** Five rules: the bench request (GET /page) passes four path rules by and is let in by the default. */
export const FIVE_RULES = {
  paths: [
    { path: '/admin/*', allow: [{ roles: ['admin'] }] },
    { path: '/reports', methods: ['POST'], allow: [{ groups: ['writers'] }] },
    { path: '/billing/*', allow: [{ claims: { 'realm_access.roles': ['billing'] } }] },
    { path: '/api/*', allow: [{ emailDomains: ['example.com'] }] },
  ],
  default: { allow: [{ subjects: ['user-1'] }, { groups: ['staff'] }] },
};

/** One signed-in request through a layer, as the sidecar handles it; checks it is let in. */
async function signedInRequest(rules: boolean): Promise<() => Promise<void>> {
  const { layer, view, once } = await signedInCorePath(rules ? { authorization: FIVE_RULES } : {});
  // The rules are there: the same session is refused an admin page with them, let in without.
  const admin = await layer.decide({ ...view, path: '/admin/x' });
  if ((admin.kind === 'respond' && admin.status === 403) !== rules)
    throw new Error(`the bench rules are ${rules ? 'missing' : 'present'}`);
  return once;
}

export async function benchAuthorization(quick: boolean): Promise<string> {
  const none = await signedInRequest(false);
  const five = await signedInRequest(true);
  const { rates, threadCpuNsPerRun } = await interleavedMeasure(
    [
      { name: 'no rules', run: none, async: true },
      { name: 'five rules', run: five, async: true },
    ],
    quick ? 2_000 : 10_000,
  );
  const cpu = (i: number) => (threadCpuNsPerRun ? `${(threadCpuNsPerRun[i]! / 1000).toFixed(2)} µs` : 'n/a');
  const cost = (i: number) =>
    threadCpuNsPerRun ? `${(threadCpuNsPerRun[i]! / threadCpuNsPerRun[0]!).toFixed(3)}×` : 'n/a';
  return table(
    ['signed-in GET, core path in process', 'requests/s', 'CPU per request', 'CPU vs no rules (target ≤ 1.05×)'],
    [
      ['no authorization rules', formatRate(rates[0]!), cpu(0), '1.000×'],
      ['five rules (four path rules, the default lets in)', formatRate(rates[1]!), cpu(1), cost(1)],
    ],
  );
}
