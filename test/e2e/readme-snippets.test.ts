import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceHarness, type ServiceHarness } from '../support/service-harness.js';

// The README's "Your first signed request" shell snippets, taken verbatim from README.md and run with bash against a
// started service; and "Your first request with the client package": its program saved under the name the README
// gives, its shell block (build the client workspace, run the program) run after the merchant-creating block. Only `export` lines are prepended (the service's environment and BASE); the snippet text is not
// touched. They run in a scratch directory that links to the checkout, so the files they write stay out of the tree.
const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const SECTION = '### Your first signed request';
const CLIENT_SECTION = '### Your first request with the client package';

/** The README's text between a `### ` heading and the next heading of the same or a higher level. */
function section(readme: string, heading: string): string {
  const start = readme.indexOf(heading);
  if (start < 0) throw new Error(`README.md has no "${heading}" section`);
  const rest = readme.slice(start + heading.length);
  const end = rest.search(/^#{1,3} /m);
  return end < 0 ? rest : rest.slice(0, end);
}

/** The bodies of the fenced blocks of a language in a section. */
function blocks(text: string, lang: 'sh' | 'js'): string[] {
  return [...text.matchAll(new RegExp(`^\`\`\`${lang}\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((m) => m[1]!);
}

const firstRequestSnippets = (readme: string) => blocks(section(readme, SECTION), 'sh');

const shellQuote = (v: string) => `'${v.replaceAll("'", `'\\''`)}'`;

let h: ServiceHarness;
const dirs: string[] = [];

/** A scratch directory linking to the checkout (packages/: the client workspace the README builds). */
async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'readme-snippets-'));
  dirs.push(dir);
  for (const entry of ['package.json', 'node_modules', 'src', 'chains', 'tsconfig.json', 'packages']) {
    await symlink(join(ROOT, entry), join(dir, entry));
  }
  return dir;
}

beforeAll(async () => {
  h = await startServiceHarness();
});

afterAll(async () => {
  await h?.close();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('README snippets', () => {
  it('"Your first signed request" runs verbatim: the create answers a session and the GET returns it', async () => {
    const dir = await scratch();
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

  it('"Your first request with the client package" runs verbatim: the client creates and reads a session, unsigned by the reader', async () => {
    const dir = await scratch();
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const text = section(readme, CLIENT_SECTION);
    const [program, ...moreJs] = blocks(text, 'js');
    const shell = blocks(text, 'sh');
    expect(moreJs).toHaveLength(0);
    expect(shell).toHaveLength(1);
    expect(program).not.toMatch(/createHmac|X-Service-Signature/i); // the client signs, not the reader
    const file = /Save this as `([^`]+)`/.exec(text)?.[1];
    expect(file).toBe('first-request.mjs');
    await writeFile(join(dir, file!), program!);
    // The merchant from "Your first signed request" (its first block sets KEY and SECRET), then this section's commands.
    const [createMerchant] = firstRequestSnippets(readme);
    const exports = Object.entries({ ...h.env, BASE: h.base }).map(([k, v]) => `export ${k}=${shellQuote(v)}`);
    const script = [...exports, createMerchant!, shell[0]!].join('\n');
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir, timeout: 150_000 });

    const [created, read, missing] = stdout.trim().split('\n');
    const [id, status, url] = created!.split(' ');
    expect(id).toMatch(/^cs_/);
    expect(status).toBe('open');
    expect(url).toMatch(/^https?:\/\/\S+/);
    expect(read).toBe(`${id} open`);
    expect(missing).toMatch(/^404 resource_not_found req_\S+$/);
    const merchant = JSON.parse(await readFile(join(dir, 'merchant.json'), 'utf8'));
    const row = await h.t.db.selectFrom('payment_sessions').select(['merchant_id', 'order_id']).where('id', '=', id!).executeTakeFirst();
    expect(row).toEqual({ merchant_id: merchant.merchant_id, order_id: 'order-1002' });
  }, 200_000);
});
