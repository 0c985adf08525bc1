import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// packages/client as an npm workspace of the root (docs/client.md): `npm run build -w @stablepay/client` compiles it
// with tsc, the root's node_modules links it, and a consumer imports it by name through its exports map (JavaScript
// and TypeScript), with nothing at run time but Node's own modules. The build goes to a scratch directory (tsc's
// --outDir passed through npm), installed there as a consumer's node_modules/@stablepay/client would be: the
// checkout's packages/client/dist is left to the README snippet test, which builds it itself.
const run = promisify(execFile);
const ROOT = resolve('.');
const PKG = join(ROOT, 'packages/client');
const scratch = join(ROOT, 'test-artifacts');
mkdirSync(scratch, { recursive: true });
const dir = mkdtempSync(join(scratch, 'client-consumer-')); // inside the checkout: @types/node from the root's node_modules
const installed = join(dir, 'node_modules/@stablepay/client');
const DIST = join(installed, 'dist');

beforeAll(async () => {
  mkdirSync(installed, { recursive: true });
  cpSync(join(PKG, 'package.json'), join(installed, 'package.json'));
  await run('npm', ['run', '-s', 'build', '-w', '@stablepay/client', '--', '--outDir', DIST], { cwd: ROOT });
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the client workspace', () => {
  it('is a workspace of the root, linked in node_modules and recorded in the lock', () => {
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces?: string[] };
    expect(root.workspaces).toEqual(['packages/client']);
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
    expect(lock.packages['node_modules/@stablepay/client']).toEqual({ resolved: 'packages/client', link: true });
    expect(readFileSync(join(ROOT, 'node_modules/@stablepay/client/package.json'), 'utf8')).toBe(
      readFileSync(join(PKG, 'package.json'), 'utf8'),
    );
  });

  it('builds with tsc; no runtime dependency: none in its package.json, only node: and relative imports in the output', () => {
    expect(readdirSync(DIST).sort()).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'client.js', 'webhooks.js']));
    const pkg = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg.dependencies).toBeUndefined();
    expect(pkg.peerDependencies).toBeUndefined();
    const files = readdirSync(DIST).filter((f) => f.endsWith('.js'));
    expect(files).toContain('index.js');
    for (const f of files) {
      const specifiers = [...readFileSync(join(DIST, f), 'utf8').matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]!);
      for (const s of specifiers) expect(s, `${f} imports ${s}`).toMatch(/^(node:|\.\/)/);
    }
  });

  it('a consumer imports it by name through the exports map: sign, then verify a webhook, with the built code', async () => {
    const script = join(dir, 'consumer.mjs');
    writeFileSync(
      script,
      `import { verifyWebhook, signature, StablepayClient, WebhookVerificationError } from '@stablepay/client';
const body = JSON.stringify({ id: 'evt_1', type: 'payment.completed', data: { object: {} } });
const ts = String(Math.floor(Date.now() / 1000));
const headers = { 'x-service-timestamp': ts, 'x-service-nonce': 'n1', 'x-service-event-id': 'evt_1',
  'x-service-signature': signature('whsec_test', ts, 'n1', body) };
const event = verifyWebhook(body, headers, ['whsec_test']);
let refused = '';
try { verifyWebhook(body, headers, ['whsec_other']); } catch (e) { refused = e instanceof WebhookVerificationError ? e.reason : String(e); }
let hidden = '';
try { await import('@stablepay/client/dist/client.js'); } catch (e) { hidden = e.code; }
console.log(JSON.stringify({ id: event.id, refused, hidden, client: typeof StablepayClient,
  resolved: import.meta.resolve('@stablepay/client') }));
`,
    );
    const { stdout } = await run(process.execPath, [script], { cwd: dir });
    const out = JSON.parse(stdout) as Record<string, string>;
    expect(out).toMatchObject({ id: 'evt_1', refused: 'signature', hidden: 'ERR_PACKAGE_PATH_NOT_EXPORTED', client: 'function' });
    expect(out.resolved).toBe(`file://${join(DIST, 'index.js')}`);
  }, 60_000);

  it('a TypeScript consumer type-checks against the built declarations', async () => {
    writeFileSync(
      join(dir, 'consumer.ts'),
      `import { StablepayClient, type PaymentSession } from '@stablepay/client';
const client = new StablepayClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'sk_test_x', apiSecret: 's' });
export const created: Promise<PaymentSession> = client.sessions.create({ amount: '1.00', currency: 'USD', order_id: 'o' });
`,
    );
    writeFileSync(join(dir, 'bad.ts'), `import { StablepayClient } from '@stablepay/client';\nnew StablepayClient({ baseUrl: 1 });\n`);
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const flags = [
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--types',
      'node',
    ];
    await run(process.execPath, [tsc, ...flags, join(dir, 'consumer.ts')], { cwd: dir });
    const bad = await run(process.execPath, [tsc, ...flags, join(dir, 'bad.ts')], { cwd: dir }).then(
      () => '',
      (e: { stdout: string }) => e.stdout,
    );
    expect(bad).toMatch(/error TS\d+/); // the declarations are really used
  }, 120_000);
});
