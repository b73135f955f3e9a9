'use strict';
// Checks the vtable layouts clang printed in MSVC mode (-fdump-vtable-layouts) against the slot
// table kept in the repository (test/win32/iis-vtable-slots.json).
//
//   node check.cjs <table.json> <probe.cpp> probe=<dump> module:<name>=<dump>... <module file>...
//
// The probe's dump must hold every interface of the table, each with exactly the table's
// methods at the table's slots. Each of the module's dumps (one per source that speaks to IIS)
// is checked the same way for every interface it shows, and the module's own classes (the
// table's "implementations") must override their base's methods in the base's slots, in every
// dump that shows them and in one at least. The calls of the module's files (sources and
// headers) must all be named in the table's "module_calls", and the probe must make each of
// them. Prints one line per check and "N passed, N failed".
const fs = require('node:fs');

// A method as the dump prints it, without its return type and class: "SetHeader(PCSTR, PCSTR, USHORT, BOOL)",
// "GetRawHttpRequest() const"; every destructor is "~destructor".
function methodKey(text) {
  const m = /::(~?\w+)\((.*)\)( const)?(?: \[[^\]]*\])*$/.exec(text.trim());
  if (!m) return null;
  if (m[1].startsWith('~')) return '~destructor';
  return `${m[1]}(${m[2]})${m[3] || ''}`;
}

// class name (namespaces dropped) → { key → slot } from every "VFTable indices for 'X'" section.
function parseDump(text) {
  const classes = new Map();
  let current = null;
  for (const line of text.split('\n')) {
    const head = /^VFTable indices for '(.+)' \(\d+ entr(?:y|ies)\)\.$/.exec(line);
    if (head) {
      const name = head[1].replace(/^.*::/, '');
      current = new Map();
      classes.set(name, current);
      continue;
    }
    if (current === null) continue;
    const entry = /^\s*(\d+) \| (.*)$/.exec(line);
    if (!entry) {
      if (line.trim() === '') current = null;
      continue;
    }
    const key = methodKey(entry[2]);
    current.set(key === null ? entry[2] : key, Number(entry[1]));
  }
  return classes;
}

function compareInterface(expected, actual, called) {
  const problems = [];
  for (const [key, slot] of Object.entries(expected)) {
    const mark = called.has(key) ? ' (the module calls it)' : '';
    if (!actual.has(key)) problems.push(`${key}: declared nowhere (expected at slot ${slot})${mark}`);
    else if (actual.get(key) !== slot) problems.push(`${key}: slot ${actual.get(key)}, IIS calls slot ${slot}${mark}`);
  }
  for (const [key, slot] of actual) {
    if (!(key in expected)) problems.push(`${key}: at slot ${slot}, not in the table (IIS has no such method there)`);
  }
  return problems;
}

function main(argv) {
  const [tablePath, probePath, ...rest] = argv;
  const dumps = rest.filter((arg) => arg.includes('='));
  const moduleFiles = rest.filter((arg) => !arg.includes('='));
  const isModule = (label) => label.startsWith('module');
  const implemented = new Set();
  const table = JSON.parse(fs.readFileSync(tablePath, 'utf8'));
  const results = { passed: 0, failed: 0 };
  const check = (title, problems) => {
    if (problems.length === 0) {
      results.passed++;
      console.log(`ok - ${title}`);
    } else {
      results.failed++;
      console.log(`not ok - ${title}`);
      for (const p of problems) console.log(`    ${p}`);
    }
  };

  for (const spec of dumps) {
    const [label, file] = [spec.slice(0, spec.indexOf('=')), spec.slice(spec.indexOf('=') + 1)];
    const classes = parseDump(fs.readFileSync(file, 'utf8'));
    for (const [name, expected] of Object.entries(table.interfaces)) {
      const actual = classes.get(name);
      if (actual === undefined) {
        // The probe must show every interface; the module shows those it uses.
        if (label === 'probe')
          check(`${label}: ${name} laid out`, [`no vtable printed for ${name}: the probe must call into it`]);
        continue;
      }
      check(
        `${label}: ${name}, ${Object.keys(expected).length} slots as IIS lays them out`,
        compareInterface(expected, actual, new Set(table.module_calls[name] || [])),
      );
    }
    if (!isModule(label)) continue;
    for (const [derived, base] of Object.entries(table.implementations)) {
      const actual = classes.get(derived);
      const expected = table.interfaces[base];
      if (actual === undefined) continue;
      implemented.add(derived);
      const problems = [];
      for (const [key, slot] of actual) {
        if (!(key in expected))
          problems.push(`${key}: a virtual ${base} does not have (slot ${slot} is past or beside IIS's)`);
        else if (expected[key] !== slot) problems.push(`${key}: slot ${slot}, IIS calls slot ${expected[key]}`);
      }
      check(`${label}: ${derived} overrides ${base} in place (${[...actual.keys()].join(', ')})`, problems);
    }
  }

  for (const [derived, base] of Object.entries(table.implementations)) {
    if (!implemented.has(derived))
      check(`module: ${derived} overrides ${base} in place`, [`no module dump printed a vtable for ${derived}`]);
  }
  if (moduleFiles.length === 0) check('the module has files to search for IIS calls', ['none was named']);

  // Every IIS method the module calls is in module_calls, and the probe makes every such call.
  const methodNames = new Set();
  for (const expected of Object.values(table.interfaces)) {
    for (const key of Object.keys(expected)) methodNames.add(key.replace(/\(.*$/, ''));
  }
  const calledIn = (file) =>
    new Set(
      [...fs.readFileSync(file, 'utf8').matchAll(/->\s*(\w+)\s*\(/g)]
        .map((m) => m[1])
        .filter((n) => methodNames.has(n)),
    );
  const listed = new Set();
  const unknown = [];
  for (const [iface, keys] of Object.entries(table.module_calls)) {
    for (const key of keys) {
      if (!table.interfaces[iface] || !(key in table.interfaces[iface]))
        unknown.push(`${iface}::${key} is not in the table`);
      listed.add(key.replace(/\(.*$/, ''));
    }
  }
  const moduleCalls = new Map(); // method → the first module file that calls it
  for (const file of moduleFiles) {
    for (const name of calledIn(file)) if (!moduleCalls.has(name)) moduleCalls.set(name, file);
  }
  check(`module_calls names every IIS method the module calls (${[...moduleCalls.keys()].sort().join(', ')})`, [
    ...unknown,
    ...[...moduleCalls]
      .filter(([n]) => !listed.has(n))
      .map(([n, file]) => `${file} calls ${n}, missing from module_calls`),
  ]);
  const probeCalls = calledIn(probePath);
  check(
    'the probe makes every call in module_calls',
    [...listed].filter((n) => !probeCalls.has(n)).map((n) => `the probe never calls ${n}`),
  );

  console.log(`${results.passed} passed, ${results.failed} failed`);
  return results.failed === 0 ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
