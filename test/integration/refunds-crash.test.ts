import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundMiner, transfersFrom } from '../support/chain-watch.js';
import { fund } from '../support/evm-tokens/scenario.js';
import { paidRefund } from '../support/paid-refund.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';

// Crash injection: the payout worker runs as a real child process (src/main.ts, role `worker`) that SIGKILLs itself
// at one step of a payout (SP_FAILPOINTS); a second worker process then takes over. Whatever the step, exactly one
// transfer reaches the chain and the refund ends completed.
let h: ServiceHarness;
let shop: HarnessMerchant;
let miner: { stop(): void };

beforeAll(async () => {
  // In-process: API and watcher only. Refunds are paid by the child workers.
  h = await startServiceHarness({ extraEnv: { ROLES: 'api,watcher', PAYOUT_LOCK_MS: '1500', PAYOUT_SWEEP_INTERVAL_MS: '1000' } });
  shop = await h.newMerchant('Crashy');
  await h.node.rpc('anvil_setBalance', [shop.hotWallet, '0x8ac7230489e80000']);
  await fund(h.tokens.USDT, shop.hotWallet, 1_000_000_000n);
  miner = backgroundMiner(h.node, 150);
});
afterAll(async () => {
  miner?.stop();
  await h?.close();
});

function runWorker(failpoint?: string): { exited: Promise<{ code: number | null; signal: string | null }>; kill(): void } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, ...h.env, ROLES: 'worker', LOG_LEVEL: 'silent', SP_FAILPOINTS: failpoint ?? '' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return {
    exited: new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal }))),
    kill: () => child.kill('SIGTERM'),
  };
}

describe.each(['outbound:after_sign', 'outbound:after_broadcast', 'outbound:after_receipt'])('a worker killed at %s', (failpoint) => {
  it('leaves exactly one transfer on chain and the refund completed', async () => {
    const s = await h.paidSession(shop, { amount: '4.00' });
    const created = await shop.client.post('/api/v1/refunds/create', {
      session_id: s.id,
      refund_id: `crash-${failpoint}`,
      amount: 400,
      currency: 'USDT',
    });
    expect(created.status).toBe(201);

    const doomed = runWorker(failpoint);
    const death = await doomed.exited;
    expect(death.signal).toBe('SIGKILL');
    const mid = await h.t.db
      .selectFrom('refunds')
      .select(['status', 'signed_at'])
      .where('id', '=', created.json.id)
      .executeTakeFirstOrThrow();
    expect(mid.status).toBe('processing');
    expect(mid.signed_at).not.toBeNull();
    const attemptsAtDeath = await h.t.db
      .selectFrom('payout_attempts')
      .select(['state', 'tx_hash'])
      .where('refund_id', '=', created.json.id)
      .execute();
    expect(attemptsAtDeath).toHaveLength(1);
    if (failpoint === 'outbound:after_sign') {
      expect(attemptsAtDeath[0]!.state).toBe('signed');
      expect(await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, s.payer)).toEqual([]); // never broadcast
    }

    const survivor = runWorker();
    try {
      const done = await h.until(async () => {
        const r = await shop.client.get(`/api/v1/refunds/${created.json.refund_id}`);
        return r.json.status === 'completed' || r.json.status === 'failed' ? r.json : undefined;
      }, 150_000);
      expect(done.status).toBe('completed');
      const moved = await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, s.payer);
      expect(moved).toEqual([{ to: s.payer, amount: 4_000_000n, tx: done.transaction_hash }]);
      // The same signed bytes were used: never re-signed.
      expect(done.transaction_hash).toBe(attemptsAtDeath[0]!.tx_hash);
      const events = await h.t.db.selectFrom('outbox_events').select('type').where('aggregate_id', '=', created.json.id).execute();
      expect(events.map((e) => e.type)).toEqual(['refund.succeeded']);
    } finally {
      survivor.kill();
      await survivor.exited;
    }
    // Two worker processes start from TypeScript sources (tsx): on a loaded machine that alone takes tens of seconds.
  }, 240_000);
});

/** A paid session of `cents` (integer minor units) refunded in full through the API, and the engine's settings for driving its payout in this process. */
async function refundToDrive(refundId: string, cents: number) {
  const { advanceRefund } = await import('../../src/refunds/payout-engine.js');
  const { signer } = await import('../support/evm-tokens/scenario.js');
  const digits = String(cents).padStart(3, '0');
  const { id, payer } = await paidRefund(h, shop, refundId, `${digits.slice(0, -2)}.${digits.slice(-2)}`, cents);
  const deps = { db: h.t.db, adapters: h.service.adapters, signer, stuckAfterMs: 600_000, feeBumpPercent: 25, pollMs: 100 };
  const advance = () => advanceRefund(deps, id);
  /** Advances until the refund settles; answers its final status. */
  const settle = () =>
    h.until(async () => {
      const step = await advance();
      return step.kind === 'done' ? step.status : undefined;
    });
  const attemptStates = async () =>
    (await h.t.db.selectFrom('payout_attempts').select('state').where('refund_id', '=', id).orderBy('id').execute()).map((a) => a.state);
  return { id, payer, advance, settle, attemptStates };
}

describe('two runs of one payout at once (a duplicated job)', () => {
  it('sign one attempt between them and pay once', async () => {
    const r = await refundToDrive('twin-runs', 300);
    await Promise.all([r.advance(), r.advance(), r.advance()]);
    expect(await r.settle()).toBe('completed');
    expect(await r.attemptStates()).toHaveLength(1);
    expect(await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, r.payer)).toHaveLength(1);
  });
});

describe('a run that signed nothing, after a duplicate run signed and sent the payout', () => {
  it('does not fail the refund in pre-flight (the hot wallet already paid it): the payout is followed and completes', async () => {
    const { failRefund } = await import('../../src/ledger/refunds/refund-payouts.js');
    const r = await refundToDrive('late-preflight', 200);
    // The first run signs and broadcasts.
    expect((await r.advance()).kind).toBe('wait');
    expect(await r.attemptStates()).toEqual(['broadcast']);
    // A second run that looked before the first signed finds the tokens gone in its pre-flight and would fail it:
    // refused, nothing written, the attempt still live.
    expect(
      await failRefund(h.t.db, r.id, 'insufficient_token_balance', 'seen after the payout left', undefined, { unsent: true }),
    ).toBeUndefined();
    const mid = await h.t.db.selectFrom('refunds').select(['status']).where('id', '=', r.id).executeTakeFirstOrThrow();
    expect(mid.status).toBe('processing');
    expect(await r.attemptStates()).toEqual(['broadcast']);
    expect(await r.settle()).toBe('completed');
    expect(await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, r.payer)).toHaveLength(1);
  });
});
