// The interception engine of the C ABI under a native test host (no Node in
// the loop): 64 host threads submit at once, the policy answers on the
// submitting thread or later from worker threads (some twice), shutdown
// answers the rest. Every request must be completed exactly once.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { expect } from 'chai';

const HOST = path.resolve('build/Release/gatehouse_engine_stress');

interface StressReport {
  submitted: number;
  completedOnce: number;
  neverCompleted: number;
  completedTwice: number;
  inline: number;
  heldForShutdown: number;
  answered503ByShutdown: number;
  pendingBeforeShutdown: number;
  pendingAfterShutdown: number;
  secondCompletionsRefused: number;
  lateSubmitStatus: number;
  lateSubmitAnswer: number;
}

function stress(hostThreads: number, perThread: number, workers: number): StressReport {
  return JSON.parse(
    execFileSync(HOST, [String(hostThreads), String(perThread), String(workers)], {
      encoding: 'utf8',
      timeout: 60_000,
    }),
  ) as StressReport;
}

describe('interception engine (C ABI) under the native test host', () => {
  before(function () {
    if (!existsSync(HOST)) throw new Error(`${HOST} is missing: npm run build:native`);
  });

  it('64 host threads: every request completed exactly once, none lost, none twice', () => {
    const report = stress(64, 400, 4);
    expect(report.submitted).to.equal(64 * 400);
    expect(report.completedOnce).to.equal(report.submitted);
    expect(report.neverCompleted).to.equal(0);
    expect(report.completedTwice).to.equal(0);
  });

  it('completion is idempotent: second completions from the policy are refused, not delivered', () => {
    const report = stress(16, 300, 2);
    expect(report.secondCompletionsRefused).to.be.above(0);
    expect(report.completedTwice).to.equal(0);
  });

  it('shutdown answers every pending request with 503 and later submissions at once', () => {
    const report = stress(8, 500, 2);
    expect(report.heldForShutdown).to.be.above(0);
    expect(report.pendingBeforeShutdown).to.equal(report.heldForShutdown);
    expect(report.answered503ByShutdown).to.equal(report.heldForShutdown);
    expect(report.pendingAfterShutdown).to.equal(0);
    expect(report.lateSubmitAnswer).to.equal(503);
    expect(report.lateSubmitStatus).to.equal(6); // GH_ERR_SHUT_DOWN
  });

  it('the policy may answer on the submitting thread, before submit returns', () => {
    const report = stress(4, 250, 1);
    expect(report.inline).to.be.above(0);
    expect(report.completedOnce).to.equal(report.submitted);
  });
});
