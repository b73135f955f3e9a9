// GATEHOUSE_IIS_BOOT of the smoke job's "never" pool: a core that never decides /never (a promise
// that never settles; the module's GATEHOUSE_IIS_DECISION_TIMEOUT answers 503) and lets anything
// else through, made of the installed package's real parts (the addon's interceptor attached
// through the module's `gatehouse_host` binding, as src/inserver/host.ts attaches the auth core).
'use strict';
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const dist = path.join(path.dirname(process.env.GATEHOUSE_SMOKE_BOOT), '..', '..', 'dist');
const load = (file) => import(pathToFileURL(path.join(dist, file)).href);

Promise.all([load('native/interceptor.js'), load('inserver/host.js')]).then(
  ([{ createInterceptor }, { embeddedHostLink }]) => {
    const interceptor = createInterceptor((request) =>
      request.path === '/never' ? new Promise(() => undefined) : { kind: 'continue', remove: [], set: [] },
    );
    interceptor.attachHost(embeddedHostLink(), '/.auth/');
  },
);
