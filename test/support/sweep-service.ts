import { OPERATOR_SLOT, isSweeper } from '../../chains/types.js';
import { setSweepPolicy, setTreasuryDestination } from '../../src/ledger/treasury/destinations.js';
import { createNativePriceService } from '../../src/rates/native-prices.js';
import type { PlannerDeps } from '../../src/treasury/planner.js';
import type { SweepEngineDeps } from '../../src/treasury/step-kind.js';
import { signer } from './evm-tokens/scenario.js';
import type { FakeTicker } from './fake-ticker.js';
import type { HarnessMerchant, ServiceHarness } from './service-harness.js';

// The treasury's planner and engine over a service harness (Anvil as Ethereum, test mode), fees priced by the fake
// ticker (ETH in USDT/USDC), and small helpers to read what a sweep did.

export function sweepDeps(h: ServiceHarness, ticker: FakeTicker): { planner: PlannerDeps; engine: SweepEngineDeps } {
  const prices = createNativePriceService({ sources: ['coinbase'], coinbaseBaseUrl: ticker.url, timeoutMs: 2000, cacheTtlMs: 0 });
  return {
    planner: { db: h.t.db, adapters: h.service.adapters, keys: signer, prices },
    engine: { db: h.t.db, adapters: h.service.adapters, signer, pollMs: 50, stuckAfterMs: 120_000, feeBumpPercent: 25 },
  };
}

export const ETH_PRICES = { ETH: { USDT: '3000', USDC: '3000' } };

export async function gasStation(h: ServiceHarness): Promise<string> {
  const adapter = h.service.adapters.get('ethereum', 'test')!;
  if (!isSweeper(adapter)) throw new Error('the EVM adapter is not a Sweeper');
  return (await adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.gasStation)).address;
}

export async function depositAddressOf(h: ServiceHarness, sessionId: string): Promise<string> {
  const row = await h.t.db.selectFrom('payment_sessions').select('deposit_address').where('id', '=', sessionId).executeTakeFirstOrThrow();
  return row.deposit_address!;
}

/** Waits until every deposit of the session is confirmed (final): only those are swept. */
export async function confirmedDeposits(h: ServiceHarness, sessionId: string): Promise<void> {
  await h.until(async () => {
    const rows = await h.t.db.selectFrom('deposits').select('status').where('session_id', '=', sessionId).execute();
    return rows.length > 0 && rows.every((r) => r.status === 'confirmed') ? true : undefined;
  }, 60_000);
}

export async function tokenBalance(h: ServiceHarness, token: 'USDT' | 'USDC', owner: string): Promise<bigint> {
  return BigInt(await (h.tokens[token].contract.getFunction('balanceOf') as (a: string) => Promise<bigint>)(owner));
}

export async function permissivePolicy(h: ServiceHarness, token: 'USDT' | 'USDC' = 'USDT'): Promise<void> {
  await setSweepPolicy(h.t.db, { network: 'ethereum', mode: 'test', token, minAmountBase: 1_000_000n, maxFeeBps: 5000, actor: 'test' });
}

export async function treasuryFor(h: ServiceHarness, m: HarnessMerchant, address: string | null, hotFloatMinor?: bigint): Promise<void> {
  await setTreasuryDestination(h.t.db, {
    merchantId: m.id,
    network: 'ethereum',
    mode: 'test',
    treasuryAddress: address,
    ...(hotFloatMinor !== undefined ? { hotFloatMinor } : {}),
    actor: 'test',
  });
}
