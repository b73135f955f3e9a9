// The IIS module (binding/iis/gatehouse_module.cpp, its request handler: built with MSVC, run here
// only in the Windows leg's fake IIS) spells out how much of an auth-route body it reads and how long it waits for it.
// They must be the core's limit and the sidecar's deadline, so they are read from its source
// and compared.
import { readFileSync } from 'node:fs';

import { expect } from 'chai';

import { MAX_AUTH_BODY_BYTES } from '../../src/core/http/request-view.js';
import { DEFAULT_AUTH_BODY_DEADLINE_MS } from '../../src/sidecar/front-door.js';

const source = readFileSync(new URL('../../binding/iis/gatehouse_module.cpp', import.meta.url), 'utf8');

/** A `constexpr <type> <name> = <n> [* <n> ...];` of the handler, evaluated. */
function moduleConstant(name: string): number {
  const match = new RegExp(`constexpr \\w+ ${name} = ([0-9]+(?: \\* [0-9]+)*);`).exec(source);
  if (match === null) expect.fail(`no constexpr ${name} = <number>; in binding/iis/gatehouse_module.cpp`);
  return match[1]!.split(' * ').reduce((product, factor) => product * Number(factor), 1);
}

describe('IIS module: the auth-route body limits it spells out', () => {
  it('reads no more than the core takes (the reader keeps one byte beyond, so the core can say it is too large)', () => {
    expect(moduleConstant('kMaxAuthBody')).to.equal(MAX_AUTH_BODY_BYTES);
  });

  it('waits for a body as long as the sidecar does', () => {
    expect(moduleConstant('kAuthBodyDeadlineMs')).to.equal(DEFAULT_AUTH_BODY_DEADLINE_MS);
  });
});
