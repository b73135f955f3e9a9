// Loaded by the IIS module's embedded Node (binding/iis/node_runtime.cpp) as
// its main script. CommonJS on purpose: it imports the ESM entry the ordinary
// way, whatever an embedder's main script may do.
//
// The worker process has no console, so what Node would print as it ends (an uncaught
// exception's stack, process.exit()) is written where someone will look: GATEHOUSE_LOG_FILE
// (a JSON line in the core's shape) and the Windows event log (the module's report). Only
// observed: the module's process-exit handler then stops Node, never the worker process;
// the module answers 503 and asks IIS for a new worker process (docs/in-server-module.md).
// An entry that cannot be loaded ends Node the same way, with its reason written first.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

let host = null;
try {
  host = process._linkedBinding('gatehouse_host');
} catch {
  // Not inside the module (e.g. a test): nothing to report to but the log file.
}

function record(message, error) {
  const file = process.env.GATEHOUSE_LOG_FILE;
  if (file) {
    const err =
      error instanceof Error
        ? { type: error.name, message: error.message, stack: error.stack }
        : error === undefined
          ? undefined
          : { message: String(error) };
    const line = {
      level: 60,
      time: Date.now(),
      pid: process.pid,
      name: 'gatehouse',
      service: 'gatehouse',
      ...(err ? { err } : {}),
      msg: message,
    };
    try {
      fs.appendFileSync(file, `${JSON.stringify(line)}\n`);
    } catch {
      // The event log below still says it.
    }
  }
  if (host && typeof host.report === 'function') {
    const detail =
      error instanceof Error ? `: ${error.stack || error.message}` : error === undefined ? '' : `: ${String(error)}`;
    host.report(`gatehouse: ${message}${detail}`.slice(0, 2000));
  }
}

let uncaught = false;
process.on('uncaughtExceptionMonitor', (error, origin) => {
  uncaught = true;
  record(
    `in-server: an uncaught exception (${origin}) ended the core; the module answers 503 and asks IIS for a new worker process`,
    error,
  );
});
process.on('exit', (code) => {
  if (!uncaught)
    record(
      `in-server: the core ended Node (process.exit, exit code ${code}); the module answers 503 and asks IIS for a new worker process`,
    );
});

const entry = path.join(__dirname, '..', '..', 'dist', 'inserver', 'main.js');
import(pathToFileURL(entry).href).catch((error) => {
  // Nothing would attach, and the module's handle keeps Node's loop alive: end it, so that the
  // module sees Node end and asks for a new worker process.
  uncaught = true; // the exit below is this failure's, already said
  record(`in-server: cannot load ${entry}`, error);
  process.exit(1);
});
