// `node --import ./test/support/module-log.mjs ...`: appends every module the process resolves (ESM imports and CommonJS
// requires, one URL or path a line) to the file named by MODULE_LOG. Used to prove what a command does not load
// (test/integration/cli-lazy-imports.test.ts).
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';

register('./module-log-hook.mjs', import.meta.url);
const load = Module._load;
Module._load = function (request, parent, isMain) {
  const exports = load.call(this, request, parent, isMain);
  try {
    appendFileSync(process.env.MODULE_LOG, `${Module._resolveFilename(request, parent)}\n`);
  } catch {
    // a built-in without a file name
  }
  return exports;
};
