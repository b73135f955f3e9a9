// The IIS module's request path under stress, without Node or IIS
// (binding/host/module_stress.cpp): host threads go through the engine slot
// and the deferred decision while the policy completes inline or late and the
// engine is detached and re-attached all along. Each request is applied once,
// with its own decision or the slot's 503, and resumed only when it went pending.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

import { expect } from 'chai';

const STRESS = path.resolve('build/Release/gatehouse_module_stress');

interface ModuleStressReport {
  handled: number;
  ownDecision: number;
  unavailable: number;
  inline: number;
  resumed: number;
  wrong: number;
  badResumes: number;
}

describe('IIS module request path (engine slot + deferred decision) under 64 native threads', () => {
  it('every request applied exactly once, inline or resumed once, across attach/detach', () => {
    let report: ModuleStressReport;
    try {
      report = JSON.parse(
        execFileSync(STRESS, ['64', '200', '4'], { encoding: 'utf8', timeout: 60_000 }),
      ) as ModuleStressReport;
    } catch (error) {
      throw new Error(
        `module_stress reported a breach: ${(error as { stdout?: string }).stdout ?? (error as Error).message}`,
        { cause: error },
      );
    }
    // At least what was asked; more only while some path had not been taken yet.
    expect(report.handled).to.be.at.least(64 * 200);
    expect(report.wrong).to.equal(0);
    expect(report.badResumes).to.equal(0);
    expect(report.ownDecision + report.unavailable).to.equal(report.handled);
    expect(report.inline + report.resumed).to.equal(report.handled);
    // Both ways through the state machine, and both engine states, really happened.
    for (const key of ['ownDecision', 'unavailable', 'inline', 'resumed'] as const)
      expect(report[key], key).to.be.greaterThan(0);
  });
});
