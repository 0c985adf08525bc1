import type { ChainRegistry } from '../../chains/chain-registry.js';
import { HOT_WALLET_SLOT, OPERATOR_ACCOUNT, OPERATOR_SLOT, isSweeper, type KeyDeriver, type KeyPath } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { merchantAccountIndex } from '../ledger/merchants/merchants.js';
import { currentGasStationSlot } from '../ledger/treasury/gas-station.js';
import { sweepFacts } from '../ledger/treasury/sweep-facts.js';
import type { SweepSourceRow } from '../ledger/treasury/sweeps.js';
import { verifiedDepositKey } from './deposit-key.js';
import type { AuditContext, SignedPreimage } from './justified.js';
import type { JustifiedSweepStep, SweepStepContext } from './sweep-step-context.js';
import { justifyEvmSweepStep } from './justify-sweep-evm.js';
import { justifySolanaSweepStep } from './justify-sweep-solana.js';
import { justifyTronSweepStep } from './justify-sweep-tron.js';
import { refuse } from './refusal.js';

// Justification of a sweep step (docs/signer.md, "Sweep steps"), the part every chain family shares: the signer reads
// the sweep and the step by the intent's ids, refuses a sweep that is not running or a step already settled, derives
// the wallets money may move between (the merchant's refunds hot wallet and recorded treasury, the operator's gas
// station and resources account, the sweep's deposit addresses whose keys it derives again from the seed), and hands
// them with the signed bytes to the family's justification (justify-sweep-evm.ts, -tron.ts, -solana.ts). The sweep's
// `request` JSON and the step JSON are never taken for where money goes: a worker that writes the database wrote them.

/** Step states in which the outbound engine signs: claimed (pending → processing), or in flight (a replacement). */
const SIGNABLE_STEP = new Set(['pending', 'processing']);

export async function justifySweepStep(
  o: { db: Db; adapters: ChainRegistry; keys: KeyDeriver; recentHours: number; now: Date },
  intent: { sweep_id: string; step_id: string },
  key: KeyPath,
  preimage: SignedPreimage,
  seen: AuditContext,
): Promise<JustifiedSweepStep> {
  const facts = await sweepFacts(o.db, intent.sweep_id, intent.step_id);
  if (!facts) refuse('unknown_object', `no sweep ${intent.sweep_id}`);
  const { sweep, step } = facts;
  seen.merchantId = sweep.merchant_id;
  seen.network = sweep.network;
  seen.mode = sweep.mode;
  if (!step) refuse('unknown_object', `sweep ${intent.sweep_id} has no step ${intent.step_id}`);
  if (sweep.status !== 'running') refuse('not_payable', `sweep ${sweep.id} is ${sweep.status}`);
  if (!SIGNABLE_STEP.has(step.status)) refuse('not_payable', `sweep step ${step.id} is ${step.status}`);
  const adapter = o.adapters.get(sweep.network, sweep.mode);
  if (!adapter || !isSweeper(adapter))
    refuse('purpose_not_supported', `sweeps on ${sweep.network} (${sweep.mode}) are not configured on this signer`);
  const token = o.adapters.token(sweep.network, sweep.mode, sweep.token);
  if (!token) refuse('wrong_contract', `${sweep.token} is not configured on ${sweep.network} (${sweep.mode})`);
  const account = await merchantAccountIndex(o.db, sweep.merchant_id, sweep.mode);
  // Account 0 is the operator's (gas station, resources): no merchant's deposits or hot wallets derive from it.
  if (account === OPERATOR_ACCOUNT) refuse('wrong_key', `merchant ${sweep.merchant_id} names the operator's HD account`);
  const canon = (a: string) => adapter.normalizeAddress(a);
  const hotWallet = await adapter.deriveHotWallet(o.keys, account, HOT_WALLET_SLOT.refunds);
  const treasury = facts.treasury.address === null ? null : canon(facts.treasury.address);
  const destinations = [canon(hotWallet.address)!, ...(treasury ? [treasury] : [])];
  const verified = new Map<string, KeyPath | null>();
  const keyOf = async (s: SweepSourceRow): Promise<KeyPath | null> => {
    if (!verified.has(s.address)) verified.set(s.address, await verifiedDepositKey(adapter, o.keys, account, s));
    return verified.get(s.address)!;
  };
  const ctx: SweepStepContext = {
    sweep,
    step,
    sources: facts.sources,
    adapter,
    adapters: o.adapters,
    keys: o.keys,
    token,
    account,
    hotWallet,
    treasury,
    destinations,
    // The ledger's current gas-station generation (docs/treasury.md, "Rotating the gas station"), as the planner reads it.
    gasStation: await adapter.deriveOperatorWallet(o.keys, (await currentGasStationSlot(o.db, sweep.network, sweep.mode)).slot),
    resources: await adapter.deriveOperatorWallet(o.keys, OPERATOR_SLOT.resources),
    async sourceByKey(k) {
      for (const s of facts.sources) {
        const v = (s.key as { path?: unknown }).path === k.path ? await keyOf(s) : null;
        if (v && v.curve === k.curve && v.path === k.path) return s;
      }
      return null;
    },
    async sourceByAddress(address) {
      const s = facts.sources.find((x) => canon(x.address) === address);
      return s && (await keyOf(s)) ? s : null;
    },
    key,
    preimage,
    seen,
  };
  const justified =
    adapter.family === 'evm'
      ? await justifyEvmSweepStep(ctx)
      : adapter.family === 'tron'
        ? await justifyTronSweepStep(ctx)
        : await justifySolanaSweepStep(ctx);
  if (justified.amount === 0n) return { ...justified, limited: false };
  // Tokens leave deposit addresses: only to an allowed destination (each family checks it; checked again here).
  const to = canon(justified.summary.to);
  if (to === null || !destinations.includes(to)) refuse('wrong_recipient', `the step sends tokens to ${justified.summary.to}`);
  const recent = facts.treasury.changedAt === null || o.now.getTime() - facts.treasury.changedAt.getTime() < o.recentHours * 3_600_000;
  return { ...justified, limited: to !== destinations[0] && recent };
}
