#!/usr/bin/env node
// Builds the C++ addon with cmake-js, offline, against the running Node.
//
// `npm install` runs this without --strict: a machine without a C++ toolchain
// still gets a working gatehouse (the TypeScript fallback) and a clear
// warning. `npm run build` passes --strict, so a broken build fails loudly.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const strict = process.argv.includes('--strict');

// Node's headers (with its OpenSSL headers) sit beside the binary: <prefix>/include/node.
const nodeInclude = path.resolve(path.dirname(process.execPath), '..', 'include', 'node');

function fail(message) {
  if (strict) {
    console.error(`gatehouse: native build failed: ${message}`);
    process.exit(1);
  }
  console.warn(`gatehouse: native addon not built (${message}); the TypeScript fallback will be used.`);
  process.exit(0);
}

if (process.env.GATEHOUSE_SKIP_NATIVE_BUILD === '1') fail('GATEHOUSE_SKIP_NATIVE_BUILD=1');
if (!existsSync(path.join(nodeInclude, 'openssl', 'evp.h'))) {
  fail(`no OpenSSL headers under ${nodeInclude}`);
}

// The native test hosts are built only in a source checkout (the published package has no test/).
const testHosts = existsSync(path.join(root, 'test')) ? 'ON' : 'OFF';
const cmakeJs = path.join(root, 'node_modules', 'cmake-js', 'bin', 'cmake-js');
const result = spawnSync(
  process.execPath,
  [cmakeJs, 'compile', '--directory', root, `--CDGATEHOUSE_NODE_INCLUDE=${nodeInclude}`, `--CDGATEHOUSE_TEST_HOSTS=${testHosts}`, '--log-level', 'warn'],
  { stdio: 'inherit', cwd: root },
);
if (result.error) fail(result.error.message);
if (result.status !== 0) fail(`cmake-js exited with ${result.status}`);
