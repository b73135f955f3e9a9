// GATEHOUSE_IIS_BOOT of the smoke job's "exit" pool: the real boot, then process.exit().
'use strict';
require(process.env.GATEHOUSE_SMOKE_BOOT);
setTimeout(() => process.exit(7), 5000);
