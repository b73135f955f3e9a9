// Loaded by the IIS module's embedded Node (binding/iis/node_runtime.cpp) as
// its main script. CommonJS on purpose: it imports the ESM entry the ordinary
// way, whatever an embedder's main script may do.
'use strict';
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const entry = path.join(__dirname, '..', '..', 'dist', 'inserver', 'main.js');
import(pathToFileURL(entry).href).catch((error) => {
  process.stderr.write(`gatehouse: cannot load ${entry}: ${error && error.message}\n`);
  process.exitCode = 1;
});
