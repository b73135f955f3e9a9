// Where the addon is looked for, in a package laid out on disk as each case has it.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { BUILT_ADDON_PATH, locateAddon } from '../../src/native/addon-location.js';

/** A package root holding these files (any .node file is the checkout's built addon, copied). */
function packageWith(files: readonly string[]): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-location-'));
  writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'gatehouse' }));
  for (const file of files) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    copyFileSync(BUILT_ADDON_PATH, path.join(root, file));
  }
  return root;
}

const here = `${process.platform}-${process.arch}`;
const roots: string[] = [];
const layout = (files: readonly string[]): string => {
  const root = packageWith(files);
  roots.push(root);
  return root;
};

describe('the addon location', () => {
  after(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

  it('GATEHOUSE_NATIVE_ADDON comes first, as given', () => {
    const root = layout(['build/Release/gatehouse_native.node']);
    expect(locateAddon({ GATEHOUSE_NATIVE_ADDON: '/elsewhere/x.node' }, root)).to.deep.equal({
      path: '/elsewhere/x.node',
      source: 'environment',
    });
  });

  it("a build of this machine's own comes before a prebuilt one", () => {
    const root = layout(['build/Release/gatehouse_native.node', `prebuilds/${here}/node.napi.glibc.node`]);
    expect(locateAddon({}, root)).to.deep.equal({
      path: path.join(root, 'build/Release/gatehouse_native.node'),
      source: 'built',
    });
  });

  it('else the prebuilt one for this platform and C library, as node-gyp-build chooses', () => {
    const root = layout([
      `prebuilds/${here}/node.napi.musl.node`,
      `prebuilds/${here}/node.napi.glibc.node`,
      'prebuilds/another-arch/node.napi.glibc.node',
    ]);
    expect(locateAddon({}, root)).to.deep.equal({
      path: path.join(root, `prebuilds/${here}/node.napi.glibc.node`),
      source: 'prebuilt',
    });
  });

  it("build/Release's test host is never taken for the addon", () => {
    const root = layout(['build/Release/gatehouse_module_host.node']);
    const location = locateAddon({}, root);
    expect(location.source).to.equal('none');
    expect(location.path).to.equal(path.join(root, 'build/Release/gatehouse_native.node'));
    expect(location.problem).to.equal(
      `not built at ${location.path}, and no prebuilt addon for ${here} in ${path.join(root, 'prebuilds')}`,
    );
  });

  it('none at all: says where it looked and what was asked for', () => {
    const root = layout([`prebuilds/${here}/node.napi.musl.node`]);
    const location = locateAddon({}, root);
    expect(location.source).to.equal('none');
    expect(location.problem).to.match(
      new RegExp(
        `^not built at .*, and no prebuilt addon fits \\(No native build was found for platform=${process.platform} arch=${process.arch} `,
      ),
    );
  });
});
