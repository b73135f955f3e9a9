// The Node environment the IIS module starts (binding/iis/node_runtime.cpp), as the fake IIS
// starts it: a worker thread of the test's Node (node.exe, under wine) instead of an environment
// inside w3wp.exe. Like the embedding it
//   - gives the environment the `gatehouse_host` binding, the very one the module links
//     (binding/iis/linked_binding.cpp, from this worker process's copy of the fake IIS DLL);
//     node::AddLinkedBinding cannot be called from an addon, so process._linkedBinding answers it;
//   - keeps the event loop alive until the module stops Node (the embedding's stop handle; here
//     a port listener), so a core that has nothing to do does not end;
//   - runs the boot script as the embedding's main script does: createRequire(boot)(boot).
// process.exit() and an uncaught exception end this environment only, as the embedding's
// process-exit handler makes them end its own.
'use strict';
const { createRequire } = require('node:module');
const { parentPort, workerData } = require('node:worker_threads');

const binding = require(workerData.addon).linkedBinding();
const linked = process._linkedBinding;
process._linkedBinding = function linkedBinding(name) {
  return name === 'gatehouse_host' ? binding : linked.call(process, name);
};
parentPort.on('message', () => undefined);
process.argv[1] = workerData.bootScript;
createRequire(workerData.bootScript)(workerData.bootScript);
