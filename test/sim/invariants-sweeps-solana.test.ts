import { randomBytes } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import { solanaSweepSetup } from '../support/sweep-setup.js';
import { solanaSimContext } from '../support/sim-invariant-harness.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base58Encode } from '../../chains/solana/base58.js';
import type { InvariantContext } from '../../scripts/sim/contract.js';
import { listSweeps } from '../../src/ledger/treasury/sweeps.js';
import { setTreasuryDestination } from '../../src/ledger/treasury/destinations.js';
import type { FakeTicker } from '../support/fake-ticker.js';
import { startSolanaServiceHarness, type SolanaServiceHarness } from '../support/solana-service-harness.js';
import { sweepRunCli } from '../support/sweep-cli.js';
import { expectSweepStepJudged } from '../support/sweep-step-judging.js';

// The simulator's outbound invariant on Solana sweep steps (scripts/sim/invariants/outbound-once.ts): a real sweep
// batch (the gas station pays the fee, two deposits move; their token accounts close in the next step) is judged by its signature
// having landed without error at `finalized`, and reported with its subject when the records are corrupted.

let h: SolanaServiceHarness;
let ticker: FakeTicker;

const context = (db: InvariantContext['db']): InvariantContext =>
  solanaSimContext(db, { rpcUrl: h.rpc.url, mints: h.mints, redisPrefix: h.env.REDIS_KEY_PREFIX! });

beforeAll(async () => {
  h = await startSolanaServiceHarness({ extraEnv: { ROLES: 'api,watcher' } });
  ({ ticker } = await solanaSweepSetup(h, { token: 'USDC' }));
}, 180_000);
afterAll(async () => {
  await ticker?.close();
  await h?.close();
});

describe('sweep steps on Solana (simulator outbound invariant)', () => {
  it('a batch step: holds on the real sweep, each corruption reported', async () => {
    const shop = await h.newMerchant('Sim sweep solana');
    const treasury = Keypair.generate().publicKey.toBase58();
    await setTreasuryDestination(h.t.db, {
      merchantId: shop.id,
      network: 'solana',
      mode: 'test',
      treasuryAddress: treasury,
      actor: 'test',
    });
    const paid = [];
    for (const amount of ['5.00', '7.00']) {
      const s = await h.paidSession(shop, { amount, token: 'USDC' });
      await h.until(async () => {
        const rows = await h.t.db.selectFrom('deposits').select('status').where('session_id', '=', s.id).execute();
        return rows.length > 0 && rows.every((r) => r.status === 'confirmed') ? true : undefined;
      }, 60_000);
      paid.push(s);
    }
    const sweep = await h.until(async () => {
      const r = await sweepRunCli(h.env, ticker.url, shop.id);
      expect(r.signal, r.err).toBeNull();
      const [x] = await listSweeps(h.t.db, { merchantId: shop.id, limit: 1 });
      return x?.status === 'completed' && x.sources.every((src) => src.state === 'swept') && x.sources.length === 2 ? x : undefined;
    }, 120_000);
    expect(sweep.method).toBe('solana-fee-payer');
    expect(sweep.steps.map((x) => [x.purpose, x.status])).toEqual([
      ['batch', 'succeeded'],
      ['close', 'succeeded'],
    ]);
    await expectSweepStepJudged(h.t.db, context, {
      sweepId: sweep.id,
      stepId: sweep.steps[0]!.id,
      // Another transaction that landed without error: a payer's payment.
      landedElsewhere: paid[0]!.paymentTx,
      unknownHash: base58Encode(randomBytes(64)),
    });
  }, 240_000);
});
