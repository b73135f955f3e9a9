// The IIS module's deadlines (binding/iis/deadline_timer.cpp: the cold start's wait and a
// decision's deadline), checked with real time and threads by a native program of their own
// (binding/host/deadline_timer_test.cpp), built here with g++ into build/iis-checks.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

import { expect } from 'chai';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

describe('IIS module: its deadlines', function () {
  this.timeout(60_000);

  it('run in the order of their times, once, unless cancelled in time; the timer outlives a throw and stops without running the rest', () => {
    const dir = path.join(ROOT, 'build', 'iis-checks');
    mkdirSync(dir, { recursive: true });
    const program = path.join(dir, 'deadline_timer_test');
    execFileSync(
      'g++',
      [
        '-std=c++17',
        '-O1',
        '-Wall',
        '-Wextra',
        '-Werror',
        '-pthread',
        '-o',
        program,
        path.join(ROOT, 'binding', 'host', 'deadline_timer_test.cpp'),
        path.join(ROOT, 'binding', 'iis', 'deadline_timer.cpp'),
      ],
      { stdio: 'pipe' },
    );
    const out = execFileSync(program, { encoding: 'utf8' });
    expect(out).to.not.match(/FAIL/);
    expect(out).to.match(/^9 checks passed$/m);
  });
});
