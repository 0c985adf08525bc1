import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// How the simulator starts the service's roles (docs/simulation.md, "Throughput"): under tsx from the sources (the
// default), or from a build compiled once per invocation (`--build dist` or SIM_SERVICE_BUILD=dist). The compiled build
// is made from the tree the roles would run from (the project, or a mutant's mutated copy: scripts/sim/mutants.ts) into
// a private temp directory (never the project's dist/, which another build may be using): every .ts file of src/ and
// chains/ transpiled by TypeScript's own emitter file by file (`transpileModule`: the same per-file transform tsx
// applies when it loads a file, done once ahead of time, without the type check that `npm run typecheck` does; in its
// own process, transpile-tree.mjs, so the environment keeps starting meanwhile), the
// non-TypeScript assets copied as `npm run build` does (scripts/tools/copy-build-assets.mjs), the package.json (ES
// modules) and a node_modules link. A node process then starts `dist/src/main.js` there with no transform at start-up.
// (A full `tsc -p tsconfig.build.json` took 96 s on this loaded machine, transpiling 27 s.)

const run = promisify(execFile);
const TRANSPILER = join(dirname(fileURLToPath(import.meta.url)), 'transpile-tree.mjs');

export type BuildMode = 'tsx' | 'dist';

/** Node's arguments for one role from the sources (the supervisor's default too). */
export const TSX_SERVICE_ARGS: readonly string[] = ['--import', 'tsx', 'src/main.ts'];

export interface ServiceBuild {
  mode: BuildMode;
  /** Where the roles run (their working directory). */
  cwd: string;
  /** Node's arguments for one role. */
  args: string[];
  /** How long preparing the build took (0 under tsx). */
  ms: number;
  remove(): void;
}

export function buildModeOf(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): BuildMode {
  const v = flag ?? env.SIM_SERVICE_BUILD ?? 'tsx';
  if (v !== 'tsx' && v !== 'dist') throw new Error(`--build / SIM_SERVICE_BUILD: "tsx" or "dist", got "${v}"`);
  return v;
}

export async function prepareServiceBuild(sourceRoot: string, mode: BuildMode): Promise<ServiceBuild> {
  if (mode === 'tsx') return { mode, cwd: sourceRoot, args: [...TSX_SERVICE_ARGS], ms: 0, remove: () => {} };
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'stablepay-sim-build-'));
  try {
    // The transpiler is resolved from the source tree's node_modules (typescript), run in its own process.
    await run(process.execPath, [TRANSPILER, sourceRoot, join(dir, 'dist')], { cwd: sourceRoot, maxBuffer: 16 * 1024 * 1024 }).catch(
      (err: Error & { stderr?: string }) => {
        throw new Error(`transpiling the service for the simulator failed: ${err.stderr || err.message}`);
      },
    );
    copyAssets(sourceRoot, join(dir, 'dist'));
    cpSync(join(sourceRoot, 'package.json'), join(dir, 'package.json'));
    symlinkSync(realpathSync(join(sourceRoot, 'node_modules')), join(dir, 'node_modules'));
    if (!existsSync(join(dir, 'dist', 'src', 'main.js'))) throw new Error('the compiled build has no dist/src/main.js');
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    mode,
    cwd: dir,
    args: ['dist/src/main.js'],
    ms: Date.now() - started,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The files of src/ and chains/ that are not TypeScript, and docs/errors.md, at the same place under `out`. */
function copyAssets(root: string, out: string): void {
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (!/\.(ts|tsx|mts|cts)$/.test(name)) {
        const to = join(out, relative(root, path));
        mkdirSync(join(to, '..'), { recursive: true });
        cpSync(path, to);
      }
    }
  };
  for (const top of ['src', 'chains']) if (existsSync(join(root, top))) walk(join(root, top));
  if (existsSync(join(root, 'docs', 'errors.md'))) {
    mkdirSync(join(out, 'docs'), { recursive: true });
    cpSync(join(root, 'docs', 'errors.md'), join(out, 'docs', 'errors.md'));
  }
}
