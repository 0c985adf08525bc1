import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

// The layer check (`npm run lint:layers`, .dependency-cruiser.cjs) run through dependency-cruiser's API: clean on the
// real tree, and failing on a copy of the tree that has wrong imports added, each named by its rule.

const ROOT = resolve(import.meta.dirname, '../..');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const requireCjs = createRequire(import.meta.url);

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
    files: { 'src/domain/zz-probe-upward.ts': "export { insertSession } from '../ledger/payments/sessions.js';\n" },
    expect: /^layer-domain: src\/domain\/zz-probe-upward\.ts → src\/ledger\/payments\/sessions\.ts$/,
  },
  {
    files: { 'chains/evm/zz-probe-db.ts': "export type { Db } from '../../src/db/database.js';\n" },
    expect: /^layer-chains: chains\/evm\/zz-probe-db\.ts → src\/db\/database\.ts$/,
  },
  {
    files: { 'src/webhooks/zz-probe-ledger.ts': "export { insertOutboxEvent } from '../ledger/core/outbox.js';\n" },
    expect: /^layer-webhooks: src\/webhooks\/zz-probe-ledger\.ts → src\/ledger\/core\/outbox\.ts$/,
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
    files: {
      'test/zz-probe-helper.ts': 'export const helper = 1;\n',
      'src/ledger/core/zz-probe-test-code.ts': "export { helper } from '../../../test/zz-probe-helper.js';\n",
    },
    expect: /^no-test-or-script-code: src\/ledger\/core\/zz-probe-test-code\.ts → test\/zz-probe-helper\.ts$/,
  },
  {
    // Inside the ledger: a lower room importing a higher one (docs/architecture.md, Rooms of the ledger).
    files: { 'src/ledger/journal/zz-probe-room.ts': "export { insertSession } from '../payments/sessions.js';\n" },
    expect: /^room-journal: src\/ledger\/journal\/zz-probe-room\.ts → src\/ledger\/payments\/sessions\.ts$/,
  },
  {
    files: { 'src/checkout/zz-probe-family.ts': "export { EvmChainAdapter } from '../../chains/evm/adapter.js';\n" },
    expect: /^chain-family-outside-adapters: src\/checkout\/zz-probe-family\.ts → chains\/evm\/adapter\.ts$/,
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

  it('finds no violation on the real tree, and ignores none', async () => {
    const result = await check(ROOT);
    expect(result.summary.totalCruised).toBeGreaterThan(150);
    expect(errors(result).map(key)).toEqual([]);
    expect(result.summary.violations.filter((v) => v.rule.severity === 'ignore').map(key)).toEqual([]);
  }, 180_000);

  it("states in docs/architecture.md's layer table exactly what each layer rule allows", async () => {
    const docs = await readFile(join(ROOT, 'docs/architecture.md'), 'utf8');
    const section = docs.slice(docs.indexOf('## Layers'), docs.indexOf('\n## ', docs.indexOf('## Layers') + 1));
    const rows = section
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| layer |'))
      .map((l) => l.split('|').map((c) => c.trim()));
    const documented = Object.fromEntries(rows.map((c) => [c[1], c[3]]));
    const { forbidden } = requireCjs(CONFIG) as { forbidden: { name: string; comment: string }[] };
    const configured = Object.fromEntries(
      forbidden.flatMap((r) => {
        const m = /^(\S+) may import: (.*) \(docs\/architecture\.md, Layers\)$/.exec(r.comment);
        return r.name.startsWith('layer-') && m ? [[m[1], m[2]]] : [];
      }),
    );
    expect(Object.keys(configured).length).toBeGreaterThan(10);
    expect(documented).toEqual({ ...configured, entry: 'everything' });
  });

  it("states in docs/architecture.md's rooms table exactly what each room of the ledger may import", async () => {
    const docs = await readFile(join(ROOT, 'docs/architecture.md'), 'utf8');
    const start = docs.indexOf('## Rooms of the ledger');
    const section = docs.slice(start, docs.indexOf('\n## ', start + 1));
    const rows = section
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| room |'))
      .map((l) => l.split('|').map((c) => c.trim()));
    const documented = Object.fromEntries(rows.map((c) => [c[1], c[3]]));
    const { forbidden } = requireCjs(CONFIG) as { forbidden: { name: string; comment: string }[] };
    const configured = Object.fromEntries(
      forbidden.flatMap((r) => {
        const m = /^ledger room (\S+) may import: (.*) \(docs\/architecture\.md, Rooms of the ledger\)$/.exec(r.comment);
        return r.name.startsWith('room-') && m ? [[m[1], m[2]]] : [];
      }),
    );
    expect(Object.keys(configured).length).toBeGreaterThan(5);
    expect(documented).toEqual(configured);
  });

  it('names every wrong import added to a copy of the tree, and nothing else', async () => {
    const found = errors(await check(probed)).map(key);
    for (const p of PROBES)
      expect(
        found.filter((k) => p.expect.test(k)),
        `${p.expect}`,
      ).toHaveLength(1);
    expect(found.filter((k) => !k.includes('zz-probe'))).toEqual([]);
  }, 180_000);
});

// The import rules cannot see what a service does with the Kysely handle it holds, so the single-writer rule is
// checked on the source: a write (Kysely builder or raw SQL) to a table outside src/ledger/ and src/db/ (migrations)
// is an error, except the webhook relay's own delivery log and its outbox relay marker.
const OWN_TABLES: Record<string, string[]> = {
  'src/webhooks/': ['webhook_deliveries', 'webhook_delivery_attempts', 'outbox_events'],
};
const WRITES = [
  /\.(?:insertInto|updateTable|deleteFrom|mergeInto|replaceInto)\(\s*['"`]([a-z_]+)/g,
  /\b(?:insert\s+into|delete\s+from|merge\s+into)\s+([a-z_]+)/gi,
  /\bupdate\s+([a-z_]+)\s+set\b/gi,
];

function tableWrites(text: string): string[] {
  return WRITES.flatMap((re) => [...text.matchAll(re)].map((m) => m[1]!.toLowerCase()));
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name));
}

describe('the ledger is the only writer', () => {
  it('finds the writes it looks for', () => {
    expect(tableWrites("await db.updateTable('api_keys').set({})")).toEqual(['api_keys']);
    expect(tableWrites('sql`INSERT INTO deposits (id) values (1)`; sql`update refunds\n  set status = 1`')).toEqual([
      'deposits',
      'refunds',
    ]);
    expect(tableWrites("db.selectFrom('merchants'); // we update nothing here")).toEqual([]);
  });

  it('has no write to a business table outside src/ledger/', async () => {
    const found: string[] = [];
    for (const file of [...(await sourceFiles(join(ROOT, 'src'))), ...(await sourceFiles(join(ROOT, 'chains')))]) {
      const rel = relative(ROOT, file);
      if (rel.startsWith('src/ledger/') || rel.startsWith('src/db/')) continue;
      const own = Object.entries(OWN_TABLES).flatMap(([dir, tables]) => (rel.startsWith(dir) ? tables : []));
      for (const t of tableWrites(await readFile(file, 'utf8'))) if (!own.includes(t)) found.push(`${rel} writes ${t}`);
    }
    expect(found).toEqual([]);
  });
});
