import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceHarness, type ServiceHarness } from '../support/service-harness.js';

// The README's "Your first signed request" shell snippets, taken verbatim from README.md and run with bash against a
// started service. Only `export` lines are prepended (the service's environment and BASE); the snippet text is not
// touched. They run in a scratch directory that links to the checkout, so the files they write stay out of the tree.
const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const SECTION = '### Your first signed request';

/** The bodies of the ```sh blocks between the section heading and the next heading of the same or a higher level. */
function firstRequestSnippets(readme: string): string[] {
  const start = readme.indexOf(SECTION);
  if (start < 0) throw new Error(`README.md has no "${SECTION}" section`);
  const rest = readme.slice(start + SECTION.length);
  const end = rest.search(/^#{1,3} /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

const shellQuote = (v: string) => `'${v.replaceAll("'", `'\\''`)}'`;

let h: ServiceHarness;
let dir: string;

beforeAll(async () => {
  h = await startServiceHarness();
  dir = await mkdtemp(join(tmpdir(), 'readme-snippets-'));
  for (const entry of ['package.json', 'node_modules', 'src', 'chains', 'tsconfig.json']) {
    await symlink(join(ROOT, entry), join(dir, entry));
  }
});

afterAll(async () => {
  await h?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('README snippets', () => {
  it('"Your first signed request" runs verbatim: the create answers a session and the GET returns it', async () => {
    const snippets = firstRequestSnippets(await readFile(join(ROOT, 'README.md'), 'utf8'));
    expect(snippets).toHaveLength(3);
    const exports = Object.entries({ ...h.env, BASE: h.base }).map(([k, v]) => `export ${k}=${shellQuote(v)}`);
    const script = [...exports, ...snippets].join('\n');
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir, timeout: 90_000 });

    const createText = await readFile(join(dir, 'session.json'), 'utf8');
    const created = JSON.parse(createText);
    expect(created).toMatchObject({ status: 'open', amount_total: '25.00', currency: 'usd', metadata: { order_id: 'order-1001' } });
    expect(created.id).toMatch(/^cs_/);
    // stdout is the create answer (tee) followed by the GET answer.
    expect(stdout.startsWith(createText)).toBe(true);
    const fetched = JSON.parse(stdout.slice(createText.length));
    expect(fetched).toEqual(created);

    const merchant = JSON.parse(await readFile(join(dir, 'merchant.json'), 'utf8'));
    const row = await h.t.db.selectFrom('payment_sessions').select(['id', 'merchant_id']).where('id', '=', created.id).executeTakeFirst();
    expect(row).toEqual({ id: created.id, merchant_id: merchant.merchant_id });
  });
});
