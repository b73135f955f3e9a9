// A core of the tests' own for the IIS module's Node embedding run for real
// (test/inserver/embedding.test.ts): laid out as the package's dist/inserver/main.js, so the
// module's real boot script (binding/iis/boot.cjs) loads it. It attaches to the host link as
// the in-server core does (the real addon's Interceptor) and answers what the tests ask:
//   /ready                  200
//   /heap                   200, {"heapSizeLimit", "execArgv", "version"}
//   /recurse                200, the name of what a runaway recursion threw
//   /exit                   process.exit(7) while deciding
//   /throw                  200, then an exception thrown from the event loop
// Node 18 (Debian's libnode) cannot run the gatehouse core itself; the mechanics are the same.
'use strict';
const v8 = require('node:v8');

const { Interceptor } = require(process.env.GATEHOUSE_TEST_ADDON);
const link = process._linkedBinding('gatehouse_host').link;

const answer = (status, body) => ({ kind: 'respond', status, headers: [], body: Buffer.from(body) });

function decide(request) {
  switch (request.path) {
    case '/ready':
      return answer(200, 'ready');
    case '/heap':
      return answer(
        200,
        JSON.stringify({
          heapSizeLimit: v8.getHeapStatistics().heap_size_limit,
          execArgv: process.execArgv,
          version: process.version,
        }),
      );
    case '/recurse': {
      const deeper = (n) => deeper(n + 1) + 1;
      try {
        deeper(0);
        return answer(500, 'no end');
      } catch (error) {
        return answer(200, error.constructor.name);
      }
    }
    case '/exit':
      process.exit(7);
      break;
    case '/throw':
      setImmediate(() => {
        throw new Error('the tests’ core throws from the event loop');
      });
      return answer(200, 'thrown next');
    default:
      return answer(404, 'no such test path');
  }
}

const interceptor = new Interceptor(decide, (requests) => requests.map(decide));
interceptor.attachHost(link, '/.auth/');
