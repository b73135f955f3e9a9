// npm run bench [-- --quick]: every benchmark, ratios against baselines measured in this run. The
// all-cores run comes first: it is what a deployment sees.
import os from 'node:os';

import { benchAllCores, FULL_RUN, QUICK_RUN } from './all-cores.js';
import { benchAssertion } from './assertion.js';
import { benchAuthorization } from './authorization.js';
import { benchBearer } from './bearer.js';
import { benchDeliveries, benchMemory } from './deliveries.js';
import { benchFeatures } from './features.js';
import { benchForwardAuth } from './forward-auth.js';
import { benchHook } from './hook.js';
import { benchInstructions } from './instructions.js';
import { machineProbe } from './machine-probe.js';
import { benchRefreshLogout } from './refresh.js';
import { benchSidecar } from './sidecar.js';
import { benchVerify } from './verify.js';

const quick = process.argv.includes('--quick');
console.log(
  `gatehouse benchmarks — node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, ${new Date().toISOString()}${quick ? ' (quick)' : ''}\n`,
);
console.log(`${machineProbe()} (at the start)\n`);
console.log('## All cores: a signed-in GET as deployed, against the peers\n');
console.log(await benchAllCores(quick ? QUICK_RUN : FULL_RUN));
console.log('\n## Signature verification (ops/s; ratio vs node:crypto)\n');
console.log(await benchVerify(quick));
console.log('\n## End-to-end deliveries\n');
console.log(await benchDeliveries(quick));
console.log('\n## Memory\n');
console.log(await benchMemory());
console.log('\n## Bearer tokens\n');
console.log(await benchBearer(quick));
console.log('\n## Sidecar: a signed-in GET\n');
console.log(await benchSidecar(quick));
console.log('\n## Forward authentication: nginx asks gatehouse\n');
console.log(await benchForwardAuth(quick));
console.log('\n## Sidecar with Redis: refresh and logout latency\n');
console.log(await benchRefreshLogout(quick));
console.log('\n## Sidecar: instructions per request\n');
console.log(await benchInstructions(quick));
console.log('\n## In-server hook: a signed-in decision\n');
console.log(await benchHook(quick));
console.log('\n## Signed identity assertion: a signed-in GET with it on and off\n');
console.log(await benchAssertion(quick));
console.log('\n## Authorization rules: a signed-in GET under five rules and under none\n');
console.log(await benchAuthorization(quick));
console.log('\n## Optional features over HTTP: a signed-in GET with none, with five rules, with the assertion\n');
console.log(await benchFeatures(quick));
console.log(`\n${machineProbe()} (at the end)`);
