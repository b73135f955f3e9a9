// The IIS module's release zip, checked without Windows: .github/workflows/iis.yml is well-formed
// YAML and builds, uploads and (on a v* tag) attaches a zip holding everything the module runs
// with; scripts/iis/install.ps1 is documented and its PowerShell holds together (no PowerShell
// here: brackets balance outside strings and comments, no "$name:" that PowerShell would read as
// a scope, every appcmd call checked). The workflow itself runs on a fork with GitHub Actions.
// Plain Node on Linux (scripts/win32/test.sh runs it); prints "N passed, N failed".
'use strict';
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const workflowFile = path.join(root, '.github', 'workflows', 'iis.yml');
const installFile = path.join(root, 'scripts', 'iis', 'install.ps1');
const results = { passed: 0, failed: 0 };
const tests = [];
const test = (name, fn) => tests.push([name, fn]);

/** YAML → object: js-yaml when node_modules has it, else Python's yaml. */
function parseYaml(file) {
  let yaml;
  try {
    yaml = require('js-yaml');
  } catch {
    const json = execFileSync(
      'python3',
      ['-c', 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))', file],
      { encoding: 'utf8' },
    );
    return JSON.parse(json);
  }
  return yaml.load(fs.readFileSync(file, 'utf8'));
}

let job;
const step = (name) => {
  const found = job.steps.find((s) => typeof s.name === 'string' && s.name.startsWith(name));
  assert.ok(found, `a step named "${name}…"`);
  return found;
};

test('the workflow is well-formed YAML with one Windows job', () => {
  const workflow = parseYaml(workflowFile);
  assert.equal(workflow.name, 'iis');
  job = workflow.jobs.iis;
  assert.equal(job['runs-on'], 'windows-latest');
  assert.ok(Array.isArray(job.steps) && job.steps.length > 5);
  for (const s of job.steps) assert.ok(s.uses || typeof s.run === 'string', `every step runs something: ${s.name}`);
});

test('the zip holds the module, libnode.dll, the addon, the core with its production dependencies, and install.ps1', () => {
  const { run } = step('The release package');
  for (const piece of [
    'gatehouse_iis.dll',
    'libnode.dll',
    'gatehouse_native.node',
    'boot.cjs',
    'Copy-Item -Recurse dist',
    'scripts\\iis\\install.ps1',
    'package-lock.json',
    'node-LICENSE',
  ]) {
    assert.ok(run.includes(piece), `the package step copies ${piece}`);
  }
  assert.match(run, /npm ci --omit=dev --ignore-scripts/);
  // Laid out as an installed package: the module finds ..\..\binding\iis\boot.cjs from its DLL,
  // and the core ..\..\build\Release\gatehouse_native.node from dist\native.
  assert.match(run, /"\$stage\\build\\Release\\"/);
  assert.match(run, /"\$stage\\binding\\iis\\"/);
  assert.match(run, /Compress-Archive -Path \$stage -DestinationPath \$zip/);
});

test('the zip is this run’s artifact, and a v* tag’s release gets it once every test has passed', () => {
  const upload = step('The zip, as this run');
  assert.match(upload.uses, /^actions\/upload-artifact@v\d+$/);
  assert.equal(upload.with.path, '${{ env.ZIP }}');
  const release = step('The zip, attached to the release');
  assert.equal(release.if, "startsWith(github.ref, 'refs/tags/v')");
  assert.match(release.run, /gh release upload \$tag \$env:ZIP --clobber/);
  assert.equal(release.env.GH_TOKEN, '${{ github.token }}');
  assert.equal(job.permissions.contents, 'write');
  const order = job.steps.map((s) => s.name);
  for (const before of ['Smoke tests', 'Uninstall']) {
    assert.ok(
      order.findIndex((n) => (n || '').startsWith(before)) < order.indexOf(release.name),
      `${before} runs before the release`,
    );
  }
});

test('the workflow installs from the zip with install.ps1 and uninstalls with it', () => {
  assert.match(step('Sites and pools').run, /Expand-Archive \$env:ZIP[\s\S]*& C:\\gatehouse\\install\.ps1 -Site /);
  assert.match(step('Uninstall').run, /& C:\\gatehouse\\install\.ps1 -Uninstall/);
});

const script = fs.readFileSync(installFile, 'utf8');

test('install.ps1 is documented: synopsis, what it does, each parameter, examples of install and uninstall', () => {
  const help = /<#([\s\S]*?)#>/.exec(script);
  assert.ok(help, 'a comment-based help block');
  for (const keyword of ['.SYNOPSIS', '.DESCRIPTION', '.EXAMPLE']) assert.ok(help[1].includes(keyword), keyword);
  const params = [.../param\(([\s\S]*?)\n\)/.exec(script)[1].matchAll(/\$(\w+)/g)].map((m) => m[1]);
  assert.deepEqual(params, ['Site', 'ConfigFile', 'LogFile', 'NoRestart', 'Uninstall']);
  for (const p of params) assert.ok(help[1].includes(`.PARAMETER ${p}`), `.PARAMETER ${p}`);
  assert.match(help[1], /\.EXAMPLE\s+\.\\install\.ps1 -Uninstall/);
  assert.ok(script.split('\n').length <= 160, 'short enough to read before running it as an administrator');
});

test('install.ps1 registers the module’s event source (Application log, a message file that prints its text) and -Uninstall removes it', () => {
  assert.match(
    script,
    /\$eventSourceKey = "HKLM:\\SYSTEM\\CurrentControlSet\\Services\\EventLog\\Application\\\$module"/,
  );
  assert.match(
    script,
    /Set-ItemProperty -Path \$eventSourceKey -Name EventMessageFile -Value \$eventMessageFile -Type ExpandString/,
  );
  assert.match(script, /EventLogMessages\.dll/);
  const uninstall = /if \(\$Uninstall\) \{([\s\S]*?)\n\}/.exec(script)[1];
  assert.match(uninstall, /Remove-Item \$eventSourceKey -Recurse/);
});

test('install.ps1 stops on the first failure: administrator only, errors stop, every appcmd call is checked', () => {
  assert.match(script, /^#Requires -RunAsAdministrator$/m);
  assert.match(script, /^\$ErrorActionPreference = 'Stop'$/m);
  assert.equal(
    (script.match(/& \$appcmd/g) || []).length,
    1,
    'appcmd is called in one place, Invoke-AppCmd, which checks its exit code',
  );
  assert.match(script, /if \(\$LASTEXITCODE -ne 0 -and -not \$Tolerate\) \{ throw/);
  // Tolerated only where removing something that may not be there.
  for (const line of script.split('\n').filter((l) => l.includes('Invoke-AppCmd -Tolerate'))) {
    assert.match(line, /"\/-\[|'uninstall'/, `tolerated failure that is not a removal: ${line.trim()}`);
  }
});

test('install.ps1 holds together as PowerShell: brackets balance outside strings and comments, no "$name:" scope trap', () => {
  const stack = [];
  const pairs = { ')': '(', ']': '[', '}': '{' };
  let line = 1;
  for (let i = 0; i < script.length; i++) {
    const c = script[i];
    if (c === '\n') line++;
    if (c === '<' && script[i + 1] === '#') {
      const end = script.indexOf('#>', i);
      assert.ok(end > 0, `an unclosed <# at line ${line}`);
      line += script.slice(i, end).split('\n').length - 1;
      i = end + 1;
    } else if (c === '#') {
      i = script.indexOf('\n', i) - 1;
    } else if (c === "'" || c === '"') {
      // '…' has no escapes ('' is a quote); "…" escapes with a backtick and nests $( … ).
      let j = i + 1;
      for (; j < script.length; j++) {
        if (c === '"' && script[j] === '`') j++;
        else if (script[j] === c && script[j + 1] === c) j++;
        else if (script[j] === c) break;
      }
      assert.ok(j < script.length, `an unclosed ${c} at line ${line}`);
      const text = script.slice(i + 1, j);
      if (c === '"') {
        const trap = /\$(?!env:)[A-Za-z_]\w*:(?=[^\w\\/])/.exec(text);
        assert.equal(
          trap,
          null,
          `"${text}" at line ${line}: PowerShell reads ${trap && trap[0]} as a scope (write \${name})`,
        );
      }
      line += text.split('\n').length - 1;
      i = j;
    } else if ('([{'.includes(c)) {
      stack.push([c, line]);
    } else if (')]}'.includes(c)) {
      const open = stack.pop();
      assert.ok(
        open && open[0] === pairs[c],
        `${c} at line ${line} closes ${open ? `${open[0]} of line ${open[1]}` : 'nothing'}`,
      );
    }
  }
  assert.deepEqual(stack, [], 'every bracket is closed');
});

for (const [name, fn] of tests) {
  try {
    fn();
    results.passed++;
  } catch (error) {
    results.failed++;
    console.log(`FAIL iis release: ${name}: ${error && error.message}`);
  }
}
console.log(`iis release: ${results.passed} passed, ${results.failed} failed`);
console.log(`${results.passed} passed, ${results.failed} failed`);
process.exitCode = results.failed === 0 ? 0 : 1;
