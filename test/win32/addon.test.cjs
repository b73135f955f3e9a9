// Runs in the Windows build of Node (under wine, see scripts/win32/test.sh),
// against the mingw-w64 cross-compiled addon: the shared conformance vectors,
// the interception hook from native threads through the module's portable
// parts (the native module host), the engine's native test host, and the IIS
// module's HTTP_REQUEST → request view. Plain CommonJS with node:assert, so it
// needs nothing but Node.
'use strict';
const assert = require('node:assert/strict');
const { createHmac } = require('node:crypto');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const release = process.argv[2];
const addon = require(path.join(release, 'gatehouse_native.node'));
const host = require(path.join(release, 'gatehouse_module_host.node'));
const vectors = (name) => JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'vectors', name), 'utf8'));
const results = { passed: 0, failed: 0 };
const tests = [];
const test = (name, fn) => tests.push([name, fn]);

test('platform is Windows and the addon speaks ABI 4', () => {
  assert.equal(process.platform, 'win32');
  assert.equal(addon.abiVersion, 4);
});

for (const v of vectors('signatures.json').vectors) {
  test(`signature vector: ${v.name}`, () => {
    const body = Buffer.from(v.bodyHex, 'hex');
    assert.equal(addon.verifySignature(v.secrets, body, v.header), v.valid);
    assert.equal(new addon.Verifier(v.secrets).verify(body, v.header), v.valid);
  });
}

const headerVectors = vectors('headers.json');
const text = (bytes) => Buffer.from(bytes, 'latin1').toString('utf8');
for (const v of headerVectors.vectors) {
  test(`header vector: ${v.name}`, () => {
    const identity = typeof v.identity === 'string' ? headerVectors.identities[v.identity] : v.identity;
    const run = () => addon.normalizeHeaders(v.inbound, identity, v.options);
    if (v.error === 'forbidden-character') return assert.throws(run, (e) => e.code === 'ERR_GH_FORBIDDEN_CHARACTER');
    if (v.error === 'type') return assert.throws(run, TypeError);
    const out = run();
    assert.deepEqual(out.remove.map(text), v.expect.remove);
    const expected = v.expect.set.map(([n, value]) => [
      n,
      typeof value === 'string' ? value : Buffer.from(value.principalJson, 'utf8').toString('base64'),
    ]);
    assert.deepEqual(
      out.set.map(([n, value]) => [n, text(value)]),
      expected,
    );
  });
}

const requests = (n) =>
  Array.from({ length: n }, (_, i) => ({
    method: 'GET',
    scheme: 'https',
    host: 'app.example',
    path: `/item/${i}`,
    query: '',
    remoteAddress: '10.0.0.1',
    headers: [['X-Request', String(i)]],
  }));

const attached = (policy) => {
  const interceptor = new addon.Interceptor(policy);
  interceptor.attachHost(host.link, '/.auth/');
  return interceptor;
};

test('hook: 64 native threads of the module host, every request decided exactly once by the JavaScript policy', async () => {
  const interceptor = attached(async (request) => ({
    kind: 'continue',
    remove: [],
    set: [['X-PLATFORM-CLIENT-PRINCIPAL-ID', request.path]],
  }));
  const out = await host.replay(requests(640), 64);
  interceptor.close();
  // An asynchronous policy decides on the JavaScript thread, normally after the native thread went
  // pending; a native thread descheduled between submit and settling (64 threads on a few cores, under
  // wine) finds the decision already there and applies it inline. Either way it is applied once.
  assert.ok(
    out.some((r) => !r.inline),
    'some requests went pending',
  );
  out.forEach((r, i) => {
    assert.equal(r.completions, 1, `request ${i}: completions`);
    assert.equal(r.resumes, r.inline ? 0 : 1, `request ${i}: resumes (inline: ${r.inline})`);
    assert.deepEqual(r.set, [['X-PLATFORM-CLIENT-PRINCIPAL-ID', `/item/${i}`]]);
  });
});

test('hook: a throwing policy answers 500; close() answers pending requests 503; detached, the host answers 503 inline', async () => {
  const failing = attached(() => {
    throw new Error('boom');
  });
  for (const r of await host.replay(requests(8), 4)) assert.equal(r.status, 500);
  failing.close();
  const stuck = attached(() => new Promise(() => undefined));
  const pending = host.replay(requests(8), 4);
  while (stuck.pendingCount() < 4) await new Promise((resolve) => setTimeout(resolve, 5));
  stuck.close();
  for (const r of await pending) {
    assert.equal(r.status, 503);
    assert.deepEqual(r.headers, [
      ['Content-Type', 'application/json; charset=utf-8'],
      ['Retry-After', '5'],
    ]);
  }
  assert.equal(host.attached(), false);
  for (const r of await host.replay(requests(4), 2)) assert.deepEqual([r.status, r.inline, r.resumes], [503, true, 0]);
});

test('IIS module: HTTP_REQUEST → request view (the Windows SDK structures, built by mingw-w64)', () => {
  const out = execFileSync(path.join(release, 'gatehouse_http_request_view_test.exe'), {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.match(out, /^\d+ checks passed$/m, out);
});

test('IIS module: auth-route bodies read asynchronously, with a limit and a deadline on thread-pool timers', () => {
  const out = execFileSync(path.join(release, 'gatehouse_body_reader_test.exe'), {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.match(out, /^\d+ checks passed$/m, out);
});

test('IIS module: the Node thread gets the 8 MB stack it asks for (a 6 MB recursion runs on it)', () => {
  const out = execFileSync(path.join(release, 'gatehouse_stack_thread_test.exe'), {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.match(out, /^\d+ checks passed$/m, out);
});

test('addon: the delay-load hook answers node.exe imports from libnode.dll, then node.dll, then the process image', () => {
  const out = execFileSync(path.join(release, 'gatehouse_delay_load_test.exe'), [path.join(release, 'delay-load')], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.match(out, /^\d+ checks passed$/m, out);
});

test('addon: its Node-API imports are delay-loaded from node.exe, through the project hook', () => {
  // The addon loaded above made its Node-API calls; none came through the ordinary import table,
  // so each went through the delay-load helper and the hook (GNU ld leaves the delay-import data
  // directory empty, so the helper's name and node.exe's are looked for in the image instead).
  const image = fs.readFileSync(path.join(release, 'gatehouse_native.node'));
  assert.equal(
    importsFrom(image).some((n) => n.toLowerCase() === 'node.exe'),
    false,
    'node.exe is not an ordinary import',
  );
  assert.ok(
    image.includes(Buffer.from('__delayLoadHelper2\0')) && image.includes(Buffer.from('node.exe\0')),
    'the delay-load helper and node.exe are in the image',
  );
  assert.ok(image.includes(Buffer.from('gatehouse_delay_load_hook')), 'the project hook is linked');
});

test('engine: the native test host from 64 threads, no lost or duplicated completion', () => {
  const report = JSON.parse(
    execFileSync(path.join(release, 'gatehouse_engine_stress.exe'), ['64', '100', '4'], {
      encoding: 'utf8',
      timeout: 120_000,
    }),
  );
  assert.equal(report.completedOnce, report.submitted);
  assert.equal(report.completedTwice, 0);
  assert.equal(report.pendingAfterShutdown, 0);
});

// The DLL names in a PE image's import directory (data directory 1).
function importsFrom(image) {
  const pe = image.readUInt32LE(0x3c);
  const optional = pe + 24;
  assert.equal(image.readUInt16LE(optional), 0x20b, 'a PE32+ image');
  const sections = optional + image.readUInt16LE(pe + 20);
  const count = image.readUInt16LE(pe + 6);
  const toOffset = (rva) => {
    for (let i = 0; i < count; i++) {
      const s = sections + i * 40;
      const va = image.readUInt32LE(s + 12);
      const size = Math.max(image.readUInt32LE(s + 8), image.readUInt32LE(s + 16));
      if (rva >= va && rva < va + size) return rva - va + image.readUInt32LE(s + 20);
    }
    throw new Error(`RVA ${rva} is in no section`);
  };
  const directory = image.readUInt32LE(optional + 112 + 1 * 8);
  const names = [];
  if (directory === 0) return names;
  for (let at = toOffset(directory); ; at += 20) {
    const nameRva = image.readUInt32LE(at + 12);
    if (nameRva === 0) break;
    const start = toOffset(nameRva);
    names.push(image.toString('latin1', start, image.indexOf(0, start)));
  }
  return names;
}

(async () => {
  for (const [name, fn] of tests) {
    try {
      await fn();
      results.passed++;
    } catch (error) {
      results.failed++;
      console.log(`FAIL ${name}: ${error && error.message}`);
    }
  }
  console.log(`node ${process.version} ${process.platform}-${process.arch}`);
  console.log(`${results.passed} passed, ${results.failed} failed`);
  process.exitCode = results.failed === 0 ? 0 : 1;
})();
