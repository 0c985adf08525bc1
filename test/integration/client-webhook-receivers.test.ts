import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signature } from '../../packages/client/src/index.js';
import { freePort } from '../support/anvil.js';
import { startServiceHarness, type ServiceHarness } from '../support/service-harness.js';

// The Express and Fastify webhook receivers of docs/client.md, run as written there (the ```ts block under each
// heading, saved to a file and started with tsx), importing the built @stablepay/client by name, against real
// deliveries of the running service: a real `payment.cancelled` is verified and handled once; a forged delivery is
// refused with 400 `signature`; a replay of a delivered event id is answered 200 and not handled again.
const run = promisify(execFile);
const ROOT = resolve('.');
const TSX = join(ROOT, 'node_modules/tsx/dist/cli.mjs');
const DOC = readFileSync(join(ROOT, 'docs/client.md'), 'utf8');
const scratch = join(ROOT, 'test-artifacts');
mkdirSync(scratch, { recursive: true });
const dir = mkdtempSync(join(scratch, 'receivers-')); // inside the checkout: express and fastify from its node_modules
const installed = join(dir, 'node_modules/@stablepay/client');

/** The first ```ts block under a `### ` heading of docs/client.md. */
function program(heading: string): string {
  const start = DOC.indexOf(`### ${heading}\n`);
  if (start < 0) throw new Error(`docs/client.md has no "### ${heading}"`);
  const rest = DOC.slice(start + heading.length + 5);
  const section = rest.slice(0, rest.search(/^#{2,3} /m));
  const block = /^```ts\n([\s\S]*?)^```$/m.exec(section)?.[1];
  if (!block) throw new Error(`no ts block under "### ${heading}"`);
  return block;
}

let h: ServiceHarness;
const children: ChildProcess[] = [];

beforeAll(async () => {
  h = await startServiceHarness();
  // The client as an application installs it: its package.json and tsc's output (the workspace build, to a scratch dir).
  mkdirSync(installed, { recursive: true });
  cpSync(join(ROOT, 'packages/client/package.json'), join(installed, 'package.json'));
  await run('npm', ['run', '-s', 'build', '-w', '@stablepay/client', '--', '--outDir', join(installed, 'dist')], { cwd: ROOT });
}, 240_000);

afterAll(async () => {
  for (const c of children) c.kill('SIGTERM');
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ['Express receiver', 'express'],
  ['Fastify receiver', 'fastify'],
])('docs/client.md "%s"', (heading, name) => {
  it('verifies and handles a real delivery once, refuses a forged one, answers a replay without handling it again', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/hooks`;
    const m = await h.newMerchant(`${name} receiver shop`, url);
    const file = join(dir, `${name}-receiver.ts`);
    writeFileSync(file, program(heading));
    const child = spawn(process.execPath, [TSX, file], {
      cwd: dir,
      env: { ...process.env, WEBHOOK_SECRET: m.webhookSecret, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    await h.until(async () => ((await fetch(url).catch(() => undefined)) ? true : undefined), 90_000);

    // A forged delivery: the right headers, a signature made with another secret.
    const forgedBody = JSON.stringify({ id: 'evt_forged', type: 'payment.completed', data: { object: {} } });
    const ts = String(Math.floor(Date.now() / 1000));
    const forged = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-timestamp': ts,
        'x-service-nonce': 'forged-1',
        'x-service-event-id': 'evt_forged',
        'x-service-signature': signature('whsec_not_the_secret', ts, 'forged-1', forgedBody),
      },
      body: forgedBody,
    });
    expect(forged.status).toBe(400);
    expect(await forged.json()).toEqual({ error: 'signature' });

    // A real event: a session canceled; the service delivers payment.cancelled and records the receiver's 200.
    const created = await m.client.post('/api/v1/checkout/sessions/create', { amount: '3.00', currency: 'USD', order_id: `${name}-1` });
    expect(created.status).toBe(200);
    expect((await m.client.post(`/api/v1/checkout/sessions/${created.json.id}/cancel`, {})).status).toBe(200);
    const delivery = await h.until(
      () =>
        h.t.db
          .selectFrom('webhook_deliveries')
          .select(['event_id', 'status', 'last_status_code', 'body'])
          .where('merchant_id', '=', m.id)
          .where('event_type', '=', 'payment.cancelled')
          .where('status', '=', 'delivered')
          .executeTakeFirst(),
      120_000,
    );
    expect(delivery.last_status_code).toBe(200);
    expect(delivery.body).toContain(created.json.id);
    const handled = () => output.split('\n').filter((l) => l.includes('webhook event') && l.includes(delivery.event_id));
    expect(handled()).toHaveLength(1);
    expect(handled()[0]).toContain('payment.cancelled');

    // The same event delivered again (a retry after a lost answer): 200, not handled a second time.
    const ts2 = String(Math.floor(Date.now() / 1000));
    const replay = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-timestamp': ts2,
        'x-service-nonce': 'replay-1',
        'x-service-event-id': delivery.event_id,
        'x-service-signature': signature(m.webhookSecret, ts2, 'replay-1', delivery.body),
      },
      body: delivery.body,
    });
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual({ received: true });
    expect(handled()).toHaveLength(1);
    expect(output).not.toContain('evt_forged');
  }, 240_000);
});
