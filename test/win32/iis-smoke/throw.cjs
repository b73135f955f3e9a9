// GATEHOUSE_IIS_BOOT of the smoke job's "throw" pool: the real boot, then an uncaught exception.
'use strict';
require(process.env.GATEHOUSE_SMOKE_BOOT);
setTimeout(() => {
  throw new Error('smoke: an uncaught exception in the core');
}, 5000);
