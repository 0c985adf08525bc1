// After tsc: copies every file of src/ and chains/ that is not TypeScript (the checkout page's script and style, ...)
// to the same place under dist/, where the compiled modules look for them (import.meta.url). Plain Node, no
// dependency: it runs in the Dockerfile's build stage and in `npm run build`.
import { cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const OUT = 'dist';
let copied = 0;
// The console's single-page app (src/console/ui) is built by Vite into dist/console-ui (npm run build:console);
// its sources are not copied.
const SKIP = new Set([join('src', 'console', 'ui')]);
function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (SKIP.has(path)) continue;
    if (statSync(path).isDirectory()) walk(path);
    else if (!/\.(ts|tsx|mts|cts)$/.test(name)) {
      cpSync(path, join(OUT, path));
      copied++;
    }
  }
}
for (const root of ['src', 'chains']) if (existsSync(root)) walk(root);
// The error reference the service serves at /docs/errors (src/api/error-docs.ts reads ../../docs/errors.md).
if (existsSync('docs/errors.md')) {
  cpSync('docs/errors.md', join(OUT, 'docs', 'errors.md'));
  copied++;
}
process.stdout.write(`copied ${copied} asset file(s) to ${OUT}/\n`);
