import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

// The layer check (`npm run lint:layers`, .dependency-cruiser.cjs) run through dependency-cruiser's API: clean on the
// real tree, and failing on a copy of the tree that has wrong imports added, each named by its rule.

const ROOT = resolve(import.meta.dirname, '../..');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');

async function check(root: string): Promise<ICruiseResult> {
  const options = await extractDepcruiseOptions(CONFIG);
  const tsConfig = extractTSConfig(join(root, 'tsconfig.json'));
  const { output } = await cruise(
    ['src', 'chains'],
    { ...options, baseDir: root, tsConfig: { fileName: join(root, 'tsconfig.json') }, validate: true },
    undefined,
    { tsConfig },
  );
  return output as ICruiseResult;
}

const key = (v: { from: string; to: string; rule: { name: string } }): string => `${v.rule.name}: ${v.from} → ${v.to}`;
const errors = (r: ICruiseResult): IViolation[] => r.summary.violations.filter((v) => v.rule.severity === 'error');

// Each probe: files added to the copy, and the violation the check must report for them.
const PROBES: { files: Record<string, string>; expect: RegExp }[] = [
  {
    files: { 'src/domain/zz-probe-upward.ts': "export { insertSession } from '../ledger/sessions.js';\n" },
    expect: /^layer-domain: src\/domain\/zz-probe-upward\.ts → src\/ledger\/sessions\.ts$/,
  },
  {
    files: { 'chains/evm/zz-probe-db.ts': "export type { Db } from '../../src/db/database.js';\n" },
    expect: /^layer-chains: chains\/evm\/zz-probe-db\.ts → src\/db\/database\.ts$/,
  },
  {
    files: { 'src/webhooks/zz-probe-ledger.ts': "export { insertOutboxEvent } from '../ledger/outbox.js';\n" },
    expect: /^layer-webhooks: src\/webhooks\/zz-probe-ledger\.ts → src\/ledger\/outbox\.ts$/,
  },
  {
    files: { 'src/api/zz-probe-db-value.ts': "export { createDb } from '../db/database.js';\n" },
    expect: /^layer-api-db-types-only: src\/api\/zz-probe-db-value\.ts → src\/db\/database\.ts$/,
  },
  {
    files: {
      'src/db/zz-probe-cycle-a.ts': "import type { B } from './zz-probe-cycle-b.js';\nexport type A = { b?: B };\n",
      'src/db/zz-probe-cycle-b.ts': "import type { A } from './zz-probe-cycle-a.js';\nexport type B = { a?: A };\n",
    },
    // A cycle is reported once, from whichever of its files the cruise meets first.
    expect: /^no-circular: src\/db\/zz-probe-cycle-[ab]\.ts → src\/db\/zz-probe-cycle-[ab]\.ts$/,
  },
  {
    files: { 'src/newfolder/zz-probe.ts': "export { newId } from '../domain/ids.js';\n" },
    expect: /^layer-unknown: src\/newfolder\/zz-probe\.ts → src\/domain\/ids\.ts$/,
  },
];

describe('layer check', () => {
  let probed: string;

  beforeAll(async () => {
    probed = await mkdtemp(join(tmpdir(), 'layers-'));
    await cp(join(ROOT, 'src'), join(probed, 'src'), { recursive: true });
    await cp(join(ROOT, 'chains'), join(probed, 'chains'), { recursive: true });
    await cp(join(ROOT, 'tsconfig.json'), join(probed, 'tsconfig.json'));
    await symlink(join(ROOT, 'node_modules'), join(probed, 'node_modules'), 'dir');
    for (const [file, text] of PROBES.flatMap((p) => Object.entries(p.files))) {
      await mkdir(dirname(join(probed, file)), { recursive: true });
      await writeFile(join(probed, file), text);
    }
  });

  afterAll(async () => {
    if (probed) await rm(probed, { recursive: true, force: true });
  });

  it('finds no violation on the real tree except the pending-merge list, and every listed one still occurs', async () => {
    const result = await check(ROOT);
    expect(result.summary.totalCruised).toBeGreaterThan(150);
    expect(errors(result).map(key)).toEqual([]);
    const pending = (await import(join(ROOT, '.dependency-cruiser.pending-merge.cjs'))).default as IViolation[];
    const ignored = result.summary.violations.filter((v) => v.rule.severity === 'ignore').map(key);
    // A listed import that no longer exists was fixed by its branch: remove it from .dependency-cruiser.pending-merge.cjs.
    expect(pending.map(key).filter((k) => !ignored.includes(k))).toEqual([]);
  }, 180_000);

  it("states in docs/architecture.md's layer table exactly what each layer rule allows", async () => {
    const docs = await readFile(join(ROOT, 'docs/architecture.md'), 'utf8');
    const section = docs.slice(docs.indexOf('## Layers'), docs.indexOf('\n## ', docs.indexOf('## Layers') + 1));
    const rows = section
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| layer |'))
      .map((l) => l.split('|').map((c) => c.trim()));
    const documented = Object.fromEntries(rows.map((c) => [c[1], c[3]]));
    const { forbidden } = createRequire(import.meta.url)(CONFIG) as { forbidden: { name: string; comment: string }[] };
    const configured = Object.fromEntries(
      forbidden.flatMap((r) => {
        const m = /^(\S+) may import: (.*) \(docs\/architecture\.md, Layers\)$/.exec(r.comment);
        return r.name.startsWith('layer-') && m ? [[m[1], m[2]]] : [];
      }),
    );
    expect(Object.keys(configured).length).toBeGreaterThan(10);
    expect(documented).toEqual({ ...configured, entry: 'everything' });
  });

  it('names every wrong import added to a copy of the tree, and nothing else', async () => {
    const found = errors(await check(probed)).map(key);
    for (const p of PROBES) expect(found.filter((k) => p.expect.test(k)), `${p.expect}`).toHaveLength(1);
    expect(found.filter((k) => !k.includes('zz-probe'))).toEqual([]);
  }, 180_000);
});
