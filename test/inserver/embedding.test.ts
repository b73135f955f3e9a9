// The IIS module's Node embedding (binding/iis/node_runtime.cpp) needs libnode
// to link, which this machine lacks; but it must compile against the very
// Node headers of the running version (the embedder API moves between majors).
import { execFileSync } from 'node:child_process';
import path from 'node:path';

import { expect } from 'chai';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const NODE_INCLUDE = path.resolve(path.dirname(process.execPath), '..', 'include', 'node');

describe('IIS module: the Node embedding', function () {
  this.timeout(60_000);

  it(`compiles against this Node's headers (${process.version}) without a warning`, () => {
    // C++20: the V8 headers of Node 22 and later require it (and MSVC builds the module so).
    const run = () =>
      execFileSync(
        'g++',
        [
          '-std=c++20',
          '-fsyntax-only',
          '-Wall',
          '-Wextra',
          '-Werror',
          '-isystem',
          NODE_INCLUDE,
          path.join(ROOT, 'binding', 'iis', 'node_runtime.cpp'),
        ],
        { encoding: 'utf8', stdio: 'pipe' },
      );
    expect(run).not.to.throw();
  });
});
