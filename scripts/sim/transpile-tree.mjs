// `node scripts/sim/transpile-tree.mjs <root> <out>`: every .ts file of <root>/src and <root>/chains (not
// declarations) transpiled by TypeScript's own emitter, file by file (`transpileModule`: no type check), into the same
// place under <out> as an ES2022 module with its import specifiers unchanged. A separate process, so the simulator's
// environment keeps starting while this runs (service-build.ts). Plain Node, no TypeScript loader needed.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

const [root, out] = process.argv.slice(2);
if (!root || !out) throw new Error('usage: transpile-tree.mjs <root> <out>');
const compilerOptions = { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, sourceMap: false, esModuleInterop: true };
const files = { count: 0 };
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) {
      const r = ts.transpileModule(readFileSync(path, 'utf8'), { compilerOptions, fileName: path, reportDiagnostics: true });
      const errors = (r.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
      if (errors.length > 0)
        throw new Error(`transpiling ${relative(root, path)} failed: ${ts.flattenDiagnosticMessageText(errors[0].messageText, ' ')}`);
      const to = join(out, relative(root, path)).replace(/\.ts$/, '.js');
      mkdirSync(dirname(to), { recursive: true });
      writeFileSync(to, r.outputText);
      files.count++;
    }
  }
};
for (const top of ['src', 'chains']) if (existsSync(join(root, top))) walk(join(root, top));
process.stdout.write(`${files.count}\n`);
