import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/args.js';
import { webhooksCli } from '../../src/cli/webhooks.js';
import { startDeliveryWorker, startOutboxRelay } from '../../src/webhooks/index.js';
import type { Resolver } from '../../src/webhooks/url-policy.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { eventually, startWebhookHarness, type WebhookHarness } from './webhooks-harness.js';

// The operator CLI against a running relay and worker: list failures, resend one or all since a time, rotate a
// secret, set a URL under the endpoint rules.

let h: WebhookHarness;
let r: WebhookReceiver;
const stops: Array<{ stop(): Promise<void> }> = [];

const fakeDns: Resolver = async (host) => {
  const table: Record<string, string[]> = {
    'internal.example.com': ['10.0.0.1'],
    'hooks.example.com': ['93.184.216.34'],
    'mixed.example.com': ['93.184.216.34', '192.168.1.10'],
  };
  const a = table[host];
  if (!a) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  return a.map((address) => ({ address, family: 4 as const }));
};

async function cli(...args: string[]): Promise<any> {
  let printed: unknown;
  await webhooksCli(args, {
    db: h.db,
    redis: h.redis,
    box: h.box,
    config: { REDIS_KEY_PREFIX: h.prefix },
    resolve: fakeDns,
    out: (v) => (printed = v),
  });
  return JSON.parse(JSON.stringify(printed));
}

const status = (id: string) =>
  h.db.selectFrom('webhook_deliveries').select(['status', 'generation', 'attempts']).where('event_id', '=', id).executeTakeFirst();
const settled = (id: string) =>
  eventually(
    () => status(id),
    (s) => s !== undefined && s.status !== 'pending',
  );

beforeAll(async () => {
  h = await startWebhookHarness();
  r = await startWebhookReceiver();
  stops.push(startOutboxRelay({ db: h.db, redis: h.redis, prefix: h.prefix, databaseUrl: h.t.url, pollIntervalMs: 200 }));
  stops.push(
    startDeliveryWorker({
      db: h.db,
      redis: h.redis,
      box: h.box,
      prefix: h.prefix,
      retrySchedule: [50, 50, 50, 50, 50],
      timeoutMs: 500,
      concurrency: 8,
      perMerchantConcurrency: 8,
      allowPrivateTargetsInTest: true,
    }),
  );
});

afterAll(async () => {
  for (const s of stops) await s.stop();
  await r?.close();
  await h?.close();
});

describe('webhooks CLI', () => {
  it('lists failed deliveries, resends one, and resends all failed since a time', async () => {
    const m = await h.merchant(r.url);
    const other = await h.merchant(r.url, 'Other');
    r.secrets = [m.secret, other.secret];
    r.answer = () => 410;
    const [early] = await h.emit(m.id);
    expect((await settled(early!))!.status).toBe('failed');
    await new Promise((res) => setTimeout(res, 20));
    const cut = new Date().toISOString();
    const late = await h.emit(m.id, 2);
    const [otherId] = await h.emit(other.id);
    for (const id of [...late, otherId!]) expect((await settled(id))!.status).toBe('failed');

    const listed = await cli('failed', '--merchant', m.id);
    expect(listed.map((x: any) => x.event_id).sort()).toEqual([early!, ...late].sort());
    expect(listed[0]).toMatchObject({ merchant_id: m.id, status: 'failed', attempts: 1, last_status_code: 410, last_error: 'http_410' });
    expect((await cli('failed', '--since', cut)).map((x: any) => x.event_id).sort()).toEqual([...late, otherId!].sort());
    expect(await cli('failed', '--since', '2999-01-01T00:00:00Z')).toEqual([]);

    r.answer = () => 200;
    const one = await cli('resend', early!);
    expect(one).toEqual({ event_id: early, result: 'resent', generation: 1, job_id: `${early}-r1` });
    expect(await settled(early!)).toEqual({ status: 'delivered', generation: 1, attempts: 2 });
    const seen = r.forEvent(early!);
    expect(seen.map((s) => s.answeredWith)).toEqual([410, 200]);
    expect(seen[0]!.body).toBe(seen[1]!.body);

    const all = await cli('resend-failed', '--since', cut, '--merchant', m.id);
    expect(all.resent).toBe(2);
    expect(all.events.map((e: any) => e.event_id).sort()).toEqual([...late].sort());
    for (const id of late) expect((await settled(id))!.status).toBe('delivered');
    expect((await status(otherId!))!.status).toBe('failed');
    expect((await cli('failed')).map((x: any) => x.event_id)).toEqual([otherId]);

    await expect(cli('resend', 'evt_1')).rejects.toThrow(/no event evt_1/);
    await expect(cli('resend-failed')).rejects.toThrow(UsageError);
  });

  it('sets a URL under the live rules, and resends events skipped while the merchant had none', async () => {
    const m = await h.merchant(null);
    r.secrets = [m.secret];
    r.answer = () => 200;
    const ids = await h.emit(m.id, 3);
    for (const id of ids) expect((await settled(id))!.status).toBe('skipped');
    expect((await cli('failed', '--merchant', m.id)).length).toBe(0);
    expect((await cli('failed', '--merchant', m.id, '--include-skipped')).length).toBe(3);

    // Live rules at configuration time.
    await expect(cli('set-url', '--merchant', m.id, '--url', r.url)).rejects.toThrow(/live mode requires https/);
    await expect(cli('set-url', '--merchant', m.id, '--url', 'https://127.0.0.1/hooks')).rejects.toThrow(
      /non-public address \(127\.0\.0\.1\)/,
    );
    await expect(cli('set-url', '--merchant', m.id, '--url', 'https://internal.example.com/hooks')).rejects.toThrow(
      /non-public address \(10\.0\.0\.1\)/,
    );
    await expect(cli('set-url', '--merchant', m.id, '--url', 'https://mixed.example.com/hooks')).rejects.toThrow(/192\.168\.1\.10/);
    await expect(cli('set-url', '--merchant', m.id, '--url', 'https://nowhere.example.com/')).rejects.toThrow(/does not resolve/);
    expect(await cli('set-url', '--merchant', m.id, '--url', 'https://hooks.example.com/h')).toEqual({
      merchant_id: m.id,
      webhook_url: 'https://hooks.example.com/h',
      live_deliverable: true,
    });
    // A loopback http URL is accepted only for test-mode events, and says so.
    const testOnly = await cli('set-url', '--merchant', m.id, '--url', r.url, '--test-only');
    expect(testOnly).toMatchObject({ webhook_url: r.url, live_deliverable: false, live_refusal: 'live mode requires https' });
    // --test-only checks no DNS: a host that does not resolve is accepted for test events, refused without the flag.
    await expect(cli('set-url', '--merchant', m.id, '--url', 'https://no-such-host.invalid/hooks')).rejects.toThrow(/does not resolve/);
    expect(await cli('set-url', '--merchant', m.id, '--url', 'https://no-such-host.invalid/hooks', '--test-only')).toEqual({
      merchant_id: m.id,
      webhook_url: 'https://no-such-host.invalid/hooks',
      live_deliverable: false,
      live_refusal: 'not checked: --test-only does not resolve the host',
    });
    await expect(cli('set-url', '--merchant', m.id, '--url', 'ftp://no-such-host.invalid/hooks', '--test-only')).rejects.toThrow(/scheme/);
    await cli('set-url', '--merchant', m.id, '--url', r.url, '--test-only');

    const resent = await cli('resend-failed', '--since', '2000-01-01T00:00:00Z', '--merchant', m.id, '--include-skipped');
    expect(resent.resent).toBe(3);
    for (const id of ids) expect((await settled(id))!.status).toBe('delivered');
    for (const id of ids) expect(r.forEvent(id)).toHaveLength(1);

    expect(await cli('set-url', '--merchant', m.id, '--clear')).toEqual({ merchant_id: m.id, webhook_url: null });
    const [after] = await h.emit(m.id);
    expect((await settled(after!))!.status).toBe('skipped');
  });

  it('rotates a secret: the new secret is printed once and both sign during the overlap', async () => {
    const m = await h.merchant(r.url);
    const out = await cli('rotate-secret', '--merchant', m.id, '--overlap-hours', '2');
    expect(out.merchant_id).toBe(m.id);
    expect(out.webhook_secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    expect(out.webhook_secret).not.toBe(m.secret);
    expect(new Date(out.previous_secret_valid_until).getTime()).toBeGreaterThan(Date.now() + 7000_000);
    r.secrets = [out.webhook_secret];
    r.answer = () => 200;
    const [a] = await h.emit(m.id);
    await settled(a!);
    // The merchant's receiver still on the old secret verifies through X-Service-Signature-Previous.
    r.secrets = [m.secret];
    r.acceptPrevious = true;
    const [b] = await h.emit(m.id);
    await settled(b!);
    r.acceptPrevious = false;
    expect(r.forEvent(a!)[0]!).toMatchObject({ problems: [], matchedHeader: 'x-service-signature' });
    expect(r.forEvent(b!)[0]!).toMatchObject({ problems: [], matchedHeader: 'x-service-signature-previous' });
    await expect(cli('rotate-secret', '--merchant', 'mch_nope')).rejects.toThrow(/no merchant/);
    await expect(cli('rotate-secret', '--merchant', m.id, '--overlap-hours', '-1')).rejects.toThrow(UsageError);
  });
});
