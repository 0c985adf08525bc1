// Vite build of the console's single-page app (src/console/ui) into dist/console-ui: index.html plus hashed
// assets, relative base so it works under any path prefix, no inline script or style (CSP script-src/style-src
// 'self'). After writing, prints every chunk's gzipped size and the initial download against its budget.
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import { formatKb, gzipBytes, INITIAL_JS_BUDGET_GZIP_BYTES } from './bundle-budget.js';

const root = fileURLToPath(new URL('.', import.meta.url));
const outDir = fileURLToPath(new URL('../../../dist/console-ui', import.meta.url));

function printSizes(): Plugin {
  return {
    name: 'console-ui-sizes',
    apply: 'build',
    writeBundle(_options, bundle) {
      const chunks = Object.values(bundle).filter((c) => c.type === 'chunk');
      const entry = chunks.find((c) => c.isEntry);
      const initial = new Set<string>();
      const visit = (file: string) => {
        if (initial.has(file)) return;
        initial.add(file);
        const chunk = chunks.find((c) => c.fileName === file);
        for (const dep of chunk?.imports ?? []) visit(dep);
      };
      if (entry) visit(entry.fileName);
      let total = 0;
      const lines = chunks
        .map((c) => {
          const gz = gzipBytes(c.code);
          if (initial.has(c.fileName)) total += gz;
          return `  ${initial.has(c.fileName) ? '*' : ' '} ${c.fileName.padEnd(40)} ${formatKb(gz).padStart(10)} gzip`;
        })
        .sort();
      process.stdout.write(
        `console-ui: gzipped JavaScript (* = initial download)\n${lines.join('\n')}\n` +
          `console-ui: initial download ${formatKb(total)} gzip (budget ${formatKb(INITIAL_JS_BUDGET_GZIP_BYTES)})\n`,
      );
    },
  };
}

export default defineConfig({
  root,
  base: './',
  publicDir: false,
  logLevel: 'warn',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  plugins: [printSizes()],
  build: {
    outDir,
    emptyOutDir: true,
    assetsDir: 'assets',
    // Nothing inlined as a data: URL, no modulepreload polyfill (an inline-free module script is all there is).
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
    // No manifest in dist (the console would serve it); the bundle budget test builds with --manifest.
    manifest: false,
  },
});
