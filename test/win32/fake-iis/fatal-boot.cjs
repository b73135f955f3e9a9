// GATEHOUSE_IIS_BOOT of the fake IIS's "uncaught" worker process: the package's own boot script
// (the real in-server core), then, when the test posts 'throw', an uncaught exception in the
// core's environment (as .github/workflows/iis.yml's throw.cjs does after a while on a real IIS).
'use strict';
const path = require('node:path');
const { parentPort } = require('node:worker_threads');

require(path.join(process.env.GATEHOUSE_FAKE_IIS_PACKAGE, 'binding', 'iis', 'boot.cjs'));
parentPort.on('message', (message) => {
  if (message !== 'throw') return;
  setImmediate(() => {
    throw new Error('fake-iis: an uncaught exception in the core');
  });
});
