import { cpSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

// Deliberately broken builds (issue #20: "a deliberately broken build fails within the CI seed set"). `--mutant NAME`
// copies the project (minus node_modules, .git, test/ and bench results; node_modules is symlinked) into a temp
// directory, applies the mutant's exact string replacements there and runs the service's roles from that copy; the
// runner and the invariants keep running the real code. A replacement whose anchor text is not found exactly once
// fails the run before anything starts, so a mutant cannot silently stop mutating when the code it breaks changes.
// Production code is never touched. docs/simulation.md ("Broken builds it catches").

export interface Replacement {
  file: string;
  find: string;
  replace: string;
}

export interface Mutant {
  name: string;
  /** What the broken build does wrong, and what it loses. */
  breaks: string;
  replacements: Replacement[];
}

const CURSOR_SAVE_IN_STEP = `      const version = await saveCursor(trx, this.key, expected, {
        cursor: poll.cursor,
        tip: poll.processedTip,
        finalHeight: poll.finalHeight,
      });
`;

/**
 * The one attempt store (src/ledger/outbound/attempt-store.ts) with one kind's view of its own attempts removed: the engine sees
 * none live (liveAttempts) and the signing transaction does not re-check them (the lock-then-race check).
 */
function attemptCheckRemoved(table: 'payout_attempts' | 'sweep_step_attempts'): Replacement[] {
  const file = 'src/ledger/outbound/attempt-store.ts';
  return [
    {
      file,
      find: '    liveAttempts: (job) => liveAttemptsOf(db, t, k.jobId(job)),\n',
      replace: `    liveAttempts: async (job) => (t.table === '${table}' ? [] : liveAttemptsOf(db, t, k.jobId(job))),\n`,
    },
    {
      file,
      find: "        if (!(await attemptsAsSeen(trx, t, k.jobId(job), replacing))) return 'raced' as const;\n",
      replace: `        if (t.table !== '${table}' && !(await attemptsAsSeen(trx, t, k.jobId(job), replacing))) return 'raced' as const;\n`,
    },
  ];
}

export const MUTANTS: Mutant[] = [
  {
    name: 'cursor-before-effects',
    breaks:
      "the EVM watcher commits its chain cursor in its own transaction before the step's deposits are recorded and " +
      'credited: a crash between the two loses the deposits of that range for good',
    replacements: [
      {
        file: 'src/watcher/network-watcher.ts',
        find: '    const outcome = await db.transaction().execute(async (trx) => {\n',
        replace:
          '    const savedFirst = await db.transaction().execute((c) =>\n' +
          '      saveCursor(c, this.key, expected, { cursor: poll.cursor, tip: poll.processedTip, finalHeight: poll.finalHeight }),\n' +
          '    );\n' +
          '    const outcome = await db.transaction().execute(async (trx) => {\n',
      },
      { file: 'src/watcher/network-watcher.ts', find: CURSOR_SAVE_IN_STEP, replace: '      const version = savedFirst;\n' },
    ],
  },
  {
    name: 'resign-without-attempt-check',
    breaks:
      'a refund payout step signs and broadcasts a fresh transaction without looking at the attempts it already ' +
      'signed (neither the engine nor the signing transaction sees them): every retry pays the refund again',
    replacements: attemptCheckRemoved('payout_attempts'),
  },
  {
    name: 'sweep-resign-without-attempt-check',
    breaks:
      'a sweep step (a gas top-up of a deposit address, or its token transfer to the hot wallet) signs and broadcasts a ' +
      'fresh transaction without looking at the attempts it already signed: every retry of the step sends again',
    replacements: attemptCheckRemoved('sweep_step_attempts'),
  },
];

export function findMutant(name: string): Mutant {
  const m = MUTANTS.find((x) => x.name === name);
  if (!m) throw new Error(`--mutant: unknown mutant "${name}" (known: ${MUTANTS.map((x) => x.name).join(', ')})`);
  return m;
}

/** Applies the replacements to `text`; throws unless each anchor occurs exactly once (in the text as it is then). */
export function applyReplacements(file: string, text: string, replacements: Replacement[]): string {
  let out = text;
  for (const r of replacements) {
    const n = out.split(r.find).length - 1;
    if (n !== 1)
      throw new Error(`mutant anchor found ${n} times (exactly once expected) in ${file}: ${JSON.stringify(r.find.slice(0, 120))}`);
    out = out.replace(r.find, () => r.replace);
  }
  return out;
}

const SKIP = new Set(['node_modules', '.git', 'test', 'bench-results', 'dist']);

/** A mutated copy of the project at `root`: returns its directory (run the roles there) and how to remove it. */
export function buildMutantTree(root: string, mutant: Mutant): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `stablepay-mutant-${mutant.name}-`));
  try {
    cpSync(root, dir, {
      recursive: true,
      filter: (src) => {
        const rel = relative(root, src);
        return rel === '' || !SKIP.has(rel.split('/')[0]!);
      },
    });
    symlinkSync(realpathSync(join(root, 'node_modules')), join(dir, 'node_modules'));
    const byFile = new Map<string, Replacement[]>();
    for (const r of mutant.replacements) byFile.set(r.file, [...(byFile.get(r.file) ?? []), r]);
    for (const [file, rs] of byFile) {
      const path = join(dir, file);
      writeFileSync(path, applyReplacements(file, readFileSync(path, 'utf8'), rs));
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
