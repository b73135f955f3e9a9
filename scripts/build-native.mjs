#!/usr/bin/env node
// The install step: a native addon for this machine, or a clear word on why not.
//
// In a checkout (test/ is there) it builds the addon from source with cmake-js, offline, against
// the running Node, with the native test hosts. In an installed package it first tries the
// prebuilt addon the package ships (prebuilds/, found as the running program finds it: see
// src/native/addon-location.ts); only when none loads, or npm was asked to build from source
// (npm rebuild gatehouse --build-from-source), does it build: then cmake-js, node-addon-api and
// node-api-headers must be installed beside gatehouse (they are development dependencies, not
// every user's), with CMake and a C++17 compiler.
//
// Without --strict a failure is a warning: gatehouse then runs on the TypeScript fallback.
// `npm run build` passes --strict, which always builds from source and fails loudly.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const strict = process.argv.includes('--strict');
const checkout = existsSync(path.join(root, 'test'));
const fromSourceAsked = process.env.npm_config_build_from_source === 'true';

// Node's headers (with its OpenSSL headers) sit beside the binary: <prefix>/include/node.
const nodeInclude = path.resolve(path.dirname(process.execPath), '..', 'include', 'node');

const FROM_SOURCE_HINT =
  'to build it from source: npm install --save-dev cmake-js node-addon-api node-api-headers, ' +
  'then npm rebuild gatehouse (needs CMake >= 3.15 and a C++17 compiler)';

function fail(message) {
  if (strict) {
    console.error(`gatehouse: native build failed: ${message}`);
    process.exit(1);
  }
  const hint = checkout ? '' : `; ${FROM_SOURCE_HINT}`;
  console.warn(`gatehouse: native addon not built (${message}); the TypeScript fallback will be used${hint}.`);
  process.exit(0);
}

/** The prebuilt addon, loaded and checked as the server will (dist/ is in every package); why not, when it does not. */
async function tryPrebuilt() {
  const entry = path.join(root, 'dist', 'native', 'addon.js');
  if (!existsSync(entry)) return { problem: `${entry} is missing` };
  const { ADDON_LOCATION, loadAddonCore } = await import(pathToFileURL(entry).href);
  try {
    loadAddonCore();
    return { location: ADDON_LOCATION };
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
}

/** cmake-js's command, found from the package as Node finds any module (the app's node_modules). */
function cmakeJsCommand() {
  try {
    const manifest = createRequire(path.join(root, 'package.json')).resolve('cmake-js/package.json');
    return path.join(path.dirname(manifest), 'bin', 'cmake-js');
  } catch {
    return undefined;
  }
}

if (process.env.GATEHOUSE_SKIP_NATIVE_BUILD === '1') fail('GATEHOUSE_SKIP_NATIVE_BUILD=1');

let prebuiltProblem;
if (!strict && !checkout && !fromSourceAsked) {
  const prebuilt = await tryPrebuilt();
  if (prebuilt.location !== undefined) {
    const { path: file, source } = prebuilt.location;
    console.log(`gatehouse: native addon ready (${source}: ${path.relative(root, file)})`);
    process.exit(0);
  }
  prebuiltProblem = prebuilt.problem;
}

const because = prebuiltProblem === undefined ? '' : `${prebuiltProblem}; `;
if (!existsSync(path.join(nodeInclude, 'openssl', 'evp.h'))) {
  fail(`${because}no OpenSSL headers under ${nodeInclude} to build it from source`);
}
const cmakeJs = cmakeJsCommand();
if (cmakeJs === undefined) fail(`${because}cmake-js is not installed`);
if (!checkout) console.log(`gatehouse: ${because}building the native addon from source`);

// The native test hosts are built only in a checkout (a package has no test/).
const testHosts = checkout ? 'ON' : 'OFF';
const result = spawnSync(
  process.execPath,
  [
    cmakeJs,
    'compile',
    '--directory',
    root,
    `--CDGATEHOUSE_NODE_INCLUDE=${nodeInclude}`,
    `--CDGATEHOUSE_TEST_HOSTS=${testHosts}`,
    '--log-level',
    'warn',
  ],
  { stdio: 'inherit', cwd: root },
);
if (result.error) fail(`${because}${result.error.message}`);
if (result.status !== 0) fail(`${because}cmake-js exited with ${result.status}`);
