// GATEHOUSE_IIS_BOOT of the fake IIS's "throws" worker process: a core that misbehaves, made of
// the real parts (the addon's interceptor, attached through the `gatehouse_host` binding the
// module gives its Node, as src/inserver/host.ts attaches the auth core) with a policy that
//   /throw   throws while deciding            (the module answers 500)
//   /reject  rejects                          (500)
//   /exit    calls process.exit(7) while the decision is pending (that request and every later one 503)
//   /never   never decides (a promise that never settles: the module's deadline answers 503)
//   other    lets the request continue
'use strict';
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const dist = path.join(process.env.GATEHOUSE_FAKE_IIS_PACKAGE, 'dist');
const load = (file) => import(pathToFileURL(path.join(dist, file)).href);

Promise.all([load('native/interceptor.js'), load('inserver/host.js')]).then(
  ([{ createInterceptor }, { embeddedHostLink }]) => {
    const interceptor = createInterceptor((request) => {
      if (request.path === '/throw') throw new Error('fake-iis: a core that throws');
      if (request.path === '/reject') return Promise.reject(new Error('fake-iis: a core that rejects'));
      if (request.path === '/never') return new Promise(() => undefined);
      if (request.path === '/exit') {
        setImmediate(() => process.exit(7));
        return new Promise(() => undefined);
      }
      return { kind: 'continue', remove: [], set: [] };
    });
    interceptor.attachHost(embeddedHostLink(), '/.auth/');
  },
);
