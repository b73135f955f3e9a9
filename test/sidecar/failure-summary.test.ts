// A down app cannot flood the logs: the first failure of a kind is logged, repeats within the
// interval are counted and logged once as a count.
import { expect } from 'chai';

import { FailureSummary } from '../../src/sidecar/failure-summary.js';
import { capturingLogger } from '../support/logs.js';
import { startDeployment } from '../support/sign-in.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('upstream failures in the log', function () {
  this.timeout(30_000);

  it('the first of a kind at once, the repeats as one count when the interval is over; another kind on its own', async () => {
    const logs = capturingLogger('info');
    const summary = new FailureSummary(logs.logger, 200);
    for (let i = 0; i < 50; i++)
      summary.error('ECONNREFUSED', { path: `/p${i}`, reason: 'ECONNREFUSED' }, 'upstream request failed');
    summary.error('upstream timeout', { path: '/slow', reason: 'upstream timeout' }, 'upstream request failed');
    expect(logs.lines().map((l) => [l.path, l.reason])).to.deep.equal([
      ['/p0', 'ECONNREFUSED'],
      ['/slow', 'upstream timeout'],
    ]);
    await pause(300);
    const counted = logs.lines().slice(2);
    expect(counted).to.have.length(1); // the timeout had no repeats: no count for it
    expect(counted[0]).to.include({
      reason: 'ECONNREFUSED',
      repeats: 49,
      msg: 'upstream request failed: 49 more of the same in the last 0.2 s',
    });
    // A new interval starts with the next failure, logged at once again.
    summary.error('ECONNREFUSED', { path: '/again', reason: 'ECONNREFUSED' }, 'upstream request failed');
    expect(logs.lines().at(-1)).to.include({ path: '/again' });
  });

  it('an app that is down: 200 failing requests write one line, not 200', async () => {
    const logs = capturingLogger('info');
    const deployment = await startDeployment({ logger: logs.logger });
    try {
      await deployment.closeUpstream();
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) => fetch(`${deployment.url}/public/down-${i}`).then((r) => r.status)),
      );
      expect(new Set(answers)).to.deep.equal(new Set([502]));
      expect(logs.lines().filter((l) => l.msg === 'upstream request failed')).to.have.length(1);
    } finally {
      await deployment.close();
    }
  });
});
